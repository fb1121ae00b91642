// `atrium serve`: run until SIGTERM/SIGINT, then drain and exit. Start-up ends with what a person
// needs next (the console's address, the database, the mail mode with the development mailbox's
// link, how sign-in works, which webhook targets are allowed, and on an empty database the
// one-time setup link): a banner on a terminal, log lines for log collectors.
import { resolve } from 'node:path';
import { describeConfig, type Config } from '../config.ts';
import { startService } from '../main.ts';
import { setupLink } from '../modules/setup/service.ts';
import { devMailboxLink } from '../modules/oauth/service.ts';
import { prettyLogs } from '../platform/logging.ts';

function describeDatabase(config: Config): string {
  if (!config.databaseUrl) return `embedded PGlite in ${resolve(config.dataDir)}`;
  const url = new URL(config.databaseUrl);
  return `PostgreSQL at ${url.host}${url.pathname}`;
}

function describeMail(config: Config): string {
  if (config.mail.transport === 'smtp') return `SMTP via ${new URL(config.mail.smtpUrl!).host}`;
  if (config.mail.transport === 'outbox') return `development mailbox at ${devMailboxLink(config)} (this machine only, with this key)`;
  return 'none (no SMTP server, no development mailbox)';
}

function describeSignin(config: Config): string {
  const { passwordLogin, emailLogin, upstream } = config.signin;
  const ways = [
    ...(passwordLogin ? ['password'] : []),
    ...(emailLogin ? ['sign-up, codes and resets by mail'] : []),
    ...upstream.map((p) => p.label),
  ];
  return ways.length > 0 ? ways.join(', ') : 'none (ATRIUM_PASSWORD_LOGIN=false and no ATRIUM_OIDC_PROVIDERS): nobody can sign in';
}

function describeWebhooks(config: Config): string {
  const allowed = config.webhooks.allowPrivate;
  if (allowed === true) return 'any target, private addresses included (ATRIUM_WEBHOOKS_ALLOW_PRIVATE=true)';
  const why = config.exposed ? 'this server faces the network' : 'the default with DATABASE_URL';
  if (allowed === false) return `public targets only: private addresses refused (${why}; ATRIUM_WEBHOOKS_ALLOW_PRIVATE names your own receivers)`;
  return `public targets and ${allowed.join(', ')} (ATRIUM_WEBHOOKS_ALLOW_PRIVATE)`;
}

interface Facts {
  url: string;
  console: string;
  database: string;
  mail: string;
  signin: string;
  webhooks: string;
  setup: string | undefined;
}

function banner(facts: Facts): string {
  const lines = [
    '',
    '  Atrium is running',
    '',
    `  URL        ${facts.url}`,
    '             (ATRIUM_PUBLIC_URL, the OAuth issuer: use exactly this URL in the CLI, apps and',
    '             OAuth clients; another name for this machine fails at sign-in)',
    `  Console    ${facts.console}`,
    `  Database   ${facts.database}`,
    `  Mail       ${facts.mail}`,
    `  Sign-in    ${facts.signin}`,
    `  Webhooks   ${facts.webhooks}`,
    '',
  ];
  if (facts.setup) {
    lines.push(
      '  No account yet. Open this one-time link to create the first admin and project:',
      '',
      `    ${facts.setup}`,
      '',
      '  (or, for scripts: npx atrium bootstrap --email … --password … --project …)',
      '',
    );
  }
  return `${lines.join('\n')}\n`;
}

export async function serve(config: Config): Promise<number> {
  const service = await startService(config);
  const { ctx } = service;
  ctx.log.debug({ settings: describeConfig(config) }, 'effective settings');
  const facts: Facts = {
    url: config.publicUrl,
    console: `${config.publicUrl}/console`,
    database: describeDatabase(config),
    mail: describeMail(config),
    signin: describeSignin(config),
    webhooks: describeWebhooks(config),
    setup: await setupLink(ctx),
  };
  if (prettyLogs(config)) {
    process.stdout.write(banner(facts));
  } else {
    const { setup: _setup, url, ...rest } = facts;
    ctx.log.info({ url, ...rest }, `Atrium is listening: use ${config.publicUrl} (ATRIUM_PUBLIC_URL) as its URL everywhere`);
    if (facts.setup) ctx.log.info({ setup: facts.setup }, `No account yet: open ${facts.setup} to create the first admin and project (or run atrium bootstrap)`);
  }
  return new Promise((resolveExit) => {
    // Ctrl-C under `npm start` arrives twice: from the terminal (to the whole process group) and
    // forwarded by npm. The handlers stay installed and a repeat is ignored: with `once`, the second
    // signal would kill the process halfway through its shutdown.
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      ctx.log.info({ signal }, 'shutting down');
      service.close().then(() => resolveExit(0), (error: unknown) => {
        ctx.log.error({ err: error }, 'shutdown failed');
        resolveExit(1);
      });
    };
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.on('SIGINT', () => shutdown('SIGINT'));
  });
}

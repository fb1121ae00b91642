// Every deployment the README documents, from its first run to a signed-in admin, with the defaults
// it starts with (README "Deployments at a glance", docs/operations.md): whether the development
// mailbox answers, whether webhooks may target private addresses, which sign-in methods the sign-in
// page offers. Each starts on an empty database, in this process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { pgUrl, strict } from '../support/env.ts';
import { firstRunToAdmin, mailboxStatus, registerWebhook, signinMethods, type Admin } from '../support/first-run.ts';
import { FormBrowser, authorizationRequest, discover } from '../support/oauth.ts';
import { roundRobin, type RoundRobin } from '../support/proxy.ts';
import { forEachEngine, freePort, startTestService, type Engine, type TestService } from '../support/service.ts';
import { ATRIUM_CONSOLE_CLIENT_ID } from '../../src/modules/oauth/first-party.ts';

/** Addresses no tenant's webhook may reach on a server others can reach. */
const PRIVATE_TARGETS = ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/hook', 'http://0.0.0.0:9/hook', 'http://10.0.0.1/hook'];

/** Clears what every test service sets for the suite's convenience, so that the deployment's own defaults apply. */
const AS_DEPLOYED = { ATRIUM_TOKEN_LIMIT_PER_IP: '', ATRIUM_DEVICE_LIMIT_PER_IP: '', ATRIUM_MAIL_DOMAINS: '' };

/** A local SMTP server that keeps what it receives; `next(to)` resolves with the next message to that address. */
async function smtpSink(): Promise<{ url: string; next(to: string): Promise<string>; close(): Promise<void> }> {
  const waiting = new Map<string, (raw: string) => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        for (const { address } of session.envelope.rcptTo as { address: string }[]) waiting.get(address)?.(Buffer.concat(chunks).toString('utf8'));
        callback();
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${port}`,
    next: (to) => new Promise((resolve) => waiting.set(to, resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function assertPrivateTargets(base: string, admin: Admin, allowed: boolean): Promise<void> {
  for (const url of PRIVATE_TARGETS) {
    const answer = await registerWebhook(base, admin, url);
    if (allowed) assert.equal(answer.status, 201, url);
    else assert.deepEqual(answer, { status: 400, code: 'invalid_url' }, url);
  }
  assert.equal((await registerWebhook(base, admin, 'https://hooks.example.com/atrium')).status, 201, 'a public target is always fine');
}

describe('deployment: the quick start (npm start) [pglite]', () => {
  let service: TestService;
  let admin: Admin;
  before(async () => {
    service = await startTestService('pglite', AS_DEPLOYED);
    admin = await firstRunToAdmin(service, service.url, 'quick-start');
  });
  after(() => service?.stop());

  test('serves this machine only, keeps mail in the development mailbox (with its key), delivers to local receivers, offers every email sign-in', async () => {
    assert.equal(service.ctx.config.exposed, false);
    assert.deepEqual(await mailboxStatus(service, service.url), { withKey: 200, withoutKey: 404 });
    await assertPrivateTargets(service.url, admin, true);
    assert.deepEqual(await signinMethods(service.url), { password: true, signUp: true, resets: true });
  });
});

forEachEngine('deployment: directly on the network (HOST=0.0.0.0) with SMTP', (engine: Engine) => {
  let service: TestService;
  let smtp: Awaited<ReturnType<typeof smtpSink>>;
  let admin: Admin;
  before(async () => {
    smtp = await smtpSink();
    service = await startTestService(engine, { ...AS_DEPLOYED, HOST: '0.0.0.0', ATRIUM_SMTP_URL: smtp.url });
    admin = await firstRunToAdmin(service, service.url, 'direct');
  });
  after(async () => {
    await service?.stop();
    await smtp?.close();
  });

  test('mail goes out over SMTP, there is no development mailbox, and sign-in by password works', async () => {
    assert.equal(service.ctx.config.exposed, true);
    assert.deepEqual(await mailboxStatus(service, service.url), { withKey: 404, withoutKey: 404 });
    const methods = await signinMethods(service.url);
    // Email sign-up and resets follow the database's default (on with the embedded one); the password never needs mail.
    assert.deepEqual(methods, { password: true, signUp: engine === 'pglite', resets: engine === 'pglite' });
    if (methods.resets) {
      const config = await discover(service, { clientId: ATRIUM_CONSOLE_CLIENT_ID, clientSecret: '' });
      const browser = new FormBrowser(service.url);
      const login = await browser.go('GET', (await authorizationRequest(config, `${service.url}/console/callback`, 'openid')).url);
      const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;
      const mail = smtp.next(admin.email);
      await browser.submit(await browser.go('GET', `/interaction/${uid}/forgot`), '/forgot', { email: admin.email });
      assert.match(await mail, /Reset your password/, 'the reset link went to the SMTP server');
    }
  });

  test('private webhook targets are refused (anyone may sign up and register a webhook here)', async () => {
    await assertPrivateTargets(service.url, admin, false);
  });
});

forEachEngine('deployment: behind a reverse proxy on the same machine that adds no forwarding header', (engine: Engine) => {
  let proxy: RoundRobin;
  let service: TestService;
  let admin: Admin;
  before(async () => {
    // A default `proxy_pass`: every visitor reaches the server from 127.0.0.1, with no X-Forwarded-For.
    proxy = await roundRobin(() => [service.url], () => undefined);
    service = await startTestService(engine, { ...AS_DEPLOYED, ATRIUM_PUBLIC_URL: proxy.url, ATRIUM_TRUST_PROXY: '1' });
    admin = await firstRunToAdmin(service, proxy.url, 'proxied');
  });
  after(async () => {
    await service?.stop();
    await proxy?.close();
  });

  test('the development mailbox never answers a visitor through the proxy by address alone', async () => {
    assert.equal(service.ctx.config.exposed, true);
    const status = await mailboxStatus(service, proxy.url);
    assert.equal(status.withoutKey, 404, 'every visitor looks local, and still sees nothing');
    // The embedded default keeps mail in the mailbox: its key, printed at start-up, opens it.
    assert.equal(status.withKey, engine === 'pglite' ? 200 : 404);
  });

  test('private webhook targets are refused, and sign-in by password works through the proxy', async () => {
    await assertPrivateTargets(proxy.url, admin, false);
    assert.deepEqual(await signinMethods(proxy.url), { password: true, signUp: engine === 'pglite', resets: engine === 'pglite' });
  });
});

/** A suite of PostgreSQL alone: skipped without it, or failed in strict mode, as forEachEngine does. */
function onPostgres(name: string, body: () => void): void {
  if (pgUrl) describe(name, body);
  else if (strict) describe(name, () => { throw new Error('PostgreSQL not available in strict mode'); });
  else describe(name, { skip: 'PostgreSQL server not installed' }, () => {});
}

onPostgres('deployment: PostgreSQL with only DATABASE_URL [postgres]', () => {
  let service: TestService;
  let admin: Admin;
  before(async () => {
    service = await startTestService('postgres', AS_DEPLOYED);
    admin = await firstRunToAdmin(service, service.url, 'postgres');
  });
  after(() => service?.stop());

  test('the admin the setup page creates signs in with a password; nothing needs mail', async () => {
    assert.equal(service.ctx.config.mail.transport, 'none');
    assert.deepEqual(await signinMethods(service.url), { password: true, signUp: false, resets: false });
    assert.deepEqual(await mailboxStatus(service, service.url), { withKey: 404, withoutKey: 404 });
    assert.ok(admin.accessToken);
  });

  test('private webhook targets are refused until the operator names them', async () => {
    await assertPrivateTargets(service.url, admin, false);
  });
});

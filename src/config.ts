// Every setting of the service, read from the environment once at boot and validated against one
// schema, so a typo fails fast with the name of the bad variable instead of misbehaving later.
import { resolve } from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

const Bool = Type.Union([Type.Literal('true'), Type.Literal('false'), Type.Literal('1'), Type.Literal('0')]);

// Environment variable → description. The schema below validates the raw strings.
const EnvSchema = Type.Object({
  PORT: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$', description: 'TCP port to listen on (default 8000)' })),
  HOST: Type.Optional(Type.String({ minLength: 1, description: 'Interface to bind (default 0.0.0.0)' })),
  ATRIUM_PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$', description: 'Public base URL; the OAuth issuer' })),
  ATRIUM_DATA_DIR: Type.Optional(Type.String({ minLength: 1, description: 'Data directory (embedded database, blobs, keys)' })),
  ATRIUM_ROOMS_URL: Type.Optional(Type.String({ pattern: '^wss?://[^\\s]+$', description: 'Base WebSocket URL of rooms (default: the public URL with ws(s) and /rooms)' })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'PostgreSQL URL; embedded PGlite when unset' })),
  DATABASE_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: 'PostgreSQL connections per instance (default 20)' })),
  ATRIUM_SECRET_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/_=-]{43,44}$', description: 'base64 32-byte key encrypting stored secrets; generated in the data dir when unset' })),
  ATRIUM_MAX_UPLOAD_BYTES: Type.Optional(Type.String({ pattern: '^[0-9]{1,12}$', description: 'Largest project storage upload (default 100 MiB)' })),
  ATRIUM_AUTH_CACHE_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$', description: 'How long a verified credential is cached (default 5)' })),
  ATRIUM_LOG_LEVEL: Type.Optional(Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { description: 'Log level (default info)' })),
  ATRIUM_TRUST_PROXY: Type.Optional(Bool),
  ATRIUM_EMAIL_LOGIN: Type.Optional(Type.Union([Bool], { description: 'Offer sign-up and sign-in with email and password (confirmation, reset, one-time codes) on the sign-in pages (default true with the embedded database, false with DATABASE_URL)' })),
  ATRIUM_SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://[^\\s]+$', description: 'SMTP server for sign-in mail, e.g. smtps://user:pass@mail.example.com:465' })),
  ATRIUM_MAIL_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 200, description: 'From address of sign-in mail (default "Atrium <no-reply@<public host>>")' })),
  ATRIUM_DEV_MAILBOX: Type.Optional(Type.Union([Bool], { description: 'Without SMTP, keep mail in a development outbox shown at /dev/mail (default true with the embedded database, false with DATABASE_URL); never for production' })),
  ATRIUM_OIDC_PROVIDERS: Type.Optional(Type.String({ minLength: 2, maxLength: 20000, description: 'Upstream OpenID Connect providers offered on the sign-in page, as JSON: [{"id","issuer","client_id","client_secret","label"}]' })),
  ATRIUM_SIGNIN_LIMIT_PER_ACCOUNT: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$', description: 'Sign-in, code and reset attempts allowed per email address per 15 minutes (default 10)' })),
  ATRIUM_SIGNIN_LIMIT_PER_IP: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$', description: 'Sign-in, code and reset attempts allowed per client IP per 15 minutes (default 100)' })),
  ATRIUM_JOBS_POLL_MS: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$', description: 'Background jobs: how often idle workers look for due jobs they were not woken for, e.g. retries (default 1000)' })),
  ATRIUM_JOBS_BATCH_SIZE: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,3}$', description: 'Background jobs: most jobs claimed per query (default 100)' })),
  ATRIUM_JOBS_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}$', description: 'Background jobs: most jobs running at once per instance (default 200)' })),
  ATRIUM_JOBS_POOL_SIZE: Type.Optional(Type.String({ pattern: '^[1-9][0-9]?$', description: 'Background jobs: PostgreSQL connections of their own, apart from the request pool (default 4)' })),
  ATRIUM_JOBS_LEASE_SECONDS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}$', description: 'Background jobs: lease of a claimed job, renewed while it runs; a crashed instance\'s jobs run again after it (default 30)' })),
  ATRIUM_WEBHOOKS_ALLOW_PRIVATE: Type.Optional(Type.Union([Bool], { description: 'Allow webhook URLs on loopback, private and link-local addresses (default true with the embedded database, false with DATABASE_URL)' })),
  ATRIUM_WEBHOOKS_TIMEOUT_SECONDS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$', description: 'Webhook request timeout (default 15)' })),
  ATRIUM_WEBHOOKS_RETRY_SCHEDULE: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}(,[0-9]{1,6}){0,19}$', description: 'Seconds to wait before each webhook retry, comma-separated; ±20 % jitter is added (default 5,300,1800,7200,18000,36000,36000)' })),
  ATRIUM_WEBHOOKS_DISABLE_AFTER_HOURS: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,4}$', description: 'A webhook whose deliveries keep failing this long is disabled (default 120)' })),
});

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  roomsUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  secretKey: string | undefined;
  maxUploadBytes: number;
  authCacheMs: number;
  logLevel: string;
  trustProxy: boolean;
  /** End-user sign-in pages of the OAuth authorization server (src/oauth). */
  signin: SigninConfig;
  mail: MailConfig;
  jobs: { pollMs: number; batchSize: number; concurrency: number; leaseMs: number; poolSize: number };
  webhooks: { allowPrivate: boolean; timeoutMs: number; retrySchedule: number[]; disableAfterMs: number };
}

export class ConfigError extends Error {}

export interface UpstreamProvider {
  /** Short name used in URLs: /signin/upstream/<id>/callback is the redirect URI to register. */
  id: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  /** Button text: "Continue with <label>". */
  label: string;
  /** Scopes requested upstream (default "openid email profile"). */
  scope?: string | undefined;
}

export interface SigninConfig {
  emailLogin: boolean;
  upstream: UpstreamProvider[];
  limits: { perAccount: number; perIp: number; windowMs: number };
}

export interface MailConfig {
  /** 'smtp' when ATRIUM_SMTP_URL is set; 'outbox' keeps mail in the database for /dev/mail; 'none' cannot send. */
  transport: 'smtp' | 'outbox' | 'none';
  smtpUrl: string | undefined;
  from: string;
}

const UpstreamProviders = Type.Array(Type.Object({
  id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,31}$' }),
  issuer: Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 500 }),
  client_id: Type.String({ minLength: 1, maxLength: 500 }),
  client_secret: Type.String({ minLength: 1, maxLength: 500 }),
  label: Type.String({ minLength: 1, maxLength: 100 }),
  scope: Type.Optional(Type.String({ pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+( [\\x21\\x23-\\x5b\\x5d-\\x7e]+)*$', maxLength: 500 })),
}, { additionalProperties: false }), { maxItems: 20 });

const isTrue = (value: string | undefined) => value === 'true' || value === '1';

function signinAndMail(settings: Record<string, string | undefined>, publicUrl: string): Pick<Config, 'signin' | 'mail'> {
  // The embedded quick start works offline: email sign-in on, mail kept in the dev outbox.
  const embedded = settings.DATABASE_URL === undefined;
  const emailLogin = settings.ATRIUM_EMAIL_LOGIN === undefined ? embedded : isTrue(settings.ATRIUM_EMAIL_LOGIN);
  const devOutbox = settings.ATRIUM_DEV_MAILBOX === undefined ? embedded : isTrue(settings.ATRIUM_DEV_MAILBOX);
  const transport = settings.ATRIUM_SMTP_URL ? 'smtp' : devOutbox ? 'outbox' : 'none';
  if (emailLogin && transport === 'none') {
    throw new ConfigError('Invalid configuration: ATRIUM_EMAIL_LOGIN=true needs a way to send mail: set ATRIUM_SMTP_URL (or ATRIUM_DEV_MAILBOX=true for development)');
  }
  let upstream: UpstreamProvider[] = [];
  if (settings.ATRIUM_OIDC_PROVIDERS) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(settings.ATRIUM_OIDC_PROVIDERS);
    } catch {
      throw new ConfigError('Invalid configuration: ATRIUM_OIDC_PROVIDERS is not valid JSON');
    }
    const first = [...Value.Errors(UpstreamProviders, parsed)][0];
    if (first) throw new ConfigError(`Invalid configuration: ATRIUM_OIDC_PROVIDERS${first.instancePath.replaceAll('/', '.')} ${first.message}`);
    upstream = parsed as UpstreamProvider[];
    const ids = upstream.map((p) => p.id);
    if (new Set(ids).size !== ids.length) throw new ConfigError('Invalid configuration: ATRIUM_OIDC_PROVIDERS ids must be unique');
  }
  return {
    signin: {
      emailLogin,
      upstream,
      limits: {
        perAccount: Number(settings.ATRIUM_SIGNIN_LIMIT_PER_ACCOUNT ?? 10),
        perIp: Number(settings.ATRIUM_SIGNIN_LIMIT_PER_IP ?? 100),
        windowMs: 15 * 60_000,
      },
    },
    mail: {
      transport,
      smtpUrl: settings.ATRIUM_SMTP_URL,
      from: settings.ATRIUM_MAIL_FROM ?? `Atrium <no-reply@${new URL(publicUrl).hostname}>`,
    },
  };
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const errors = [...Value.Errors(EnvSchema, raw)];
  if (errors.length > 0) {
    const names = errors.map((e) => {
      const name = e.instancePath.replace(/^\//, '');
      const description = (EnvSchema.properties as Record<string, { description?: string }>)[name]?.description;
      return `${name}=${JSON.stringify(raw[name])} is invalid${description ? ` (${description})` : ''}`;
    });
    throw new ConfigError(`Invalid configuration: ${[...new Set(names)].join('; ')}`);
  }
  const settings = raw as Static<typeof EnvSchema>;
  const port = Number(settings.PORT ?? 8000);
  if (port > 65535) throw new ConfigError(`Invalid configuration: PORT=${port} is out of range`);
  const publicUrl = (settings.ATRIUM_PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  return {
    port,
    host: settings.HOST ?? '0.0.0.0',
    publicUrl,
    roomsUrl: (settings.ATRIUM_ROOMS_URL ?? `${publicUrl.replace(/^http/, 'ws')}/rooms`).replace(/\/+$/, ''),
    dataDir: resolve(settings.ATRIUM_DATA_DIR ?? './data'),
    databaseUrl: settings.DATABASE_URL,
    databasePoolSize: Number(settings.DATABASE_POOL_SIZE ?? 20),
    secretKey: settings.ATRIUM_SECRET_KEY,
    maxUploadBytes: Number(settings.ATRIUM_MAX_UPLOAD_BYTES ?? 100 * 1024 * 1024),
    authCacheMs: Number(settings.ATRIUM_AUTH_CACHE_SECONDS ?? 5) * 1000,
    logLevel: settings.ATRIUM_LOG_LEVEL ?? 'info',
    trustProxy: settings.ATRIUM_TRUST_PROXY === 'true' || settings.ATRIUM_TRUST_PROXY === '1',
    ...signinAndMail(settings, publicUrl),
    jobs: {
      pollMs: Number(settings.ATRIUM_JOBS_POLL_MS ?? 1000),
      batchSize: Number(settings.ATRIUM_JOBS_BATCH_SIZE ?? 100),
      concurrency: Number(settings.ATRIUM_JOBS_CONCURRENCY ?? 200),
      leaseMs: Number(settings.ATRIUM_JOBS_LEASE_SECONDS ?? 30) * 1000,
      poolSize: Number(settings.ATRIUM_JOBS_POOL_SIZE ?? 4),
    },
    webhooks: {
      // The embedded quick start delivers to receivers on the developer's own machine.
      allowPrivate: settings.ATRIUM_WEBHOOKS_ALLOW_PRIVATE === undefined
        ? settings.DATABASE_URL === undefined
        : settings.ATRIUM_WEBHOOKS_ALLOW_PRIVATE === 'true' || settings.ATRIUM_WEBHOOKS_ALLOW_PRIVATE === '1',
      timeoutMs: Number(settings.ATRIUM_WEBHOOKS_TIMEOUT_SECONDS ?? 15) * 1000,
      retrySchedule: (settings.ATRIUM_WEBHOOKS_RETRY_SCHEDULE ?? '5,300,1800,7200,18000,36000,36000').split(',').map((s) => Number(s) * 1000),
      disableAfterMs: Number(settings.ATRIUM_WEBHOOKS_DISABLE_AFTER_HOURS ?? 120) * 3600_000,
    },
  };
}

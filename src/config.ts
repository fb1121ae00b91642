// Every setting of the service, declared once: the table below gives each environment variable its
// kind, default, description and secrecy, in the shape of the `Config` the code reads. Parsing,
// the startup error, the redacted summary and the README's settings section (`npm run
// docs:settings`) all come from it, so adding a setting is adding an entry.
import { Type } from 'typebox';
import { isLoopback } from './platform/http/loopback.ts';
import { base64Key, base64Keys, boolean, directory, dnsNames, integer, integerList, json, oneOf, origins, port, privateTargets, proxyTrust, text, url } from './platform/settings/kinds.ts';
import { ConfigError } from './platform/config-error.ts';
import { describeSettings, readSettings, rule, secret, setting, type ValuesOf } from './platform/settings/table.ts';

export { ConfigError };

const SERVER = 'Server';
const DATA = 'Database, files and keys';
const SIGNIN = 'Sign-in and mail';
const JOBS = 'Background jobs';
const WEBHOOKS = 'Webhook delivery';
const RESOURCES = 'Project resources';
const ROOM_SERVERS = 'Room servers, sessions and scheduled tasks';
const FEEDS = 'Feeds';
const LLM = 'LLM proxy';
const BILLING = 'Billing and payments';

const SIGNIN_WINDOW_MINUTES = 15;
const embedded = (get: (env: string) => unknown) => get('DATABASE_URL') === undefined;
const BY_ENGINE = '`true` with the embedded database, `false` with `DATABASE_URL`';
/** Whether others can reach the server: it listens on the network, or proxies are in front of it. */
const facesNetwork = (host: string, trustProxy: unknown) => !isLoopback(host) || trustProxy !== false;

const API_KEY = text('an API key (no spaces, at most 1,000 characters)', /^\S+$/, 1000);

const UpstreamProviderSchema = Type.Object({
  id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,31}$', 'x-pattern-means': 'must be lower-case letters, digits and "-", at most 32' }),
  issuer: Type.String({ pattern: '^https?://[^\\s]+$', 'x-pattern-means': 'must be an http(s) URL', maxLength: 500 }),
  client_id: Type.String({ minLength: 1, maxLength: 500 }),
  client_secret: Type.String({ minLength: 1, maxLength: 500 }),
  label: Type.String({ minLength: 1, maxLength: 100 }),
  scope: Type.Optional(Type.String({ pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+( [\\x21\\x23-\\x5b\\x5d-\\x7e]+)*$', 'x-pattern-means': 'must be scopes separated by single spaces', maxLength: 500 })),
}, { additionalProperties: false });

export const SETTINGS = {
  port: setting({ env: 'PORT', group: SERVER, kind: port(), default: '8000', description: 'TCP port to listen on.' }),
  host: setting({
    env: 'HOST', group: SERVER, kind: text('an IP address or host name', /^[A-Za-z0-9._:%-]+$/, 253), default: '127.0.0.1',
    description: 'Address to listen on. The default serves this machine only; `0.0.0.0` (or `::`) serves the network, which the development mailbox does not allow: see [Exposing the server](#exposing-the-server).',
  }),
  publicUrl: setting({
    env: 'ATRIUM_PUBLIC_URL', group: SERVER, kind: url(['http', 'https']),
    default: rule('`http://localhost:<PORT>`', (get) => `http://localhost:${get('PORT')}`),
    description: 'Public base URL, an origin such as `https://atrium.example.com`: the OAuth issuer, and the base of links in mail. The same on every instance.',
  }),
  roomsUrl: setting({
    env: 'ATRIUM_ROOMS_URL', group: SERVER, kind: url(['ws', 'wss']),
    default: rule('the public URL with `ws(s)://` and `/rooms`', (get) => `${String(get('ATRIUM_PUBLIC_URL')).replace(/^http/, 'ws')}/rooms`),
    description: 'Base WebSocket URL of rooms, returned in room connection info.',
  }),
  corsOrigins: setting({
    env: 'ATRIUM_CORS_ORIGINS', group: SERVER, kind: origins(100), default: rule('unset: only the origins of OAuth clients', (): string[] => []),
    description: 'Browser origins allowed to call, with a user\'s token, every endpoint that accepts OAuth access tokens (token, userinfo, revocation, connect, profile…), in addition to each OAuth client\'s own origins (those of a public client\'s redirect URIs, and its `allowed_origins` metadata): see [docs/browser-apps.md](docs/browser-apps.md).',
  }),
  trustProxy: setting({
    env: 'ATRIUM_TRUST_PROXY', group: SERVER, kind: proxyTrust(), default: 'false',
    description: 'Which proxies to believe about the client address (`X-Forwarded-For`), for rate limits and logs: `false` none, a number N the nearest N hops (`1` behind one load balancer), or the proxies\' addresses and CIDR ranges (`10.0.0.0/8,192.168.1.7`); `true` believes every hop, which lets clients choose their own address behind a proxy that appends. Never the host name: every absolute URL (OpenID discovery, redirects, mail links) comes from `ATRIUM_PUBLIC_URL`, whatever `Host` or `X-Forwarded-Host` say.',
  }),
  logLevel: setting({ env: 'ATRIUM_LOG_LEVEL', group: SERVER, kind: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), default: 'info', description: 'Log level.' }),
  logFormat: setting({
    env: 'ATRIUM_LOG_FORMAT', group: SERVER, kind: oneOf(['auto', 'json', 'pretty']), default: 'auto',
    description: '`json`: one JSON object per line, for log collectors, with one `info` line per request (method, route, status, duration, request id; docs/operations.md#logs). `pretty`: for a person at a terminal, one coloured line per request and a start-up banner. `auto`: `pretty` when standard output is a terminal, `json` otherwise.',
  }),
  maxUploadBytes: setting({
    env: 'ATRIUM_MAX_UPLOAD_BYTES', group: SERVER, kind: integer(0, 999_999_999_999, { unit: 'bytes' }), default: '104857600',
    description: 'Largest project storage upload (413 beyond); the default is 100 MiB.',
  }),
  authCacheMs: setting({
    env: 'ATRIUM_AUTH_CACHE_SECONDS', group: SERVER, kind: integer(0, 9999, { unit: 'seconds', scale: 1000 }), default: '5',
    description: 'How long a verified credential is cached; bounds how long a revoked key or token keeps working on other instances.',
  }),

  dataDir: setting({
    env: 'ATRIUM_DATA_DIR', group: DATA, kind: directory(), default: './data',
    description: 'Embedded database, files of project storage, generated keys. One process per directory.',
  }),
  databaseUrl: setting({
    env: 'DATABASE_URL', group: DATA, kind: url(['postgres', 'postgresql']), secret: secret.urlPassword,
    default: rule('unset: the embedded database (PGlite) in the data directory', () => undefined),
    description: 'PostgreSQL connection URL. Any number of instances can share one database behind a load balancer.',
  }),
  databasePoolSize: setting({ env: 'DATABASE_POOL_SIZE', group: DATA, kind: integer(1, 999), default: '20', description: 'PostgreSQL connections per instance for requests.' }),
  secretKey: setting({
    env: 'ATRIUM_SECRET_KEY', group: DATA, kind: base64Key(32), secret: secret.whole,
    default: rule('generated into `<data directory>/secret.key`', () => undefined),
    description: 'Encrypts stored secrets (webhook signing secrets, API-key copies) and derives cookie keys. Give every instance the same one.',
  }),
  secretKeyFallbacks: setting({
    env: 'ATRIUM_SECRET_KEY_FALLBACKS', group: DATA, kind: base64Keys(32, 8), secret: secret.whole,
    default: rule('unset: none', (): string[] => []),
    description: 'Keys that were ATRIUM_SECRET_KEY before, while changing it: what they encrypted still decrypts and cookies they signed still verify. `atrium keys reencrypt` moves what is stored to ATRIUM_SECRET_KEY; then remove them (docs/operations.md, "Changing ATRIUM_SECRET_KEY").',
  }),
  keys: {
    refreshMs: setting({
      env: 'ATRIUM_KEY_REFRESH_SECONDS', group: DATA, kind: integer(1, 60, { unit: 'seconds', scale: 1000 }), default: '30',
      description: 'How often every instance re-reads the signing keys: after `atrium keys rotate`, all instances sign with the new key within this time (a token signed with it verifies everywhere at once).',
    }),
    retireAfterMs: setting({
      env: 'ATRIUM_KEY_RETIRE_AFTER_DAYS', group: DATA, kind: integer(1, 3650, { unit: 'days', scale: 86_400_000 }), default: '31',
      description: 'How long a superseded signing key stays in the JWKS and keeps verifying: longer than any token it signed lives (participant tokens: up to 30 days).',
    }),
  },
  s3: {
    bucket: setting({
      env: 'ATRIUM_S3_BUCKET', group: DATA, kind: text('an S3 bucket name (3–63 characters)', /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 63),
      default: rule('unset: files live in `<data directory>/blobs`', () => undefined),
      description: 'Keep project and room storage in this bucket of an S3-compatible object store instead of the data directory: what several instances need. Credentials come from the standard AWS variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, instance roles).',
    }),
    endpoint: setting({
      env: 'ATRIUM_S3_ENDPOINT', group: DATA, kind: url(['http', 'https']), default: rule('unset: AWS S3', () => undefined),
      description: 'Endpoint of an S3-compatible service (MinIO, Ceph, R2, …), e.g. `https://minio.internal:9000`.',
    }),
    region: setting({ env: 'ATRIUM_S3_REGION', group: DATA, kind: text('a region name', /^[a-z0-9-]{1,40}$/, 40), default: 'us-east-1', description: 'Region of the bucket.' }),
    prefix: setting({
      env: 'ATRIUM_S3_PREFIX', group: DATA, kind: text('a key prefix (printable, at most 200 characters)', /^[\x21-\x7e]*$/, 200), default: '',
      description: 'Prefix of every key, e.g. `atrium/production/`, so that deployments can share a bucket.',
    }),
    forcePathStyle: setting({
      env: 'ATRIUM_S3_FORCE_PATH_STYLE', group: DATA, kind: boolean(), default: rule('`true` with `ATRIUM_S3_ENDPOINT`, `false` without', (get) => get('ATRIUM_S3_ENDPOINT') !== undefined),
      description: 'Address the bucket in the path (`endpoint/bucket/key`) rather than the host name: what most S3-compatible services expect.',
    }),
  },

  mail: {
    smtpUrl: setting({
      env: 'ATRIUM_SMTP_URL', group: SIGNIN, kind: url(['smtp', 'smtps']), secret: secret.urlPassword, default: rule('unset', () => undefined),
      description: 'SMTP server for sign-in mail, e.g. `smtps://user:password@mail.example.com:465`.',
    }),
    from: setting({
      env: 'ATRIUM_MAIL_FROM', group: SIGNIN, kind: text('a From address (3–200 characters)', /^[^\0-\x1f\x7f]{3,}$/, 200),
      default: rule('`Atrium <no-reply@<public host>>`', (get) => `Atrium <no-reply@${new URL(String(get('ATRIUM_PUBLIC_URL'))).hostname}>`),
      description: 'From address of sign-in mail.',
    }),
    devMailbox: setting({
      env: 'ATRIUM_DEV_MAILBOX', group: SIGNIN, kind: boolean(), default: rule(BY_ENGINE, embedded),
      description: 'Without `ATRIUM_SMTP_URL`, keep mail in a development mailbox at `/dev/mail`, shown only to this machine (loopback clients whose requests no proxy forwarded). The server refuses to start with it on a `HOST` that serves the network. Never for production.',
    }),
  },
  signin: {
    passwordLogin: setting({
      env: 'ATRIUM_PASSWORD_LOGIN', group: SIGNIN, kind: boolean(), default: 'true',
      description: 'Offer sign-in with email and password, on the sign-in pages, to accounts that exist (the first admin\'s, those `atrium bootstrap` creates, those that signed up). Needs no mail. `false` leaves only the upstream providers (`ATRIUM_OIDC_PROVIDERS`).',
    }),
    emailLogin: setting({
      env: 'ATRIUM_EMAIL_LOGIN', group: SIGNIN, kind: boolean(),
      default: rule('`true` with the embedded database (unless `ATRIUM_PASSWORD_LOGIN=false`), `false` with `DATABASE_URL`', (get) => embedded(get) && get('ATRIUM_PASSWORD_LOGIN') === true),
      description: 'Also offer what needs mail on the sign-in pages: sign-up with confirmation, one-time sign-in codes and password resets. Needs a way to send mail (`ATRIUM_SMTP_URL`, or the development mailbox) and `ATRIUM_PASSWORD_LOGIN`.',
    }),
    upstream: setting({
      env: 'ATRIUM_OIDC_PROVIDERS', group: SIGNIN, secret: secret.jsonFields('client_secret'), default: '[]',
      kind: json('a JSON array of at most 20 providers', Type.Array(UpstreamProviderSchema, { maxItems: 20 }), (providers) => {
        const ids = providers.map((p) => p.id);
        return new Set(ids).size === ids.length ? undefined : 'provider ids must be unique';
      }),
      description: 'Upstream OpenID Connect providers, offered on the sign-in page as "Continue with …" buttons: `[{"id", "issuer", "client_id", "client_secret", "label", "scope"?}]`. Register `<ATRIUM_PUBLIC_URL>/signin/upstream/<id>/callback` as the redirect URI at the provider.',
    }),
    adminsNeedSecondFactor: setting({
      env: 'ATRIUM_ADMINS_NEED_SECOND_FACTOR', group: SIGNIN, kind: boolean(), default: 'false',
      description: 'Require a second factor (authenticator app or passkey) of everyone who administers a project through the console, the CLI or the API: a user without one holds their admin roles without being able to use them until they add one on their account page. Projects can require the same of their own admins.',
    }),
    limits: {
      perAccount: setting({
        env: 'ATRIUM_SIGNIN_LIMIT_PER_ACCOUNT', group: SIGNIN, kind: integer(1, 999_999), default: '10',
        description: `Sign-in, code and reset attempts, and requests that send mail, allowed per email address per ${SIGNIN_WINDOW_MINUTES} minutes, counted in the database: shared by every instance.`,
      }),
      perIp: setting({ env: 'ATRIUM_SIGNIN_LIMIT_PER_IP', group: SIGNIN, kind: integer(1, 999_999), default: '100', description: 'The same, per client IP address.' }),
      tokenPerIp: setting({
        env: 'ATRIUM_TOKEN_LIMIT_PER_IP', group: SIGNIN, kind: integer(1, 999_999), default: '600',
        description: 'Requests to the OAuth token endpoint (`/oauth/token`) allowed per client IP address per minute, across all instances (429 beyond).',
      }),
      devicePerIp: setting({
        env: 'ATRIUM_DEVICE_LIMIT_PER_IP', group: SIGNIN, kind: integer(1, 999_999), default: '30',
        description: 'Requests to the device-code page (`/oauth/device`, where a user enters a code) allowed per client IP address per minute, across all instances.',
      }),
    },
  },
  retention: {
    retentionMs: setting({
      env: 'ATRIUM_RETENTION_DAYS', group: JOBS, kind: integer(1, 3650, { unit: 'days', scale: 86_400_000 }), default: '30',
      description: 'Finished webhook deliveries with their attempts, dead background jobs, events no delivery needs any more and development mail older than this are deleted by an hourly schedule (session telemetry and task runs have settings of their own).',
    }),
    auditRetentionMs: setting({
      env: 'ATRIUM_AUDIT_RETENTION_DAYS', group: JOBS, kind: integer(1, 36_500, { unit: 'days', scale: 86_400_000 }), default: '90',
      description: 'Entries of the audit log older than this are deleted by an hourly schedule, the one deletion the table allows (docs/audit-log.md).',
    }),
    batchSize: setting({
      env: 'ATRIUM_RETENTION_BATCH_SIZE', group: JOBS, kind: integer(1, 100_000), default: '1000',
      description: 'Rows deleted per statement by retention; each batch is a short statement of its own, and a run stops after 100 batches per table.',
    }),
  },
  jobs: {
    worker: setting({
      env: 'ATRIUM_JOBS_WORKER', group: JOBS, kind: boolean(), default: 'true',
      description: 'Run the background work on this instance: the outbox worker (webhook deliveries, pricing, feed fan-out, room-server calls) and the scheduler. `false` for instances that only serve requests, to size request and background capacity apart or to keep a burst of background work away from requests; other instances on the same PostgreSQL database must then run it (docs/operations.md). Needs `DATABASE_URL`.',
    }),
    pollMs: setting({
      env: 'ATRIUM_JOBS_POLL_MS', group: JOBS, kind: integer(0, 999_999, { unit: 'milliseconds' }), default: '1000',
      description: 'How often an idle worker looks for due jobs it was not woken for, such as retries.',
    }),
    batchSize: setting({ env: 'ATRIUM_JOBS_BATCH_SIZE', group: JOBS, kind: integer(1, 9999), default: '500', description: 'Most jobs claimed per query.' }),
    concurrency: setting({ env: 'ATRIUM_JOBS_CONCURRENCY', group: JOBS, kind: integer(1, 99_999), default: '1000', description: 'Most jobs (deliveries) running at once per instance.' }),
    poolSize: setting({
      env: 'ATRIUM_JOBS_POOL_SIZE', group: JOBS, kind: integer(1, 99), default: '4',
      description: 'PostgreSQL connections of their own for background work, so it never waits behind request traffic.',
    }),
    leaseMs: setting({
      env: 'ATRIUM_JOBS_LEASE_SECONDS', group: JOBS, kind: integer(1, 99_999, { unit: 'seconds', scale: 1000 }), default: '30',
      description: 'Lease of a claimed job, renewed while it runs; the jobs of a crashed instance run again once it expires.',
    }),
  },
  webhooks: {
    allowPrivate: setting({
      env: 'ATRIUM_WEBHOOKS_ALLOW_PRIVATE', group: WEBHOOKS, kind: privateTargets(100),
      default: rule(
        '`true` with the embedded database on a loopback `HOST` without `ATRIUM_TRUST_PROXY` (the quick start); `false` otherwise',
        (get) => embedded(get) && !facesNetwork(String(get('HOST')), get('ATRIUM_TRUST_PROXY')),
      ),
      description: 'Which webhook URLs on loopback, private and link-local addresses (`127.0.0.1`, `10.…`, `169.254.169.254`, `[::1]`…) are allowed: `true` all of them (the quick start delivers to receivers on your own machine), `false` none, or a list of the addresses, CIDR ranges and host names of your own receivers (`127.0.0.1,10.1.2.0/24,hooks.internal`). A server others reach is an SSRF target otherwise: any tenant could have it call internal services and read their answers in the delivery log.',
    }),
    timeoutMs: setting({
      env: 'ATRIUM_WEBHOOKS_TIMEOUT_SECONDS', group: WEBHOOKS, kind: integer(1, 999, { unit: 'seconds', scale: 1000 }), default: '15',
      description: 'Webhook request timeout.',
    }),
    retrySchedule: setting({
      env: 'ATRIUM_WEBHOOKS_RETRY_SCHEDULE', group: WEBHOOKS, kind: integerList(0, 999_999, 20, { unit: 'seconds', scale: 1000 }),
      default: '5,300,1800,7200,18000,36000,36000', description: 'Seconds to wait before each retry; ±20 % jitter is added.',
    }),
    disableAfterMs: setting({
      env: 'ATRIUM_WEBHOOKS_DISABLE_AFTER_HOURS', group: WEBHOOKS, kind: integer(1, 99_999, { unit: 'hours', scale: 3600_000 }), default: '120',
      description: 'A webhook whose deliveries keep failing this long without a success is disabled.',
    }),
  },
  repositories: {
    registryService: setting({
      env: 'ATRIUM_REGISTRY_SERVICE', group: RESOURCES, kind: text('a service name (1–200 printable ASCII characters)', /^[\x20-\x7e]+$/, 200), default: 'atrium-registry',
      description: 'The audience (`aud`) of repository tokens: set your OCI registry\'s token `service` to the same value. The registry also needs the issuer (`ATRIUM_PUBLIC_URL`) and the keys at `/.well-known/jwks.json`: see [docs/repositories.md](docs/repositories.md).',
    }),
  },
  mailboxes: {
    domains: setting({
      env: 'ATRIUM_MAIL_DOMAINS', group: RESOURCES, kind: dnsNames(100), default: rule('unset: no mailbox can be created', (): string[] => []),
      description: 'Mail domains whose addresses projects may claim as mailboxes (`support@mail.example.com` needs `mail.example.com`). Each address belongs to one project of the deployment.',
    }),
  },
  roomServer: {
    url: setting({
      env: 'ATRIUM_ROOM_SERVER_URL', group: ROOM_SERVERS, kind: url(['http', 'https']), default: rule('unset: nothing is sent; scheduled runs and terminations fail, saying so', () => undefined),
      description: 'Base URL of the room server that Atrium calls, signed with its own keys (JWKS), to deliver the queued messages of scheduled tasks and to terminate sessions: see [docs/room-servers.md](docs/room-servers.md). One for the deployment.',
    }),
  },
  sessions: {
    terminateTimeoutMs: setting({
      env: 'ATRIUM_SESSION_TERMINATE_TIMEOUT_SECONDS', group: ROOM_SERVERS, kind: integer(1, 99_999, { unit: 'seconds', scale: 1000 }), default: '60',
      description: 'A session being terminated that the room server has not reported ended this long after the request is marked ended, with `ended_reason: "terminate_timeout"`.',
    }),
    telemetryRetentionMs: setting({
      env: 'ATRIUM_SESSION_TELEMETRY_RETENTION_DAYS', group: ROOM_SERVERS, kind: integer(1, 3650, { unit: 'days', scale: 86_400_000 }), default: '30',
      description: 'Spans, events and metric points of sessions are deleted this long after they arrived.',
    }),
    telemetryMaxPerSession: setting({
      env: 'ATRIUM_SESSION_TELEMETRY_MAX_ITEMS', group: ROOM_SERVERS, kind: integer(1, 99_999_999), default: '100000',
      description: 'Most spans, most events and most metric points kept per session (each); OTLP exports beyond it are answered with a partial success naming what was rejected.',
    }),
    otlpBodyTimeoutMs: setting({
      env: 'ATRIUM_OTLP_BODY_TIMEOUT_SECONDS', group: ROOM_SERVERS, kind: integer(1, 3600, { unit: 'seconds', scale: 1000 }), default: '30',
      description: 'Longest an OTLP export may take to send its body; a slower one is cut off and its upload slot freed. Each instance ingests 32 exports at once, at most 8 of one project (429 with `Retry-After` beyond), so one project\'s slow exports never hold everyone\'s.',
    }),
  },
  scheduledTasks: {
    minPeriodMs: setting({
      env: 'ATRIUM_SCHEDULED_TASKS_MIN_PERIOD_SECONDS', group: ROOM_SERVERS, kind: integer(1, 999_999, { unit: 'seconds', scale: 1000 }), default: '60',
      description: 'Shortest period a scheduled task may have (cron or interval); a more frequent schedule is refused with 400. The official SDK\'s client refuses anything under 15 minutes on its own.',
    }),
    runRetentionMs: setting({
      env: 'ATRIUM_SCHEDULED_TASK_RUNS_RETENTION_DAYS', group: ROOM_SERVERS, kind: integer(1, 3650, { unit: 'days', scale: 86_400_000 }), default: '30',
      description: 'Runs of scheduled tasks that finished (submitted or failed) are deleted this long after their due time.',
    }),
  },
  feeds: {
    flushMs: setting({
      env: 'ATRIUM_FEEDS_FLUSH_SECONDS', group: FEEDS, kind: integer(1, 3600, { unit: 'seconds', scale: 1000 }), default: '60',
      description: 'Longest a published message waits before its subscriptions write it into room storage: each subscription writes one file per window.',
    }),
    flushMessages: setting({
      env: 'ATRIUM_FEEDS_FLUSH_MESSAGES', group: FEEDS, kind: integer(1, 100_000), default: '1000',
      description: 'A subscription writes a file as soon as this many messages wait, without waiting for the window; also the most lines in one file.',
    }),
  },
  llm: {
    openaiBaseUrl: setting({
      env: 'ATRIUM_OPENAI_BASE_URL', group: LLM, kind: url(['http', 'https']), default: 'https://api.openai.com/v1',
      description: 'Where `/openai/v1/…` is forwarded, as the OpenAI SDK\'s `baseURL`: the path after `/openai/v1` is appended to it.',
    }),
    openaiApiKey: setting({
      env: 'ATRIUM_OPENAI_API_KEY', group: LLM, kind: API_KEY, secret: secret.whole, default: rule('unset: the OpenAI routes answer 404', () => undefined),
      description: 'The operator\'s OpenAI key, sent upstream in place of the caller\'s credential.',
    }),
    anthropicBaseUrl: setting({
      env: 'ATRIUM_ANTHROPIC_BASE_URL', group: LLM, kind: url(['http', 'https']), default: 'https://api.anthropic.com',
      description: 'Where `/anthropic/…` is forwarded, as the Anthropic SDK\'s `baseURL`: the path after `/anthropic` is appended to it.',
    }),
    anthropicApiKey: setting({
      env: 'ATRIUM_ANTHROPIC_API_KEY', group: LLM, kind: API_KEY, secret: secret.whole, default: rule('unset: the Anthropic routes answer 404', () => undefined),
      description: 'The operator\'s Anthropic key, sent upstream as `x-api-key` in place of the caller\'s credential.',
    }),
    timeoutMs: setting({
      env: 'ATRIUM_LLM_TIMEOUT_SECONDS', group: LLM, kind: integer(1, 3600, { unit: 'seconds', scale: 1000 }), default: '600',
      description: 'Longest wait for the upstream\'s response headers, and for each chunk of its body after them.',
    }),
    recordLingerMs: setting({
      env: 'ATRIUM_LLM_RECORD_LINGER_MS', group: LLM, kind: integer(0, 10_000, { unit: 'milliseconds' }), default: '50',
      description: 'How long a finished call\'s usage record waits for other calls of its project, so that they are written in one statement (the caller does not wait for it). 0 writes each as soon as the database is free. Records still waiting when the server stops are written on its way down.',
    }),
    maxBodyBytes: setting({
      env: 'ATRIUM_LLM_MAX_BODY_BYTES', group: LLM, kind: integer(1024, 999_999_999, { unit: 'bytes' }), default: '33554432',
      description: 'Largest request body the proxy forwards (413 beyond); the default is 32 MiB.',
    }),
  },
  billing: {
    currency: setting({
      env: 'ATRIUM_BILLING_CURRENCY', group: BILLING, kind: text('a three-letter currency code', /^[A-Z]{3}$/, 3), default: 'USD',
      description: 'The one currency of wallets, prices and payments. Amounts are kept as integers in millionths of it.',
    }),
    pricesFile: setting({
      env: 'ATRIUM_BILLING_PRICES_FILE', group: BILLING, kind: text('a file path', /^[^\0]+$/, 4096),
      default: rule('unset: the shipped list prices (`src/modules/billing/pricing/prices.default.json`)', () => undefined),
      description: 'A JSON price list (per provider, model and usage type, with aliases, maximum output and effective dates, and the proxy surcharge rate) that replaces the shipped one: see docs/billing.md. It is read again when it changes and on SIGHUP, without a restart; a file that is wrong then is logged and the list in force stays.',
    }),
    pricingDelayMs: setting({
      env: 'ATRIUM_BILLING_PRICING_DELAY_MS', group: BILLING, kind: integer(0, 60_000, { unit: 'milliseconds' }), default: '1000',
      description: 'How long a finished LLM call or session waits before it is priced, without waking a worker, so that the calls of that time are priced together in one settlement instead of one each (docs/billing.md). 0 prices each at once. A call\'s reservation is held until then.',
    }),
    enforced: setting({
      env: 'ATRIUM_BILLING_ENFORCED', group: BILLING, kind: boolean(), default: 'false',
      description: 'Admit LLM proxy calls to metered endpoints only for a priced model (400 otherwise) and while the project\'s balance, minus what its calls in flight reserved, is above zero (402 otherwise); each call reserves the most it can cost. Off by default, so a fresh server\'s proxy works before anyone buys credits; usage is priced and debited either way.',
    }),
    callReserve: setting({
      env: 'ATRIUM_BILLING_CALL_RESERVE', group: BILLING, kind: integer(0, 999_999_999_999, { unit: 'micro-units' }), default: '10000',
      description: 'Least a call reserves against the balance while it runs, in millionths of the currency (the default is 0.01); a call that can cost more (its body, and its `max_tokens` or else the model\'s maximum output) reserves that.',
    }),
    paymentProvider: setting({
      env: 'ATRIUM_PAYMENT_PROVIDER', group: BILLING, kind: oneOf(['none', 'local', 'stripe']),
      default: rule('`local` with the embedded database, `none` with `DATABASE_URL`', (get) => (embedded(get) ? 'local' : 'none')),
      description: '`none`: no checkouts or auto-recharge (credits come only from adjustments). `local`: checkout pages on this server where a person confirms or cancels a test payment with test cards — a development tool: no money moves, and with `DATABASE_URL` it needs `ATRIUM_PAYMENT_LOCAL_ALLOWED=true`. `stripe`: Stripe Checkout, off-session charges for auto-recharge, and the webhook `/billing/stripe/webhook` (needs `ATRIUM_STRIPE_SECRET_KEY` and `ATRIUM_STRIPE_WEBHOOK_SECRET`). Checkouts opened with one provider cannot be paid once another is set.',
    }),
    localPaymentsAllowed: setting({
      env: 'ATRIUM_PAYMENT_LOCAL_ALLOWED', group: BILLING, kind: boolean(), default: rule(BY_ENGINE, (get) => embedded(get)),
      description: 'Whether `ATRIUM_PAYMENT_PROVIDER=local` may be used: with it, anyone who can open a checkout buys credits with a test card, so a server on `DATABASE_URL` (a shared or production one) refuses to start with it unless this says `true`.',
    }),
    subscriptionCredits: setting({
      env: 'ATRIUM_BILLING_SUBSCRIPTION_CREDITS', group: BILLING, kind: integer(1, 1_000_000, { unit: 'currency units' }), default: '20',
      description: 'What the subscription costs each month, granted as credits when it is paid.',
    }),
    stripeSecretKey: setting({
      env: 'ATRIUM_STRIPE_SECRET_KEY', group: BILLING, kind: API_KEY, secret: secret.whole, default: rule('unset', () => undefined),
      description: 'Stripe secret key (`sk_…` or a restricted `rk_…` key), with `ATRIUM_PAYMENT_PROVIDER=stripe`.',
    }),
    stripeWebhookSecret: setting({
      env: 'ATRIUM_STRIPE_WEBHOOK_SECRET', group: BILLING, kind: API_KEY, secret: secret.whole, default: rule('unset', () => undefined),
      description: 'Signing secret (`whsec_…`) of the Stripe webhook endpoint `{ATRIUM_PUBLIC_URL}/billing/stripe/webhook`.',
    }),
    stripeApiUrl: setting({
      env: 'ATRIUM_STRIPE_API_URL', group: BILLING, kind: url(['http', 'https']), default: 'https://api.stripe.com',
      description: 'Where the Stripe SDK sends API requests (an origin): Stripe itself, or a proxy or test double.',
    }),
  },
};

type Settings = ValuesOf<typeof SETTINGS>;

/** The settings, plus what follows from them. */
export type Config = Settings & {
  /** Whether others can reach the server: a `HOST` that serves the network, or proxies in front of it (`ATRIUM_TRUST_PROXY`). */
  exposed: boolean;
  signin: { limits: { windowMs: number } };
  mail: {
    /** 'smtp' when ATRIUM_SMTP_URL is set; 'outbox' keeps mail in the database for /dev/mail; 'none' cannot send. */
    transport: 'smtp' | 'outbox' | 'none';
  };
};
export type UpstreamProvider = Settings['signin']['upstream'][number];

const invalid = (problems: string[]) => new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);

export function loadConfig(env: Readonly<Record<string, string | undefined>> = process.env): Config {
  const { values, problems } = readSettings(SETTINGS, env);
  if (problems.length > 0) throw invalid(problems);
  const { mail, signin } = values;
  const transport = mail.smtpUrl ? 'smtp' : mail.devMailbox ? 'outbox' : 'none';
  if (signin.emailLogin && transport === 'none') {
    problems.push('Email sign-up, codes and resets (ATRIUM_EMAIL_LOGIN, on by default with the embedded database) need a way to send mail: set ATRIUM_SMTP_URL, or ATRIUM_DEV_MAILBOX=true for development, or ATRIUM_EMAIL_LOGIN=false (password sign-in needs no mail)');
  }
  if (signin.emailLogin && !signin.passwordLogin) {
    problems.push('ATRIUM_EMAIL_LOGIN=true needs ATRIUM_PASSWORD_LOGIN=true: its accounts sign in with their password');
  }
  // Its mail holds sign-in codes and password-reset links: on the network, it hands out accounts.
  if (transport === 'outbox' && !isLoopback(values.host)) {
    const off = signin.emailLogin ? 'ATRIUM_DEV_MAILBOX=false with ATRIUM_EMAIL_LOGIN=false' : 'ATRIUM_DEV_MAILBOX=false';
    problems.push(
      `HOST=${values.host} serves the network, but the development mailbox (/dev/mail) is on: it holds sign-in codes and `
      + 'password-reset links, so it is only for a server that no one else can reach. '
      + `Set ATRIUM_SMTP_URL to send real mail, or HOST=127.0.0.1 to serve this machine only, or ${off}`,
    );
  }
  if (!values.jobs.worker && values.databaseUrl === undefined) {
    problems.push('ATRIUM_JOBS_WORKER=false needs PostgreSQL (DATABASE_URL): with the embedded database this is the only instance, so nothing would deliver webhooks, price usage or run schedules');
  }
  if (values.billing.paymentProvider === 'local' && !values.billing.localPaymentsAllowed) {
    problems.push('ATRIUM_PAYMENT_PROVIDER=local takes test cards for credits: with DATABASE_URL it needs ATRIUM_PAYMENT_LOCAL_ALLOWED=true (development and trials only); use stripe, or none');
  }
  if (problems.length > 0) throw invalid(problems);
  return {
    ...values,
    exposed: facesNetwork(values.host, values.trustProxy),
    signin: { ...signin, limits: { ...signin.limits, windowMs: SIGNIN_WINDOW_MINUTES * 60_000 } },
    mail: { ...mail, transport },
  };
}

/**
 * The effective settings by variable name, as they would be written, with secrets redacted: for
 * startup banners and logs.
 */
export function describeConfig(config: Config): Record<string, string> {
  return describeSettings(SETTINGS, config);
}

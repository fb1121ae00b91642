// The settings table: defaults (plain and depending on other settings), one startup error naming
// every bad variable without repeating secrets, the refusal to show the development mailbox to the
// network, the redacted summary, and the README section generated from the table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { README, renderSettingsSection, withSettingsSection } from '../../scripts/settings-doc.ts';
import { ConfigError, describeConfig, loadConfig, SETTINGS } from '../../src/config.ts';
import { listSettings } from '../../src/platform/settings/table.ts';

const KEY = Buffer.alloc(32, 3).toString('base64');

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `a ConfigError, not ${String(error)}`);
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
}

test('defaults: the embedded quick start on this machine only', () => {
  const config = loadConfig({});
  assert.equal(config.port, 8000);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.publicUrl, 'http://localhost:8000');
  assert.equal(config.roomsUrl, 'ws://localhost:8000/rooms');
  assert.equal(config.dataDir, resolve('data'));
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.databasePoolSize, 20);
  assert.equal(config.secretKey, undefined);
  assert.equal(config.maxUploadBytes, 100 * 1024 * 1024);
  assert.equal(config.authCacheMs, 5000);
  assert.equal(config.logLevel, 'info');
  assert.equal(config.trustProxy, false);
  assert.equal(config.exposed, false);
  assert.deepEqual(config.signin, { passwordLogin: true, emailLogin: true, upstream: [], adminsNeedSecondFactor: false, limits: { perAccount: 10, perIp: 100, tokenPerIp: 600, devicePerIp: 30, windowMs: 15 * 60_000 } });
  assert.deepEqual(config.mail, { smtpUrl: undefined, from: 'Atrium <no-reply@localhost>', devMailbox: true, transport: 'outbox' });
  assert.deepEqual(config.jobs, { worker: true, pollMs: 1000, batchSize: 500, concurrency: 1000, poolSize: 4, leaseMs: 30_000 });
  assert.deepEqual(config.webhooks, {
    allowPrivate: true,
    timeoutMs: 15_000,
    retrySchedule: [5, 300, 1800, 7200, 18000, 36000, 36000].map((s) => s * 1000),
    disableAfterMs: 120 * 3600_000,
  });
});

test('defaults that follow other settings', () => {
  const production = loadConfig({ DATABASE_URL: 'postgres://db/atrium', PORT: '9000', ATRIUM_SMTP_URL: 'smtp://mail:25' });
  assert.equal(production.publicUrl, 'http://localhost:9000');
  assert.equal(production.roomsUrl, 'ws://localhost:9000/rooms');
  assert.equal(production.signin.emailLogin, false);
  assert.equal(production.signin.passwordLogin, true, 'password sign-in needs no mail');
  assert.equal(production.mail.devMailbox, false);
  assert.equal(production.mail.transport, 'smtp');
  assert.equal(production.webhooks.allowPrivate, false);

  const tls = loadConfig({ ATRIUM_PUBLIC_URL: 'https://auth.example.com/', ATRIUM_SMTP_URL: 'smtps://mail:465' });
  assert.equal(tls.publicUrl, 'https://auth.example.com', 'trailing slash dropped');
  assert.equal(tls.roomsUrl, 'wss://auth.example.com/rooms');
  assert.equal(tls.mail.from, 'Atrium <no-reply@auth.example.com>');
  assert.equal(tls.mail.transport, 'smtp', 'SMTP wins over the development mailbox');

  const set = loadConfig({ DATABASE_URL: 'postgres://db/atrium', ATRIUM_EMAIL_LOGIN: '1', ATRIUM_DEV_MAILBOX: 'true', ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' });
  assert.equal(set.signin.emailLogin, true);
  assert.equal(set.mail.transport, 'outbox');
  assert.equal(set.webhooks.allowPrivate, true);
  // An empty variable counts as unset.
  assert.equal(loadConfig({ PORT: '', HOST: '' }).host, '127.0.0.1');
});

test('values are read in the unit they are written in', () => {
  const config = loadConfig({
    ATRIUM_AUTH_CACHE_SECONDS: '0', ATRIUM_JOBS_LEASE_SECONDS: '5', ATRIUM_WEBHOOKS_TIMEOUT_SECONDS: '1',
    ATRIUM_WEBHOOKS_RETRY_SCHEDULE: '1,0,2', ATRIUM_WEBHOOKS_DISABLE_AFTER_HOURS: '2', ATRIUM_TRUST_PROXY: 'true',
    ATRIUM_OIDC_PROVIDERS: JSON.stringify([{ id: 'idp', issuer: 'https://idp.example', client_id: 'c', client_secret: 's', label: 'IdP' }]),
  });
  assert.equal(config.authCacheMs, 0);
  assert.equal(config.jobs.leaseMs, 5000);
  assert.equal(config.webhooks.timeoutMs, 1000);
  assert.deepEqual(config.webhooks.retrySchedule, [1000, 0, 2000]);
  assert.equal(config.webhooks.disableAfterMs, 2 * 3600_000);
  assert.equal(config.trustProxy, true);
  assert.deepEqual(config.signin.upstream.map((p) => p.id), ['idp']);
});

test('one startup error names every bad variable and what it expects', () => {
  const message = configError({
    PORT: '70000',
    HOST: 'two words',
    ATRIUM_PUBLIC_URL: 'ftp://example.com',
    ATRIUM_LOG_LEVEL: 'loud',
    ATRIUM_TRUST_PROXY: 'yes',
    ATRIUM_JOBS_LEASE_SECONDS: '0',
    ATRIUM_WEBHOOKS_RETRY_SCHEDULE: '5,,10',
    ATRIUM_MAIL_FROM: 'a\r\nBcc: x@example.com',
  });
  for (const expected of [
    /PORT="70000" is invalid: expected a TCP port/,
    /HOST="two words" is invalid/,
    /ATRIUM_PUBLIC_URL="ftp:\/\/example.com" is invalid: expected a URL starting `http:\/\/` or `https:\/\/`/,
    /ATRIUM_LOG_LEVEL="loud" is invalid: expected one of `fatal`/,
    /ATRIUM_TRUST_PROXY="yes" is invalid \("yes" is not an IP address or CIDR range\): expected `true` or `false`/,
    /ATRIUM_JOBS_LEASE_SECONDS="0" is invalid \(out of range\): expected seconds, 1–99,999/,
    /ATRIUM_WEBHOOKS_RETRY_SCHEDULE="5,,10" is invalid/,
    /ATRIUM_MAIL_FROM=.* is invalid/,
  ]) assert.match(message, expected);
  assert.equal(message.split('\n').length, 9, `one line per variable:\n${message}`);
  assert.doesNotMatch(configError({ PORT: 'abc' }), /HOST|ATRIUM_/, 'only the bad variable is named');
});

test('a bad secret is named but its value never repeated', () => {
  const providers = JSON.stringify([{ id: 'idp', issuer: 'https://idp.example', client_id: 'c', client_secret: 'upstream-secret-1', label: 'IdP', extra: 1 }]);
  const message = configError({
    DATABASE_URL: 'mysql://atrium:db-password-1@db/atrium',
    ATRIUM_SMTP_URL: 'imap://mailer:smtp-password-1@mail',
    ATRIUM_SECRET_KEY: 'short-key-secret-1',
    ATRIUM_OIDC_PROVIDERS: providers,
  });
  for (const name of ['DATABASE_URL', 'ATRIUM_SMTP_URL', 'ATRIUM_SECRET_KEY', 'ATRIUM_OIDC_PROVIDERS']) assert.match(message, new RegExp(`\\b${name} is invalid`));
  assert.match(message, /ATRIUM_OIDC_PROVIDERS is invalid \(\[0\] must not have additional properties/);
  assert.doesNotMatch(message, /password-1|secret-1|mysql|imap/);

  assert.match(configError({ ATRIUM_OIDC_PROVIDERS: '{not json' }), /ATRIUM_OIDC_PROVIDERS is invalid \(not valid JSON\)/);
  const twice = JSON.stringify([1, 2].map(() => ({ id: 'same', issuer: 'https://idp.example', client_id: 'c', client_secret: 's', label: 'IdP' })));
  assert.match(configError({ ATRIUM_OIDC_PROVIDERS: twice }), /provider ids must be unique/);
  assert.match(configError({ ATRIUM_SECRET_KEY: 'A'.repeat(44) }), /ATRIUM_SECRET_KEY is invalid \(not 32 bytes\)/);
  assert.equal(loadConfig({ ATRIUM_SECRET_KEY: Buffer.alloc(32, 1).toString('base64url') }).secretKey, Buffer.alloc(32, 1).toString('base64url'));
});

test('ATRIUM_SECRET_KEY_FALLBACKS: keys of 32 bytes, comma-separated; a bad one is named by its place, never shown', () => {
  const a = Buffer.alloc(32, 1).toString('base64');
  const b = Buffer.alloc(32, 2).toString('base64url');
  assert.deepEqual(loadConfig({}).secretKeyFallbacks, []);
  assert.deepEqual(loadConfig({ ATRIUM_SECRET_KEY_FALLBACKS: `${a}, ${b}` }).secretKeyFallbacks, [a, b]);
  const message = configError({ ATRIUM_SECRET_KEY_FALLBACKS: `${a},old-key-secret-1!` });
  assert.match(message, /ATRIUM_SECRET_KEY_FALLBACKS is invalid \(key 2: not base64\)/);
  assert.doesNotMatch(message, /old-key-secret-1/);
  assert.match(configError({ ATRIUM_SECRET_KEY_FALLBACKS: `${a},${'B'.repeat(40)}` }), /key 2: not 32 bytes/);
  assert.match(configError({ ATRIUM_SECRET_KEY_FALLBACKS: 'A'.repeat(44) }), /key 1: not 32 bytes/);
  assert.match(configError({ ATRIUM_SECRET_KEY_FALLBACKS: Array(9).fill(a).join(',') }), /more than 8 keys/);
  assert.equal(describeConfig(loadConfig({ ATRIUM_SECRET_KEY_FALLBACKS: a })).ATRIUM_SECRET_KEY_FALLBACKS, '[redacted]');
});

test('email sign-in without a way to send mail is refused; password sign-in needs none', () => {
  assert.match(configError({ ATRIUM_DEV_MAILBOX: 'false' }), /ATRIUM_EMAIL_LOGIN.*need a way to send mail: set ATRIUM_SMTP_URL/);
  const quiet = loadConfig({ ATRIUM_DEV_MAILBOX: 'false', ATRIUM_EMAIL_LOGIN: 'false' });
  assert.equal(quiet.mail.transport, 'none');
  assert.equal(quiet.signin.passwordLogin, true);
  assert.match(configError({ ATRIUM_PASSWORD_LOGIN: 'false', ATRIUM_EMAIL_LOGIN: 'true' }), /ATRIUM_EMAIL_LOGIN=true needs ATRIUM_PASSWORD_LOGIN=true/);
  assert.equal(loadConfig({ ATRIUM_PASSWORD_LOGIN: 'false' }).signin.emailLogin, false, 'email sign-in follows password sign-in off by default');
});

test('private webhook targets follow exposure: allowed only for the embedded quick start on loopback', () => {
  const smtp = { ATRIUM_SMTP_URL: 'smtp://mail:25' };
  assert.equal(loadConfig({}).webhooks.allowPrivate, true);
  for (const env of [{ HOST: '0.0.0.0', ...smtp }, { HOST: '::', ...smtp }, { HOST: '192.168.1.10', ...smtp }, { ATRIUM_TRUST_PROXY: '1' }, { ATRIUM_TRUST_PROXY: 'true' }, { ATRIUM_TRUST_PROXY: '10.0.0.0/8' }, { DATABASE_URL: 'postgres://db/atrium' }]) {
    const config = loadConfig(env);
    assert.equal(config.webhooks.allowPrivate, false, JSON.stringify(env));
    assert.equal(config.exposed, !('DATABASE_URL' in env), JSON.stringify(env));
  }
  assert.equal(loadConfig({ HOST: 'localhost' }).webhooks.allowPrivate, true);
  // Named receivers: addresses, ranges and host names.
  assert.deepEqual(loadConfig({ HOST: '0.0.0.0', ...smtp, ATRIUM_WEBHOOKS_ALLOW_PRIVATE: '127.0.0.1, 10.1.2.0/24,Hooks.Internal,fd00::/8' }).webhooks.allowPrivate, ['127.0.0.1', '10.1.2.0/24', 'hooks.internal', 'fd00::/8']);
  assert.match(configError({ ATRIUM_WEBHOOKS_ALLOW_PRIVATE: '10.0.0.0/33' }), /ATRIUM_WEBHOOKS_ALLOW_PRIVATE=.* has a bad prefix length/);
  assert.match(configError({ ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'not a host' }), /is not an IP address, CIDR range or host name/);
  assert.equal(loadConfig({ HOST: '0.0.0.0', ...smtp, ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' }).webhooks.allowPrivate, true);
});

test('an instance without background work needs PostgreSQL, where other instances can do it', () => {
  assert.match(configError({ ATRIUM_JOBS_WORKER: 'false' }), /ATRIUM_JOBS_WORKER=false needs PostgreSQL \(DATABASE_URL\): with the embedded database this is the only instance/);
  assert.equal(loadConfig({ ATRIUM_JOBS_WORKER: 'false', DATABASE_URL: 'postgres://db/atrium' }).jobs.worker, false);
  assert.equal(loadConfig({}).jobs.worker, true);
  assert.match(configError({ ATRIUM_JOBS_WORKER: 'sometimes', DATABASE_URL: 'postgres://db/atrium' }), /ATRIUM_JOBS_WORKER/);
});

test('the payment provider: the local test provider is the embedded default, none with PostgreSQL, and local there only when allowed', () => {
  const pg = { DATABASE_URL: 'postgres://db/atrium' };
  assert.equal(loadConfig({}).billing.paymentProvider, 'local');
  assert.equal(loadConfig(pg).billing.paymentProvider, 'none', 'nobody buys credits with a test card on a shared server');
  assert.equal(loadConfig({ ...pg, ATRIUM_BILLING_ENFORCED: 'true' }).billing.paymentProvider, 'none');
  assert.match(configError({ ...pg, ATRIUM_PAYMENT_PROVIDER: 'local' }), /ATRIUM_PAYMENT_PROVIDER=local takes test cards for credits: with DATABASE_URL it needs ATRIUM_PAYMENT_LOCAL_ALLOWED=true/);
  assert.equal(loadConfig({ ...pg, ATRIUM_PAYMENT_PROVIDER: 'local', ATRIUM_PAYMENT_LOCAL_ALLOWED: 'true' }).billing.paymentProvider, 'local');
  assert.equal(loadConfig({ ATRIUM_PAYMENT_PROVIDER: 'none' }).billing.paymentProvider, 'none');
  assert.match(configError({ ATRIUM_PAYMENT_PROVIDER: 'paypal' }), /ATRIUM_PAYMENT_PROVIDER/);
});

test('the development mailbox is refused on an address that serves the network', () => {
  for (const host of ['0.0.0.0', '::', '192.168.1.10', 'atrium.example.com', '::ffff:10.0.0.1']) {
    const message = configError({ HOST: host });
    assert.match(message, new RegExp(`HOST=${host.replaceAll('.', '\\.')} serves the network, but the development mailbox \\(/dev/mail\\) is on`));
    assert.match(message, /password-reset links/, 'says why');
    assert.match(message, /Set ATRIUM_SMTP_URL .*, or HOST=127\.0\.0\.1 .*, or ATRIUM_DEV_MAILBOX=false with ATRIUM_EMAIL_LOGIN=false/, 'says what to set');
  }
  assert.match(configError({ HOST: '0.0.0.0', ATRIUM_EMAIL_LOGIN: 'false' }), /or ATRIUM_DEV_MAILBOX=false$/);
  for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) assert.equal(loadConfig({ HOST: host }).mail.transport, 'outbox', host);
  // Off the mailbox, any address.
  assert.equal(loadConfig({ HOST: '0.0.0.0', ATRIUM_SMTP_URL: 'smtp://mail:25' }).host, '0.0.0.0');
  assert.equal(loadConfig({ HOST: '0.0.0.0', ATRIUM_DEV_MAILBOX: 'false', ATRIUM_EMAIL_LOGIN: 'false' }).host, '0.0.0.0');
  assert.equal(loadConfig({ HOST: '::', DATABASE_URL: 'postgres://db/atrium' }).host, '::');
});

test('the redacted summary shows every effective setting as written, and no secret', () => {
  const secrets = ['db-password-1', 'smtp-password-1', 'upstream-secret-1', 'sk-openai-1', 'sk-ant-1', 'sk_test_stripe1', 'whsec_stripe1', KEY];
  const summary = describeConfig(loadConfig({
    DATABASE_URL: 'postgres://atrium:db-password-1@db.internal:5432/atrium',
    ATRIUM_SMTP_URL: 'smtps://mailer:smtp-password-1@mail.example.com:465',
    ATRIUM_SECRET_KEY: KEY,
    ATRIUM_OIDC_PROVIDERS: JSON.stringify([{ id: 'idp', issuer: 'https://idp.example', client_id: 'client-1', client_secret: 'upstream-secret-1', label: 'IdP' }]),
    ATRIUM_JOBS_LEASE_SECONDS: '45',
    ATRIUM_ROOM_SERVER_URL: 'https://rooms.internal',
    ATRIUM_OPENAI_API_KEY: 'sk-openai-1',
    ATRIUM_ANTHROPIC_API_KEY: 'sk-ant-1',
    ATRIUM_S3_BUCKET: 'atrium-files',
    ATRIUM_S3_ENDPOINT: 'https://minio.internal:9000',
    ATRIUM_BILLING_PRICES_FILE: '/etc/atrium/prices.json',
    ATRIUM_STRIPE_SECRET_KEY: 'sk_test_stripe1',
    ATRIUM_STRIPE_WEBHOOK_SECRET: 'whsec_stripe1',
  }));
  const text = JSON.stringify(summary);
  for (const value of secrets) assert.ok(!text.includes(value), `${value} is not shown`);
  assert.equal(summary.DATABASE_URL, 'postgres://atrium:[redacted]@db.internal:5432/atrium');
  assert.equal(summary.ATRIUM_SMTP_URL, 'smtps://mailer:[redacted]@mail.example.com:465');
  assert.equal(summary.ATRIUM_SECRET_KEY, '[redacted]');
  assert.deepEqual(JSON.parse(summary.ATRIUM_OIDC_PROVIDERS!), [{ id: 'idp', issuer: 'https://idp.example', client_id: 'client-1', client_secret: '[redacted]', label: 'IdP' }]);
  assert.equal(summary.ATRIUM_JOBS_LEASE_SECONDS, '45');
  assert.equal(summary.ATRIUM_WEBHOOKS_RETRY_SCHEDULE, '5,300,1800,7200,18000,36000,36000');
  assert.equal(summary.HOST, '127.0.0.1');
  // Every setting with a value is there; unset ones are left out.
  assert.deepEqual(Object.keys(summary).sort(), listSettings(SETTINGS).map((s) => s.env).sort());
  const unset = describeConfig(loadConfig({}));
  for (const name of ['DATABASE_URL', 'ATRIUM_SMTP_URL', 'ATRIUM_SECRET_KEY', 'ATRIUM_OPENAI_API_KEY']) assert.ok(!(name in unset), name);

  // A password with an unescaped @ is hidden whole; user info without a password shows as is.
  const odd = describeConfig(loadConfig({ DATABASE_URL: 'postgres://atrium:p@ss@db/atrium', ATRIUM_SMTP_URL: 'smtp://relay@mail:25' }));
  assert.equal(odd.DATABASE_URL, 'postgres://atrium:[redacted]@db/atrium');
  assert.equal(odd.ATRIUM_SMTP_URL, 'smtp://relay@mail:25');
});

test('every entry names a distinct variable and documents itself', () => {
  const settings = listSettings(SETTINGS);
  const names = settings.map((s) => s.env);
  assert.equal(new Set(names).size, names.length, 'variable names are unique');
  for (const s of settings) {
    assert.match(s.env, /^[A-Z][A-Z0-9_]*$/, s.env);
    assert.match(s.description, /[.)]$/, `${s.env}: a description in sentences`);
    assert.ok(s.group && s.kind.expects && s.default.doc, s.env);
  }
  for (const name of ['ATRIUM_SECRET_KEY', 'ATRIUM_SMTP_URL', 'ATRIUM_OIDC_PROVIDERS', 'DATABASE_URL', 'ATRIUM_OPENAI_API_KEY', 'ATRIUM_ANTHROPIC_API_KEY']) {
    assert.ok(settings.find((s) => s.env === name)?.secret, `${name} is secret`);
  }
});

test("the README's settings section is up to date", () => {
  const readme = readFileSync(README, 'utf8');
  assert.ok(readme === withSettingsSection(readme, renderSettingsSection()), 'README.md settings section is stale: run `npm run docs:settings` and commit the result');
  for (const s of listSettings(SETTINGS)) assert.match(readme, new RegExp(`\\| \`${s.env}\` \\|`), `${s.env} is listed`);
});

test('mail domains: lower-case DNS names, each once; none by default', () => {
  assert.deepEqual(loadConfig({}).mailboxes.domains, []);
  assert.deepEqual(loadConfig({ ATRIUM_MAIL_DOMAINS: 'mail.example.com, example.org' }).mailboxes.domains, ['mail.example.com', 'example.org']);
  assert.match(configError({ ATRIUM_MAIL_DOMAINS: 'Mail.Example.com' }), /ATRIUM_MAIL_DOMAINS.*"Mail.Example.com" is not a lower-case DNS name/);
  assert.match(configError({ ATRIUM_MAIL_DOMAINS: '10.0.0.1' }), /ATRIUM_MAIL_DOMAINS/);
  assert.match(configError({ ATRIUM_MAIL_DOMAINS: 'a.io,a.io' }), /listed twice/);
});

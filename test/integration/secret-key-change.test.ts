// Changing ATRIUM_SECRET_KEY, as docs/operations.md tells an operator to: the new key with the old
// one in ATRIUM_SECRET_KEY_FALLBACKS, `atrium keys reencrypt` (reencryptStored), then the new key
// alone. Every family that stores something encrypted has a value here; the database is searched for
// anything shaped like an encrypted value, so a column nobody declared (`Module.sealed`) fails the
// test rather than becoming unreadable at an operator's site.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import type * as Sdk from '@meshagent/meshagent';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import postgres from 'postgres';
import { reencryptStored } from '../../src/cli/keys.ts';
import { sealedColumns } from '../../src/main.ts';
import { issueParticipantToken } from '../../src/modules/participant-tokens/service.ts';
import * as factorsStore from '../../src/modules/users/factors-store.ts';
import { columnName, reencryptSealed } from '../../src/platform/crypto/sealed.ts';
import { SecretBox } from '../../src/platform/crypto/secrets.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { totpCode } from '../support/factors.ts';
import { authorizationRequest, codeIn, discover, EMAIL_LOGIN_ENV, FormBrowser, insertClient, pageError, signInAndConsent, waitForMail, type Page, type TestClient } from '../support/oauth.ts';
import { TOOL_TEMPLATE } from '../support/service-templates.ts';
import { call, createTenant, forEachEngine, freePort, isolatedDatabase, startTestService, type IsolatedDatabase, type Tenant, type TestService } from '../support/service.ts';

// The official SDK, whose ParticipantToken.toJwt({ apiKey }) signs with the key's secret (HS256).
const { ParticipantToken, ParticipantGrant } = createRequire(import.meta.url)('@meshagent/meshagent') as typeof Sdk;

const OLD = Buffer.alloc(32, 21);
const NEW = Buffer.alloc(32, 22);
const STRAY = Buffer.alloc(32, 23);
const b64 = (text: string) => Buffer.from(text).toString('base64');

/** An encrypted value as SecretBox writes it: `v1.<96-bit IV>.<128-bit tag>.<data>`. */
const BOX = 'v1\\.[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]*';

forEachEngine('changing ATRIUM_SECRET_KEY', (engine) => {
  let database: IsolatedDatabase;
  let service: TestService | undefined;
  let tenant: Tenant;
  let client: TestClient;
  /** Signed in before the change: `active` comes back while the old key is a fallback, `idle` only afterwards. */
  const browsers: Record<'active' | 'idle', FormBrowser> = {} as never;
  // One address across restarts: the browser's cookies and the OAuth issuer are the origin's.
  let origin: Record<string, string>;
  const ids: Record<string, string> = {};
  /** A sign-in by mailed code begun under the old key: its page (CSRF token, interaction cookie) and its code. */
  let pendingCode: { browser: FormBrowser; page: Page; code: string };
  /** The warnings of the service's latest start. */
  let warnings: string[] = [];
  const start = async (env: Record<string, string>) => {
    await service?.stop();
    service = undefined;
    warnings = [];
    const sink = new Writable({ write(chunk, _encoding, done) { warnings.push(JSON.parse(String(chunk)).msg); done(); } });
    service = await startTestService(engine, { ...database.env, ...origin, ...env }, { log: pino({ level: 'warn' }, sink) as unknown as FastifyBaseLogger });
    return service;
  };
  /** Where an authorization request of the browser ends: straight back with a code, or at the sign-in form. */
  const authorize = async (browser: FormBrowser) => {
    const page = await browser.go('GET', (await authorizationRequest(await discover(service!, client), client.redirectUri, 'openid')).url, undefined, client.redirectUri);
    return page.redirectedTo?.includes('code=') ? 'signed in' : /id="password-form"/.test(page.html) ? 'asked to sign in' : `${page.status}`;
  };
  const project = () => `/accounts/projects/${tenant.projectId}`;
  const asAdmin = async (method: string, path: string, json?: unknown) => {
    const r = await call(service!, method, `${project()}${path}`, { token: tenant.apiKey, json });
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  /** Every text or JSON column of the schema holding a value shaped like an encrypted one, with those values by row. */
  const boxesInDatabase = async () => {
    const db = service!.ctx.db;
    const columns = rowsOf<{ table_name: string; column_name: string; data_type: string }>(await db.execute(sql`
      select table_name, column_name, data_type from information_schema.columns
      where table_schema = current_schema() and data_type in ('text', 'jsonb', 'json', 'character varying')`));
    const found = new Map<string, string[]>();
    for (const { table_name: table, column_name: column, data_type: type } of columns) {
      const value = type === 'text' || type === 'character varying' ? sql.identifier(column) : sql`${sql.identifier(column)}::text`;
      const rows = rowsOf<{ value: string }>(await db.execute(sql`select ${value} as value from ${sql.identifier(table)} where ${value} ~ ${BOX}`));
      if (rows.length > 0) found.set(`${table}.${column}`, rows.map((r) => r.value));
    }
    return found;
  };

  /** The plaintext of every declared column's boxes, opened by `box`. */
  const plaintexts = async (box: SecretBox) => {
    const all = new Map<string, string[]>();
    for (const [column, values] of await boxesInDatabase()) all.set(column, values.map((v) => box.decrypt(v)).sort());
    return all;
  };

  before(async () => {
    database = await isolatedDatabase(engine);
    const port = await freePort();
    origin = { PORT: String(port), ATRIUM_PUBLIC_URL: `http://127.0.0.1:${port}`, ...EMAIL_LOGIN_ENV };
    await start({ ATRIUM_SECRET_KEY: OLD.toString('base64') });
    tenant = await createTenant(service!, 'rekey');
    // Browsers signed in at the sign-in pages: their session cookies are signed under the old key.
    client = await insertClient(service!, tenant.projectId);
    for (const name of ['active', 'idle'] as const) {
      const browser = browsers[name] = new FormBrowser(service!.url);
      await signInAndConsent(browser, await authorizationRequest(await discover(service!, client), client.redirectUri, 'openid'), client.redirectUri, tenant.email, tenant.password);
      assert.equal(await authorize(browser), 'signed in');
    }
    const coded = new FormBrowser(service!.url);
    const login = await coded.go('GET', (await authorizationRequest(await discover(service!, client), client.redirectUri, 'openid')).url, undefined, client.redirectUri);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;
    const page = await coded.submit(await coded.go('GET', `/interaction/${uid}/code`), '/code', { email: tenant.email });
    assert.match(page.html, /Enter your code/);
    pendingCode = { browser: coded, page, code: codeIn((await waitForMail(service!, tenant.email, /sign-in code/)).text) };
    await asAdmin('POST', '/rooms', { name: 'lobby' });
    ids.secret = (await asAdmin('POST', '/secrets', { name: 'openai', type: 'keys', data_base64: b64('{"OPENAI_API_KEY":"sk-before"}') })).id;
    await asAdmin('POST', '/rooms/lobby/secrets', { secret_id: 'github', data_base64: b64('room-token-before') });
    ids.webhook = (await asAdmin('POST', '/webhooks', { name: 'hook', url: 'https://hooks.example.com/atrium', events: ['room.started'], secret: 'whsec-before-0123456789' })).id;
    // A rotation keeps the old secret signing for a while: both columns hold one.
    await asAdmin('POST', `/webhooks/${ids.webhook}/rotate-secret`, { overlap_seconds: 3600 });
    await asAdmin('POST', '/external-oauth', { oauth: { authorization_endpoint: 'https://idp.example.com/authorize', token_endpoint: 'https://idp.example.com/token' }, client_id: 'agents', client_secret: 'upstream-before' });
    await asAdmin('POST', '/services', { template: TOOL_TEMPLATE, values: { name: 'tool', token: 'obscure-before' } });
    // An authenticator app, and another waiting for its confirmation.
    const { secrets, db } = service!.ctx;
    await factorsStore.setPendingTotp(db, tenant.userId, secrets.encrypt('JBSWY3DPEHPK3PXP'));
    const [pending] = rowsOf<{ pending_secret: string }>(await db.execute(sql`select pending_secret from user_totp where user_id = ${tenant.userId}`));
    assert.ok(await factorsStore.confirmTotp(db, tenant.userId, pending!.pending_secret, 1));
    await factorsStore.setPendingTotp(db, tenant.userId, secrets.encrypt('KRUGS4ZANFZSA5DIMU'));
  });
  after(async () => {
    await service?.stop();
    await database?.drop();
  });

  test('every column holding encrypted values is declared, and this fixture fills each one', async () => {
    const declared = sealedColumns().flatMap((s) => s.columns.map((c) => columnName(s, c))).sort();
    assert.deepEqual([...(await boxesInDatabase()).keys()].sort(), declared);
  });

  test('new key with the old as fallback: everything reads, sessions hold; reencrypt moves every value once; then the new key alone reads them all', async () => {
    const before = await plaintexts(new SecretBox(OLD));
    await start({ ATRIUM_SECRET_KEY: NEW.toString('base64'), ATRIUM_SECRET_KEY_FALLBACKS: OLD.toString('base64') });

    assert.ok(warnings.some((w) => /ATRIUM_SECRET_KEY_FALLBACKS lists 1 previous key\(s\): once `atrium keys reencrypt` has run, remove it/.test(w)), warnings.join('\n'));
    assert.equal(await authorize(browsers.active), 'signed in', 'a session signed under the old key still holds, and is signed again under the new one');
    // The code, its form's CSRF token and the interaction's cookie, all from before the change; then
    // the authenticator app, whose secret the fallback opens.
    const entered = await pendingCode.browser.submit(pendingCode.page, '/code/verify', { code: pendingCode.code }, client.redirectUri);
    assert.match(entered.html, /Confirm it is you with your second factor/, `${entered.status} ${pageError(entered.html) ?? ''}`);
    const verified = await pendingCode.browser.submit(entered, '/factor/totp', { code: totpCode('JBSWY3DPEHPK3PXP') }, client.redirectUri);
    assert.match(verified.html, /\/consent"/, `${verified.status} ${pageError(verified.html) ?? ''}`);
    const allowed = await pendingCode.browser.submit(verified, '/consent', { decision: 'allow' }, client.redirectUri);
    assert.ok(allowed.redirectedTo?.includes('code='), `${allowed.status} ${pageError(allowed.html) ?? ''}`);
    // Read through the fallback, as the service serves them.
    assert.equal(Buffer.from((await asAdmin('GET', `/secrets/${ids.secret}`)).data_base64, 'base64').toString(), '{"OPENAI_API_KEY":"sk-before"}');
    const signed = await new ParticipantToken({ name: 'app-user', grants: [ParticipantGrant.fromJson({ name: 'room', scope: 'lobby' })] }).toJwt({ apiKey: tenant.apiKey });
    assert.equal((await call(service!, 'POST', '/api/participant-token/validate', { json: { token: signed } })).status, 200, 'the API key\'s secret opens: a token it signed verifies');

    // A value sealed under a key the service no longer has is reported, and left alone.
    const stray = new SecretBox(STRAY).encrypt('whsec-stray');
    const strayHook = (await asAdmin('POST', '/webhooks', { name: 'stray', url: 'https://hooks.example.com/stray', events: ['room.started'], secret: 'whsec-set-0123456789' })).id as string;
    await service!.ctx.db.execute(sql`update webhooks set secret_encrypted = ${stray} where id = ${strayHook}`);

    const stored = await boxesInDatabase();
    const dry = await reencryptStored(service!.ctx, { dryRun: true });
    assert.deepEqual(await boxesInDatabase(), stored, 'a dry run writes nothing');
    const expected = new Map([...before].map(([column, values]) => [column, values.length]));
    for (const report of dry.columns) {
      assert.equal(report.moved, expected.get(report.column), `${report.column}: each value the old key sealed would move`);
      assert.equal(report.current, 0, report.column);
    }
    assert.equal(dry.unreadable, 1);

    const progress: string[] = [];
    const run = await reencryptStored(service!.ctx, { dryRun: false, progress: (r) => progress.push(r.column) });
    assert.deepEqual(run.columns.map((r) => [r.column, r.moved, r.changed]), dry.columns.map((r) => [r.column, r.moved, 0]));
    assert.equal(run.unreadable, 1);
    assert.deepEqual([...new Set(progress)], run.columns.map((r) => r.column), 'a progress line for every column');
    const [strayRow] = rowsOf<{ secret: string }>(await service!.ctx.db.execute(sql`select secret_encrypted as secret from webhooks where id = ${strayHook}`));
    assert.equal(strayRow!.secret, stray, 'the value no key opens is left as it was');

    const again = await reencryptStored(service!.ctx, { dryRun: false });
    assert.ok(again.columns.every((r) => r.moved === 0 && r.changed === 0), 'a second run moves nothing');
    const entries = rowsOf<{ outcome: string; reason: string }>(await service!.ctx.db.execute(sql`
      select outcome, reason from audit_log where project_id is null and action = 'secret_key.reencrypt' order by seq`));
    assert.equal(entries.length, 2, 'each run that writes leaves an entry in the deployment\'s audit log; the dry run none');
    assert.equal(entries[0]!.outcome, 'failed');
    assert.match(entries[0]!.reason, new RegExp(`^${[...expected.values()].reduce((a, b) => a + b, 0)} values sealed again, 0 changed meanwhile, 1 opened by no key$`));

    await asAdmin('DELETE', `/webhooks/${strayHook}`);
    // The new key alone: the service starts (its signing keys open) and every value reads as before.
    await start({ ATRIUM_SECRET_KEY: NEW.toString('base64') });
    assert.deepEqual(await plaintexts(new SecretBox(NEW)), before);
    assert.equal(Buffer.from((await asAdmin('GET', `/secrets/${ids.secret}`)).data_base64, 'base64').toString(), '{"OPENAI_API_KEY":"sk-before"}');
    assert.equal(Buffer.from((await asAdmin('GET', '/rooms/lobby/secrets/github')).data_base64, 'base64').toString(), 'room-token-before');
    assert.equal((await call(service!, 'POST', '/api/participant-token/validate', { json: { token: signed } })).status, 200);
    assert.ok(!warnings.some((w) => /FALLBACKS/.test(w)), 'no reminder without fallbacks');
    assert.equal(await authorize(browsers.active), 'signed in', 'a session used while the old key was a fallback carries on');
    assert.equal(await authorize(browsers.idle), 'asked to sign in', 'one not used meanwhile ends with the old key');
    // The signing keys opened at start-up under the new key, and sign.
    const minted = await issueParticipantToken(service!.ctx, { projectId: tenant.projectId, name: 'agent', grants: [{ name: 'room', scope: 'lobby' }] as never });
    assert.equal((await call(service!, 'POST', '/api/participant-token/validate', { json: { token: minted } })).status, 200);
  });

  // A row lock held by another transaction parks the command's write until that transaction
  // changes the value and commits: PostgreSQL then re-checks the row, which no longer holds what
  // the command read. (PGlite runs one statement at a time: nothing can interleave there.)
  if (engine === 'postgres') test('a value the service changes while the command runs is left as the service wrote it', async () => {
    const sealed = new SecretBox(NEW, [OLD]);
    const id = (await asAdmin('POST', '/secrets', { name: 'raced', type: 'keys', data_base64: b64('raced-before') })).id as string;
    const db = service!.ctx.db;
    // A secret's value is stored as the base64 of its bytes.
    await db.execute(sql`update secrets set value_encrypted = ${new SecretBox(OLD).encrypt(b64('raced-before'))} where id = ${id}`);
    const other = postgres(database.env.DATABASE_URL!, { max: 2, onnotice: () => {} });
    try {
      const written = sealed.encrypt(b64('raced-after'));
      const locked = other.reserve();
      const tx = await locked;
      await tx`begin`;
      await tx`select 1 from secrets where id = ${id} for update`;
      const running = reencryptSealed(db, sealed, sealedColumns(), { dryRun: false });
      // Until the command waits on that row's lock.
      for (let i = 0; i < 200; i += 1) {
        const [waiting] = await other`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
        if (waiting!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await tx`update secrets set value_encrypted = ${written} where id = ${id}`;
      await tx`commit`;
      tx.release();
      const report = (await running).find((r) => r.column === 'secrets.value_encrypted')!;
      assert.deepEqual([report.moved, report.changed], [0, 1], JSON.stringify(report));
      const [row] = rowsOf<{ value: string }>(await db.execute(sql`select value_encrypted as value from secrets where id = ${id}`));
      assert.equal(row!.value, written, 'the service\'s write stands');
      assert.equal(Buffer.from((await asAdmin('GET', `/secrets/${id}`)).data_base64, 'base64').toString(), 'raced-after');
    } finally {
      await other.end({ timeout: 5 });
    }
  });
});

// The audit log, driven by the route table like the isolation walk: every state-changing route of a
// project is called by its project's admin (each success leaves exactly one entry naming that admin,
// the action and its target, written with the change) and by a member without the role it needs
// (each refusal leaves one `refused` entry); no entry holds any of the secrets planted or answered
// on the way. Then the list's filters and paging, its permission, and the table's append-only rule.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { AUDIT_DOC, renderAuditDoc } from '../../scripts/audit-doc.ts';
import { keysCommand } from '../../src/cli/keys.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { auditAction } from '../../src/platform/http/audit.ts';
import { apiRoutes, pathParams, type RouteInfo } from '../support/routes.ts';
import { whileInsertsFail } from '../support/failing-inserts.ts';
import { LOCAL_PAYMENTS_ENV } from '../support/payments.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { createFixtures, paramValue, routePath, validBody } from '../support/walk.ts';

/** What a command prints, while it runs. */
function captureStdout() {
  const write = process.stdout.write.bind(process.stdout);
  let text = '';
  process.stdout.write = ((chunk: string) => { text += chunk; return true; }) as typeof process.stdout.write;
  return { text: () => text, restore: () => { process.stdout.write = write; } };
}

interface Row {
  seq: string | number;
  actor_type: string;
  actor_id: string | null;
  credential_kind: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: string;
  reason: string | null;
  request_id: string | null;
  client_address: string | null;
  user_agent: string | null;
}

forEachEngine('audit log', (engine) => {
  let service: TestService;
  let a: Tenant;
  let keyId: string;
  /** A key holding only `member`: refused by every route that needs more. */
  let memberKey: string;
  let memberKeyId: string;
  let routes: RouteInfo[];
  /** Secret values planted in the project or answered by the walk: no entry may hold one. */
  const canaries = new Set<string>();

  const entries = async (projectId: string, afterSeq = 0): Promise<Row[]> =>
    [...rowsOf<Row>(await service.ctx.db.execute(sql`select * from audit_log where project_id = ${projectId} and seq > ${afterSeq} order by seq`))];
  const lastSeq = async (projectId: string) =>
    Number(rowsOf<{ n: string | number | null }>(await service.ctx.db.execute(sql`select max(seq) as n from audit_log where project_id = ${projectId}`))[0]?.n ?? 0);

  before(async () => {
    // The fixtures buy credits: the local payment provider, allowed on PostgreSQL too.
    service = await startTestService(engine, LOCAL_PAYMENTS_ENV, { workers: () => [] });
    a = await createTenant(service, 'audit');
    canaries.add(a.apiKey);
    canaries.add(a.userToken);
    keyId = (await service.ctx.auth.authenticate(a.apiKey))!.credentialId;
    const project = `/accounts/projects/${a.projectId}`;
    const created = await call(service, 'POST', `${project}/api-keys`, { token: a.apiKey, json: { name: 'member key', roles: ['member'] } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    memberKey = created.body.value;
    memberKeyId = created.body.id;
    canaries.add(memberKey);
    // A secret's value, a webhook's signing secret and an OAuth client's secret.
    const secretValue = `canary-secret-${randomUUID()}`;
    canaries.add(secretValue);
    const secret = await call(service, 'POST', `${project}/secrets`, { token: a.apiKey, json: { name: 'canary', type: 'keys', data_base64: Buffer.from(secretValue).toString('base64') } });
    assert.equal(secret.status, 201, JSON.stringify(secret.body));
    canaries.add(Buffer.from(secretValue).toString('base64'));
    const hookSecret = `canary-hook-${randomUUID()}`;
    canaries.add(hookSecret);
    const hook = await call(service, 'POST', `${project}/webhooks`, { token: a.apiKey, json: { name: 'canary hook', url: 'https://receiver.example.com/audit', events: ['room.started'], secret: hookSecret } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const rotated = await call(service, 'POST', `${project}/webhooks/${hook.body.id}/rotate-secret`, { token: a.apiKey, json: {} });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const client = await call(service, 'POST', `${project}/oauth/clients`, {
      token: a.apiKey,
      json: { name: 'canary client', grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['https://app.example.com/callback'], scope: 'openid' },
    });
    assert.equal(client.status, 201, JSON.stringify(client.body));
    // Each of these answers names its secret once; each must be among the canaries.
    for (const [answer, field] of [[rotated.body, 'secret'], [client.body, 'client_secret']] as const) {
      const before = canaries.size;
      collectSecrets(answer);
      assert.ok(canaries.size > before, `the ${field} of ${JSON.stringify(Object.keys(answer))} is a canary`);
    }
    const configOf = (route: RouteInfo) => service.routes.find((r) => r.method === route.method && r.url === route.url)!.config as Parameters<typeof auditAction>[0]['config'];
    routes = apiRoutes(service).filter((route) => auditAction({ method: route.method, url: route.url, config: configOf(route) }) !== undefined);
  });
  after(() => service?.stop());

  /** Every long text of an answer under a name that says secret, value or key: answered once, never to be logged. */
  function collectSecrets(body: unknown): void {
    if (body === null || typeof body !== 'object') return;
    for (const [name, value] of Object.entries(body)) {
      if (typeof value === 'string' && value.length >= 16 && /secret|value|token|key|password/i.test(name) && !/_id$|^id$/.test(name)) canaries.add(value);
      else collectSecrets(value);
    }
  }

  test('docs/audit-log.md is up to date', () => {
    assert.ok(readFileSync(AUDIT_DOC, 'utf8') === renderAuditDoc(service.routes), 'docs/audit-log.md is stale: run `npm run docs:audit` and commit the result');
  });

  test('the walk covers the administration API', () => {
    assert.ok(routes.length > 40, `only ${routes.length} audited routes`);
    for (const [method, url] of [['POST', '/accounts/projects/:project_id/api-keys'], ['DELETE', '/accounts/projects/:project_id/api-keys/:id'], ['PUT', '/accounts/projects/:project_id/users/:user_id']]) {
      assert.ok(routes.some((r) => r.method === method && r.url === url), `${method} ${url} is audited`);
    }
    // Reads are not, nor a connect, which changes nothing.
    assert.ok(!routes.some((r) => r.method === 'GET' || r.url.endsWith('/connect')));
  });

  test('each successful call leaves exactly one entry: the admin, the action, its target', async () => {
    const failures: string[] = [];
    let succeeded = 0;
    for (const route of routes) {
      const values = await createFixtures(service, a, route);
      const path = routePath(route, values);
      const from = await lastSeq(a.projectId);
      const r = await call(service, route.method, path, { token: a.apiKey, ...validBody(route), headers: { 'user-agent': 'audit-walk/1' } });
      collectSecrets(r.body);
      await service.ctx.audit.flush();
      const written = await entries(a.projectId, from);
      const what = `${route.method} ${route.url} (${r.status})`;
      if (r.status >= 400) {
        // An answer refused for its input (not by the authority check) leaves nothing.
        if (written.length > 0) failures.push(`${what}: failed but left ${JSON.stringify(written)}`);
        continue;
      }
      succeeded += 1;
      if (written.length !== 1) {
        failures.push(`${what}: ${written.length} entries`);
        continue;
      }
      const [entry] = written as [Row];
      const params = pathParams(route.url).filter((p) => p !== 'project_id');
      const named = params.map((p) => paramValue(route, values, p)).filter((v): v is string => v !== undefined).map((v) => decodeURIComponent(v));
      const createdId = (r.body as { id?: unknown } | null)?.id;
      // The resource the path names, or the one the call created.
      const targets = [...named, ...(typeof createdId === 'string' ? [createdId] : [])];
      const targetOk = targets.length === 0 || targets.includes(entry.target_id ?? '');
      if (entry.outcome !== 'succeeded' || entry.actor_type !== 'api_key' || entry.actor_id !== keyId || entry.credential_kind !== 'api_key'
        || !/^[a-z_]+\.[a-z_]+$/.test(entry.action) || !targetOk || entry.user_agent !== 'audit-walk/1' || entry.client_address === null
        || entry.request_id !== r.headers.get('x-request-id')) {
        failures.push(`${what}: ${JSON.stringify(entry)}`);
      }
    }
    assert.ok(succeeded > 30, `only ${succeeded} routes succeeded`);
    assert.deepEqual(failures, []);
  });

  test('each call refused by the authority check leaves one refused entry, and nothing else', async () => {
    const failures: string[] = [];
    let refused = 0;
    for (const route of routes) {
      const values = await createFixtures(service, a, route);
      const path = routePath(route, values);
      const from = await lastSeq(a.projectId);
      const r = await call(service, route.method, path, { token: memberKey, ...validBody(route) });
      await service.ctx.audit.flush();
      const written = await entries(a.projectId, from);
      const what = `${route.method} ${route.url} (${r.status})`;
      if (r.status === 403) {
        refused += 1;
        const [entry] = written as [Row];
        if (written.length !== 1 || entry.outcome !== 'refused' || entry.actor_id !== memberKeyId || !entry.reason) failures.push(`${what}: ${JSON.stringify(written)}`);
      } else if (r.status < 400) {
        if (written.length !== 1 || written[0]!.outcome !== 'succeeded' || written[0]!.actor_id !== memberKeyId) failures.push(`${what}: ${JSON.stringify(written)}`);
      }
    }
    assert.ok(refused > 30, `only ${refused} routes refused a member`);
    assert.deepEqual(failures, []);
  });

  test('no entry holds a secret', async () => {
    await service.ctx.audit.flush();
    const all = rowsOf<Record<string, unknown>>(await service.ctx.db.execute(sql`select * from audit_log`)).map((row) => JSON.stringify(row));
    assert.ok(all.length > 60);
    assert.ok(canaries.size > 5, `${canaries.size} canaries`);
    const leaks = [...canaries].flatMap((canary) => all.filter((row) => row.includes(canary)).map((row) => `${canary.slice(0, 8)}…: ${row}`));
    assert.deepEqual(leaks, []);
  });

  test('strangers and missing credentials leave nothing in the project\'s log', async () => {
    const b = await createTenant(service, 'stranger');
    const from = await lastSeq(a.projectId);
    assert.equal((await call(service, 'POST', `/accounts/projects/${a.projectId}/api-keys`, { token: b.apiKey, json: { name: 'x' } })).status, 404);
    assert.equal((await call(service, 'POST', `/accounts/projects/${a.projectId}/api-keys`, { json: { name: 'x' } })).status, 401);
    await service.ctx.audit.flush();
    assert.deepEqual(await entries(a.projectId, from), []);
  });

  test('an entry that cannot be written takes its change with it: both or neither', async () => {
    const { db } = service.ctx;
    const project = `/accounts/projects/${a.projectId}`;
    // The entry of one action fails.
    await whileInsertsFail(db, 'audit_log', `new.action = 'api_key.create'`, 'the entry cannot be written', async () => {
      const keys = async () => (await call(service, 'GET', `${project}/api-keys`, { token: a.apiKey })).body.keys.length;
      const before = await keys();
      const from = await lastSeq(a.projectId);
      const r = await call(service, 'POST', `${project}/api-keys`, { token: a.apiKey, json: { name: 'never made' } });
      assert.equal(r.status, 500);
      assert.equal(await keys(), before, 'the key was not made');
      assert.deepEqual(await entries(a.projectId, from), []);
    });
  });

  test('GET audit-log: filters, continuation paging, and its permission', async () => {
    const project = `/accounts/projects/${a.projectId}`;
    await service.ctx.audit.flush();
    const first = await call(service, 'GET', `${project}/audit-log?page_size=5&action=room.*`, { token: a.apiKey });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.entries.length, 5);
    assert.ok(first.body.entries.every((e: { action: string }) => e.action.startsWith('room.')));
    const second = await call(service, 'GET', `${project}/audit-log?page_size=5&action=room.*&continuation_token=${encodeURIComponent(first.body.continuation_token)}`, { token: a.apiKey });
    assert.equal(second.status, 200);
    const ids = [...first.body.entries, ...second.body.entries].map((e: { id: string }) => e.id);
    assert.equal(new Set(ids).size, ids.length, 'pages do not overlap');
    assert.ok(first.body.entries.at(-1).at >= second.body.entries[0].at, 'newest first');
    // A token is bound to its filters.
    assert.equal((await call(service, 'GET', `${project}/audit-log?action=api_key.create&continuation_token=${encodeURIComponent(first.body.continuation_token)}`, { token: a.apiKey })).status, 400);
    const refusals = await call(service, 'GET', `${project}/audit-log?outcome=refused&actor=${memberKeyId}`, { token: a.apiKey });
    assert.ok(refusals.body.entries.length > 0 && refusals.body.entries.every((e: any) => e.outcome === 'refused' && e.actor.id === memberKeyId));
    const future = await call(service, 'GET', `${project}/audit-log?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`, { token: a.apiKey });
    assert.deepEqual(future.body.entries, []);
    const byTarget = await call(service, 'GET', `${project}/audit-log?target=${memberKeyId}`, { token: a.apiKey });
    assert.ok(byTarget.body.entries.some((e: any) => e.action === 'api_key.create' && e.target.id === memberKeyId));
    // Admins hold the permission; a member does not until granted audit_reader.
    assert.equal((await call(service, 'GET', `${project}/audit-log`, { token: memberKey })).status, 403);
    const reader = await call(service, 'POST', `${project}/api-keys`, { token: a.apiKey, json: { name: 'reader', roles: ['audit_reader'] } });
    assert.equal((await call(service, 'GET', `${project}/audit-log`, { token: reader.body.value })).status, 200);
  });

  // The command opens the database itself: the embedded one is held by the running service.
  if (engine === 'postgres') test('a signing-key rotation at the server\'s shell is a deployment event, with its key', async () => {
    const written = captureStdout();
    const code = await keysCommand(['rotate'], () => service.ctx.config).finally(written.restore);
    assert.equal(code, 0);
    const { kid } = JSON.parse(written.text()) as { kid: string };
    const [entry] = rowsOf<Row & { project_id: string | null }>(await service.ctx.db.execute(sql`select * from audit_log where action = 'signing_key.rotate' and target_id = ${kid}`));
    assert.deepEqual([entry?.project_id, entry?.actor_type, entry?.credential_kind], [null, 'operator', 'server_host']);
  });

  test('the table is append-only: UPDATE, DELETE and TRUNCATE are refused outside retention', async () => {
    const { db } = service.ctx;
    const appendOnly = (error: Error & { cause?: Error }) => /append-only/.test(error.cause?.message ?? error.message);
    await assert.rejects(db.execute(sql`update audit_log set action = 'x' where project_id = ${a.projectId}`), appendOnly);
    await assert.rejects(db.execute(sql`delete from audit_log where project_id = ${a.projectId}`), appendOnly);
    await assert.rejects(db.execute(sql`truncate audit_log`), appendOnly);
    // Retention's own transactions may delete: entries older than the setting (90 days by default) go.
    await db.execute(sql`insert into audit_log (id, at, project_id, actor_type, action, outcome) values (${randomUUID()}, now() - interval '91 days', ${a.projectId}, 'api_key', 'room.create', 'succeeded')`);
    const before = (await entries(a.projectId)).length;
    assert.equal(service.ctx.config.retention.auditRetentionMs, 90 * 86_400_000);
    const cutoff = new Date(Date.now() - service.ctx.config.retention.auditRetentionMs);
    assert.equal(await service.ctx.audit.prune(cutoff, { batchSize: 10, maxBatches: 10 }), 1);
    assert.equal((await entries(a.projectId)).length, before - 1);
  });
});

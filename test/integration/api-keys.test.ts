// API keys: create (value once, in the SDK's format), list (never values), revoke (at once, here and on
// every other instance within the auth cache lifetime), narrowed keys.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

// The SDK's ESM build is not loadable by Node; its CommonJS build is what applications running on Node get.
const sdk = createRequire(import.meta.url)('@meshagent/meshagent') as {
  parseApiKey(key: string): { id: string; projectId: string; secret: string };
  encodeApiKey(key: { id: string; projectId: string; secret: string }): string;
};

const KEY_FIELDS = ['created_at', 'created_by', 'description', 'id', 'name', 'roles'];

forEachEngine('api keys', (engine) => {
  let service: TestService;
  before(async () => {
    service = await startTestService(engine);
  });
  after(() => service?.stop());

  const keys = (t: Tenant) => `/accounts/projects/${t.projectId}/api-keys`;
  const create = async (t: Tenant, json: unknown, token = t.apiKey) => call(service, 'POST', keys(t), { token, json });

  test("create returns the value once, in the SDK's format", async () => {
    const t = await createTenant(service, 'keys');
    const created = await create(t, { name: 'ci', description: 'for CI' }, t.userToken);
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), [...KEY_FIELDS, 'value'].sort());
    assert.equal(created.body.name, 'ci');
    assert.equal(created.body.description, 'for CI');
    assert.equal(created.body.roles, null);
    assert.equal(created.body.created_by, t.userId);
    const value: string = created.body.value;
    assert.match(value, /^ma-[A-Za-z0-9._]{22}-[A-Za-z0-9._]{22}-.{16,}$/);
    const parsed = sdk.parseApiKey(value);
    assert.equal(parsed.id, created.body.id);
    assert.equal(parsed.projectId, t.projectId);
    assert.equal(sdk.encodeApiKey(parsed), value);
    // The new key works as a project admin.
    assert.equal((await call(service, 'GET', keys(t), { token: value })).status, 200);

    // An API key (acting as admin) may create keys too; created_by is then null.
    const byKey = await create(t, { name: 'from-key', description: null });
    assert.equal(byKey.status, 201);
    assert.equal(byKey.body.created_by, null);
    assert.equal(byKey.body.description, '');
  });

  test('list returns {keys} and never a value or secret', async () => {
    const t = await createTenant(service, 'listing');
    const created = await create(t, { name: 'listed', roles: ['developer'] });
    const secret = sdk.parseApiKey(created.body.value).secret;
    const listed = await call(service, 'GET', keys(t), { token: t.apiKey });
    assert.equal(listed.status, 200);
    assert.deepEqual(Object.keys(listed.body), ['keys']);
    assert.equal(listed.body.keys.length, 2);
    for (const key of listed.body.keys) assert.deepEqual(Object.keys(key).sort(), KEY_FIELDS);
    const raw = JSON.stringify(listed.body);
    assert.ok(!raw.includes(secret), 'the secret never appears');
    assert.ok(!/value|secret|hash|token/i.test(Object.keys(listed.body.keys[0]).join()), 'no secret-looking fields');
    const mine = listed.body.keys.find((k: { id: string }) => k.id === created.body.id);
    assert.deepEqual(mine.roles, ['developer']);
    // Stable order: oldest first.
    assert.equal(listed.body.keys[1].id, created.body.id);
  });

  test('a revoked key stops working at once on this instance', async () => {
    const t = await createTenant(service, 'revoke');
    const created = await create(t, { name: 'doomed' });
    const value = created.body.value as string;
    // Warm the auth cache.
    assert.equal((await call(service, 'GET', `/accounts/projects/${t.projectId}`, { token: value })).status, 200);
    const deleted = await call(service, 'DELETE', `${keys(t)}/${created.body.id}`, { token: t.apiKey });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { ok: true });
    const after = await call(service, 'GET', `/accounts/projects/${t.projectId}`, { token: value });
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'unauthorized');
    assert.equal(after.headers.get('www-authenticate'), 'Bearer');
    assert.ok(!(await call(service, 'GET', keys(t), { token: t.apiKey })).body.keys.some((k: { id: string }) => k.id === created.body.id));
    assert.equal((await call(service, 'DELETE', `${keys(t)}/${created.body.id}`, { token: t.apiKey })).status, 404);

    // A key may revoke itself.
    const self = await create(t, { name: 'self' });
    assert.equal((await call(service, 'DELETE', `${keys(t)}/${self.body.id}`, { token: self.body.value })).status, 200);
    assert.equal((await call(service, 'GET', keys(t), { token: self.body.value })).status, 401);
  });

  if (engine === 'postgres') {
    test('a revoked key stops working on a second instance within the cache lifetime', async () => {
      const fast = { ATRIUM_AUTH_CACHE_SECONDS: '1' };
      const first = await startTestService(engine, fast);
      const second = await startTestService(engine, { ...fast, DATABASE_URL: first.ctx.config.databaseUrl! });
      try {
        const t = await createTenant(first, 'two-instances');
        const created = await call(first, 'POST', keys(t), { token: t.apiKey, json: { name: 'shared' } });
        const value = created.body.value as string;
        const probe = `/accounts/projects/${t.projectId}`;
        assert.equal((await call(second, 'GET', probe, { token: value })).status, 200, 'the second instance accepts the key');
        assert.equal((await call(first, 'DELETE', `${keys(t)}/${created.body.id}`, { token: t.apiKey })).status, 200);
        assert.equal((await call(first, 'GET', probe, { token: value })).status, 401);
        const revokedAt = Date.now();
        let status = 200;
        while (Date.now() - revokedAt < 3000) {
          // Keep hitting the second instance, as a busy client would (a hit must not extend the cache).
          status = (await call(second, 'GET', probe, { token: value })).status;
          if (status === 401) break;
          await sleep(50);
        }
        assert.equal(status, 401, 'revoked within 3 s on the other instance');
      } finally {
        await Promise.all([first.stop(), second.stop()]);
      }
    });
  }

  test('wrong, malformed and foreign key strings are 401', async () => {
    const t = await createTenant(service, 'forged');
    const other = await createTenant(service, 'forged-other');
    const parsed = sdk.parseApiKey(t.apiKey);
    const probe = `/accounts/projects/${t.projectId}`;
    const forged = [
      sdk.encodeApiKey({ ...parsed, secret: `${parsed.secret.slice(0, -2)}xx` }),
      sdk.encodeApiKey({ ...parsed, projectId: other.projectId }),
      sdk.encodeApiKey({ ...parsed, id: randomUUID() }),
      'ma-short',
      'ma---',
      `${t.apiKey}extra`,
      'not-a-key-at-all',
      'atp_garbage',
    ];
    for (const token of forged) {
      const r = await call(service, 'GET', probe, { token });
      assert.equal(r.status, 401, token);
      assert.equal(r.body.error.code, 'unauthorized');
    }
    assert.equal((await call(service, 'GET', probe, { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } })).status, 401);
    assert.equal((await call(service, 'GET', probe, { headers: { authorization: 'Bearer' } })).status, 401);
  });

  test('a narrowed key gets 403 on admin routes and cannot mint keys beyond its roles', async () => {
    const t = await createTenant(service, 'narrow');
    const narrow = await create(t, { name: 'rooms-only', roles: ['member', 'room_creator'] });
    assert.equal(narrow.status, 201);
    assert.deepEqual(narrow.body.roles, ['member', 'room_creator']);
    const token = narrow.body.value as string;
    const project = `/accounts/projects/${t.projectId}`;
    for (const [method, path, json] of [
      ['GET', keys(t)],
      ['POST', keys(t), { name: 'escalate' }],
      ['POST', keys(t), { name: 'escalate', roles: ['room_creator'] }],
      ['PUT', `${project}/settings`, {}],
      ['POST', `${project}/users`, { user_id: t.userId, roles: ['admin'] }],
      ['DELETE', `${keys(t)}/${narrow.body.id}`],
    ] as [string, string, unknown?][]) {
      const r = await call(service, method, path, { token, json });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.body.error.code, 'forbidden');
    }
    // What the roles allow still works.
    assert.equal((await call(service, 'POST', `${project}/rooms`, { token, json: { name: 'allowed' } })).status, 201);
    assert.equal((await call(service, 'GET', `${project}/rooms/allowed`, { token })).status, 200);
    assert.equal((await call(service, 'GET', `${project}/role`, { token })).body.role, 'member');

    // An admin-narrowed key holds every role by implication, so it may mint narrower keys.
    const adminKey = await create(t, { name: 'admin-narrowed', roles: ['admin'] });
    const minted = await create(t, { name: 'dev', roles: ['developer'] }, adminKey.body.value);
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    assert.equal((await create(t, { name: 'full' }, adminKey.body.value)).status, 201);
  });

  test('bad input is a 4xx naming the problem, and writes nothing', async () => {
    const t = await createTenant(service, 'key-bad');
    const cases: [unknown, number, RegExp][] = [
      ['{"name"', 400, /JSON/i],
      ['[]', 400, /object/],
      [{}, 400, /name is required/],
      [{ name: 5 }, 400, /name/],
      [{ name: '' }, 400, /name/],
      [{ name: 'x'.repeat(201) }, 400, /name/],
      [{ name: 'ok', description: 7 }, 400, /description/],
      [{ name: 'ok', description: 'x'.repeat(2001) }, 400, /description/],
      [{ name: 'ok', roles: [] }, 400, /roles/],
      [{ name: 'ok', roles: 'admin' }, 400, /roles/],
      [{ name: 'ok', roles: ['admin', 'admin'] }, 400, /roles/],
      [{ name: 'ok', roles: ['god'] }, 400, /roles/],
      [{ name: 'ok', description: 'a\u0000b' }, 400, /./],
      [{ name: 'ok', description: 'x'.repeat(1024 * 1024 + 1) }, 413, /./],
    ];
    for (const [json, status, message] of cases) {
      const r = await create(t, json);
      assert.equal(r.status, status, JSON.stringify(json).slice(0, 80));
      assert.match(r.body.error.message, message, JSON.stringify(json).slice(0, 80));
    }
    assert.equal((await call(service, 'GET', keys(t), { token: t.apiKey })).body.keys.length, 1);
    assert.equal((await call(service, 'DELETE', `${keys(t)}/not-a-uuid`, { token: t.apiKey })).status, 400);
    assert.equal((await call(service, 'DELETE', `${keys(t)}/${randomUUID()}`, { token: t.apiKey })).status, 404);
  });
});

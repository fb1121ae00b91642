// Project users: add (roles or legacy flags), list, update, remove, and the last-admin rule.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

interface Member {
  user_id: string;
  email: string;
  roles: string[];
  is_admin: boolean;
  is_developer: boolean;
  can_create_rooms: boolean;
  can_create_agents: boolean;
  can_use_llm_proxy: boolean;
}

forEachEngine('project users', (engine) => {
  let service: TestService;
  before(async () => {
    service = await startTestService(engine);
  });
  after(() => service?.stop());

  const users = (t: Tenant) => `/accounts/projects/${t.projectId}/users`;
  const list = async (t: Tenant, query = ''): Promise<{ users: Member[]; total: number }> => {
    const r = await call(service, 'GET', `${users(t)}${query}`, { token: t.apiKey });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const memberOf = async (t: Tenant, userId: string) => (await list(t)).users.find((u) => u.user_id === userId);

  test('add by user_id with roles, list, update, remove', async () => {
    const t = await createTenant(service, 'members');
    const u = await createUserWithToken(service, 'alice');
    const added = await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: u.userId, roles: ['developer', 'llm_proxy_user'] } });
    assert.equal(added.status, 200);
    assert.deepEqual(added.body, { ok: true, status: 'added', user_id: u.userId });
    const m = await memberOf(t, u.userId);
    assert.ok(m);
    assert.equal(m.email, u.email);
    assert.deepEqual([...m.roles].sort(), ['developer', 'llm_proxy_user']);
    assert.equal(m.is_developer, true);
    assert.equal(m.can_use_llm_proxy, true);
    assert.equal(m.is_admin, false);

    const updated = await call(service, 'PUT', `${users(t)}/${u.userId}`, { token: t.apiKey, json: { roles: ['room_creator'] } });
    assert.equal(updated.status, 200);
    const after = await memberOf(t, u.userId);
    assert.deepEqual(after?.roles, ['room_creator']);
    assert.equal(after?.is_developer, false);
    assert.equal(after?.can_create_rooms, true);

    const removed = await call(service, 'DELETE', `${users(t)}/${u.userId}`, { token: t.apiKey });
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body, { ok: true });
    assert.equal(await memberOf(t, u.userId), undefined);
    assert.equal((await call(service, 'DELETE', `${users(t)}/${u.userId}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${users(t)}/${u.userId}`, { token: t.apiKey, json: { roles: ['member'] } })).status, 404);
  });

  test('legacy flags map to roles on add and update', async () => {
    const t = await createTenant(service, 'flags');
    const u = await createUserWithToken(service, 'bob');
    const body = { project_id: t.projectId, user_id: u.userId, is_admin: false, is_developer: true, can_create_rooms: true, can_create_agents: null, can_use_llm_proxy: false };
    assert.equal((await call(service, 'POST', users(t), { token: t.apiKey, json: body })).status, 200);
    let m = await memberOf(t, u.userId);
    assert.deepEqual([...m!.roles].sort(), ['developer', 'room_creator']);

    // true adds, false removes, absent or null keeps.
    await call(service, 'PUT', `${users(t)}/${u.userId}`, { token: t.apiKey, json: { is_developer: false, can_create_agents: true, can_use_llm_proxy: true } });
    m = await memberOf(t, u.userId);
    assert.deepEqual([...m!.roles].sort(), ['agent_creator', 'llm_proxy_user', 'room_creator']);
    assert.deepEqual([m!.is_developer, m!.can_create_agents, m!.can_use_llm_proxy, m!.can_create_rooms], [false, true, true, true]);

    await call(service, 'PUT', `${users(t)}/${u.userId}`, { token: t.apiKey, json: { is_admin: true } });
    m = await memberOf(t, u.userId);
    assert.equal(m!.is_admin, true);
    const role = await call(service, 'GET', `/accounts/projects/${t.projectId}/role`, { token: u.token });
    assert.equal(role.body.role, 'admin');

    // Removing every role leaves a plain member.
    await call(service, 'PUT', `${users(t)}/${u.userId}`, { token: t.apiKey, json: { roles: [] } });
    assert.deepEqual((await memberOf(t, u.userId))!.roles, ['member']);

    // Adding someone already in the project replaces their roles.
    await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: u.userId, can_create_rooms: true } });
    assert.deepEqual([...(await memberOf(t, u.userId))!.roles].sort(), ['member', 'room_creator']);

    const mismatch = await call(service, 'POST', users(t), { token: t.apiKey, json: { project_id: randomUUID(), user_id: u.userId, is_admin: true } });
    assert.equal(mismatch.status, 400);
    assert.match(mismatch.body.error.message, /project_id/);
    assert.equal((await memberOf(t, u.userId))!.is_admin, false);
  });

  test('list with count, offset and filter', async () => {
    const t = await createTenant(service, 'paging');
    const tag = randomUUID().slice(0, 8);
    const added: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const u = await createUserWithToken(service, `p${i}-${tag}`);
      added.push(u.email);
      await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: u.userId, roles: ['member'] } });
    }
    const all = await list(t);
    assert.equal(all.total, 6);
    assert.equal(all.users.length, 6);
    const page1 = await list(t, '?count=2&offset=0');
    const page2 = await list(t, '?count=2&offset=2');
    const page4 = await list(t, '?count=2&offset=6');
    assert.equal(page1.total, 6);
    assert.equal(page1.users.length, 2);
    assert.equal(page2.users.length, 2);
    assert.deepEqual(page4.users, []);
    const seen = [...page1.users, ...page2.users, ...(await list(t, '?count=2&offset=4')).users].map((u) => u.user_id);
    assert.equal(new Set(seen).size, 6, 'pages are disjoint and stable');

    const filtered = await list(t, `?filter=${encodeURIComponent(`p3-${tag}`)}`);
    assert.equal(filtered.total, 1);
    assert.equal(filtered.users[0]!.email, added[3]);
    // LIKE wildcards in the filter match literally.
    assert.equal((await list(t, '?filter=%25')).total, 0);
    assert.equal((await list(t, '?filter=_')).total, 0);

    for (const query of ['?count=0', '?count=abc', '?offset=-1', '?count=100000', `?filter=${'x'.repeat(201)}`]) {
      const r = await call(service, 'GET', `${users(t)}${query}`, { token: t.apiKey });
      assert.equal(r.status, 400, query);
      assert.equal(r.body.error.code, 'invalid_request');
    }
  });

  test('unknown users are 404 and nothing is written', async () => {
    const t = await createTenant(service, 'unknown');
    const ghost = randomUUID();
    const r = await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: ghost, roles: ['admin'] } });
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'not_found');
    assert.equal((await list(t)).total, 1);
    assert.equal((await call(service, 'PUT', `${users(t)}/${ghost}`, { token: t.apiKey, json: { roles: ['member'] } })).status, 404);
    assert.equal((await call(service, 'DELETE', `${users(t)}/${ghost}`, { token: t.apiKey })).status, 404);
  });

  test('the last admin cannot be removed or demoted', async () => {
    const t = await createTenant(service, 'last-admin');
    const demote = await call(service, 'PUT', `${users(t)}/${t.userId}`, { token: t.apiKey, json: { roles: ['developer'] } });
    assert.equal(demote.status, 409);
    assert.equal(demote.body.error.code, 'last_admin');
    const demoteFlag = await call(service, 'PUT', `${users(t)}/${t.userId}`, { token: t.apiKey, json: { is_admin: false } });
    assert.equal(demoteFlag.status, 409);
    const readd = await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: t.userId, roles: ['member'] } });
    assert.equal(readd.status, 409);
    const remove = await call(service, 'DELETE', `${users(t)}/${t.userId}`, { token: t.apiKey });
    assert.equal(remove.status, 409);
    assert.equal((await memberOf(t, t.userId))!.is_admin, true, 'rolled back');

    // With a second admin, the first may step down.
    const second = await createUserWithToken(service, 'second-admin');
    await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: second.userId, is_admin: true } });
    assert.equal((await call(service, 'PUT', `${users(t)}/${t.userId}`, { token: t.apiKey, json: { roles: ['member'] } })).status, 200);
    assert.equal((await call(service, 'DELETE', `${users(t)}/${second.userId}`, { token: t.apiKey })).status, 409);
  });

  test('two admins demoting each other at once leave one admin', async () => {
    for (let round = 0; round < 5; round += 1) {
      const t = await createTenant(service, 'race');
      const second = await createUserWithToken(service, 'race-admin');
      await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: second.userId, roles: ['admin'] } });
      const results = await Promise.all([t.userId, second.userId].map((id) =>
        call(service, 'PUT', `${users(t)}/${id}`, { token: t.apiKey, json: { roles: ['member'] } })));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 409], `round ${round}`);
      assert.equal((await list(t)).users.filter((u) => u.is_admin).length, 1);
    }
  });

  test("membership changes take effect at once for that user's token", async () => {
    const t = await createTenant(service, 'cache');
    const u = await createUserWithToken(service, 'carol');
    const project = `/accounts/projects/${t.projectId}`;
    assert.equal((await call(service, 'GET', project, { token: u.token })).status, 404);
    await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: u.userId, roles: ['member'] } });
    // Warm the cache with the member role.
    assert.equal((await call(service, 'GET', `${project}/role`, { token: u.token })).body.role, 'member');
    assert.equal((await call(service, 'GET', `${project}/api-keys`, { token: u.token })).status, 403);

    await call(service, 'PUT', `${users(t)}/${u.userId}`, { token: t.apiKey, json: { roles: ['admin'] } });
    assert.equal((await call(service, 'GET', `${project}/role`, { token: u.token })).body.role, 'admin');
    assert.equal((await call(service, 'GET', `${project}/api-keys`, { token: u.token })).status, 200);

    await call(service, 'PUT', `${users(t)}/${u.userId}`, { token: t.apiKey, json: { roles: ['member'] } });
    assert.equal((await call(service, 'GET', `${project}/api-keys`, { token: u.token })).status, 403);

    await call(service, 'DELETE', `${users(t)}/${u.userId}`, { token: t.apiKey });
    assert.equal((await call(service, 'GET', project, { token: u.token })).status, 404);
    assert.equal((await call(service, 'GET', `${project}/role`, { token: u.token })).status, 404);
  });

  test('a member-only user gets 403 on admin routes', async () => {
    const t = await createTenant(service, 'member-only');
    const u = await createUserWithToken(service, 'dave');
    const other = await createUserWithToken(service, 'erin');
    await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: u.userId } });
    const project = `/accounts/projects/${t.projectId}`;
    const attempts: [string, string, unknown?][] = [
      ['POST', users(t), { user_id: other.userId, roles: ['admin'] }],
      ['POST', users(t), { user_id: u.userId, roles: ['admin'] }],
      ['PUT', `${users(t)}/${u.userId}`, { roles: ['admin'] }],
      ['DELETE', `${users(t)}/${t.userId}`],
      ['GET', users(t)],
      ['PUT', `${project}/settings`, {}],
      ['POST', `${project}/api-keys`, { name: 'mine' }],
      ['GET', `${project}/api-keys`],
    ];
    for (const [method, path, json] of attempts) {
      const r = await call(service, method, path, { token: u.token, json });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.body.error.code, 'forbidden');
    }
    assert.equal((await memberOf(t, u.userId))!.roles.join(), 'member');
  });

  test('bad input is a 4xx naming the problem', async () => {
    const t = await createTenant(service, 'bad');
    const u = await createUserWithToken(service, 'frank');
    const cases: [unknown, RegExp][] = [
      ['{"user_id"', /JSON/i],
      ['[]', /object/],
      [{}, /give either user_id or email/],
      [{ user_id: 'nope' }, /user_id/],
      [{ user_id: 42 }, /user_id/],
      [{ user_id: u.userId, roles: 'admin' }, /roles/],
      [{ user_id: u.userId, roles: ['root'] }, /roles/],
      [{ user_id: u.userId, roles: ['admin', 'admin'] }, /roles/],
      [{ user_id: u.userId, is_admin: 'yes' }, /is_admin/],
      [{ user_id: u.userId, roles: Array.from({ length: 21 }, () => 'member') }, /roles/],
    ];
    for (const [json, message] of cases) {
      const r = await call(service, 'POST', users(t), { token: t.apiKey, json });
      assert.equal(r.status, 400, JSON.stringify(json));
      assert.match(r.body.error.message, message, JSON.stringify(json));
    }
    assert.equal((await list(t)).total, 1);
    const badId = await call(service, 'PUT', `${users(t)}/not-a-uuid`, { token: t.apiKey, json: { roles: ['member'] } });
    assert.equal(badId.status, 400);
    assert.equal((await call(service, 'DELETE', `${users(t)}/not-a-uuid`, { token: t.apiKey })).status, 400);
    const badUpdate = await call(service, 'PUT', `${users(t)}/${t.userId}`, { token: t.apiKey, json: { roles: ['nobody'] } });
    assert.equal(badUpdate.status, 400);
    const huge = await call(service, 'POST', users(t), { token: t.apiKey, json: { user_id: u.userId, pad: 'x'.repeat(1024 * 1024 + 1) } });
    assert.equal(huge.status, 413);
  });
});

// Projects: create, list, get, settings, status and the caller's role, on both engines.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PROJECT_ROLES, ROLE_GROUPS } from '../../src/platform/http/roles.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('projects', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let developer: { userId: string; token: string };
  let member: { userId: string; token: string };
  let narrowKey: string;

  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'projects');
    developer = await createUserWithToken(service, 'dev');
    member = await createUserWithToken(service, 'member');
    const users = `/accounts/projects/${tenant.projectId}/users`;
    assert.equal((await call(service, 'POST', users, { token: tenant.apiKey, json: { user_id: developer.userId, roles: ['developer'] } })).status, 200);
    assert.equal((await call(service, 'POST', users, { token: tenant.apiKey, json: { user_id: member.userId, roles: ['member'] } })).status, 200);
    const key = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/api-keys`, { token: tenant.apiKey, json: { name: 'narrow', roles: ['room_creator'] } });
    assert.equal(key.status, 201);
    narrowKey = key.body.value;
  });
  after(() => service?.stop());

  const project = (id = tenant.projectId) => `/accounts/projects/${id}`;

  test('a user creates a project and becomes its admin; an API key may not create projects', async () => {
    const user = await createUserWithToken(service, 'creator');
    const created = await call(service, 'POST', '/accounts/projects', { token: user.token, json: { name: 'Fresh', settings: { theme: 'dark' } } });
    assert.equal(created.status, 201);
    assert.equal(created.body.name, 'Fresh');
    assert.equal(created.body.owner_user_id, user.userId);
    assert.deepEqual(created.body.settings, { theme: 'dark' });
    assert.equal(created.body.enabled, true);
    assert.equal(typeof created.body.project_key, 'string');
    assert.match(created.body.created_at, /^\d{4}-\d\d-\d\dT.*Z$/);
    const role = await call(service, 'GET', `${project(created.body.id)}/role`, { token: user.token });
    assert.equal(role.status, 200);
    assert.equal(role.body.role, 'admin');

    const withNullSettings = await call(service, 'POST', '/accounts/projects', { token: user.token, json: { name: 'Nulls', settings: null } });
    assert.equal(withNullSettings.status, 201);
    assert.deepEqual(withNullSettings.body.settings, {});

    const byKey = await call(service, 'POST', '/accounts/projects', { token: tenant.apiKey, json: { name: 'Nope' } });
    assert.equal(byKey.status, 403);
    assert.equal(byKey.body.error.code, 'forbidden');
    assert.equal((await call(service, 'POST', '/accounts/projects', { json: { name: 'anon' } })).status, 401);
  });

  test('list: a user sees the projects they belong to; an API key only its own', async () => {
    const other = await createTenant(service, 'other');
    const mine = await call(service, 'GET', '/accounts/projects', { token: tenant.userToken });
    assert.equal(mine.status, 200);
    const ids = mine.body.projects.map((p: { id: string }) => p.id);
    assert.ok(ids.includes(tenant.projectId));
    assert.ok(!ids.includes(other.projectId));

    const asMember = await call(service, 'GET', '/accounts/projects', { token: member.token });
    assert.deepEqual(asMember.body.projects.map((p: { id: string }) => p.id), [tenant.projectId]);

    const byKey = await call(service, 'GET', '/accounts/projects', { token: tenant.apiKey });
    assert.equal(byKey.status, 200);
    assert.deepEqual(byKey.body.projects.map((p: { id: string }) => p.id), [tenant.projectId]);

    const loner = await createUserWithToken(service, 'loner');
    assert.deepEqual((await call(service, 'GET', '/accounts/projects', { token: loner.token })).body, { projects: [] });
  });

  test('get, status and settings (admin only)', async () => {
    const got = await call(service, 'GET', project(), { token: member.token });
    assert.equal(got.status, 200);
    assert.equal(got.body.id, tenant.projectId);
    assert.deepEqual(await call(service, 'GET', `${project()}/status`, { token: member.token }).then((r) => r.body), { enabled: true });

    const settings = { openai: { key_ref: 'x' }, limits: [1, 2, 3], flag: true };
    const put = await call(service, 'PUT', `${project()}/settings`, { token: tenant.userToken, json: settings });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.settings, settings);
    assert.deepEqual((await call(service, 'GET', project(), { token: tenant.apiKey })).body.settings, settings);

    for (const token of [developer.token, member.token, narrowKey]) {
      const denied = await call(service, 'PUT', `${project()}/settings`, { token, json: { hijacked: true } });
      assert.equal(denied.status, 403);
      assert.equal(denied.body.error.code, 'forbidden');
    }
    assert.deepEqual((await call(service, 'GET', project(), { token: tenant.apiKey })).body.settings, settings);

    // The settings document is replaced, not merged.
    assert.deepEqual((await call(service, 'PUT', `${project()}/settings`, { token: tenant.apiKey, json: {} })).body.settings, {});
  });

  test('role for admin, developer, member and a narrowed API key', async () => {
    const role = async (token: string) => {
      const r = await call(service, 'GET', `${project()}/role`, { token });
      assert.equal(r.status, 200);
      return r.body;
    };
    const admin = await role(tenant.userToken);
    assert.equal(admin.role, 'admin');
    assert.equal(admin.is_admin, true);
    assert.equal(admin.is_developer, true);
    assert.ok(admin.roles.includes('oauth_client_manager'));

    const keyAdmin = await role(tenant.apiKey);
    assert.equal(keyAdmin.role, 'admin');

    const dev = await role(developer.token);
    assert.equal(dev.role, 'developer');
    assert.equal(dev.is_admin, false);
    assert.equal(dev.is_developer, true);
    assert.equal(dev.can_create_rooms, true);
    assert.ok(!dev.roles.includes('admin'));

    const mem = await role(member.token);
    assert.equal(mem.role, 'member');
    assert.deepEqual(mem.roles, ['member']);
    assert.deepEqual([mem.is_admin, mem.is_developer, mem.can_create_rooms, mem.can_create_agents, mem.can_use_llm_proxy], [false, false, false, false, false]);

    const narrow = await role(narrowKey);
    assert.equal(narrow.role, 'member');
    assert.deepEqual([...narrow.roles].sort(), ['member', 'room_creator']);
    assert.equal(narrow.can_create_rooms, true);
    assert.equal(narrow.is_admin, false);
  });

  test('a project the caller cannot see is 404, like a missing one', async () => {
    const other = await createTenant(service, 'hidden');
    for (const token of [tenant.apiKey, tenant.userToken, member.token]) {
      for (const path of [project(other.projectId), `${project(other.projectId)}/status`, `${project(other.projectId)}/role`]) {
        const r = await call(service, 'GET', path, { token });
        assert.equal(r.status, 404, path);
        assert.equal(r.body.error.code, 'not_found');
      }
    }
    assert.equal((await call(service, 'GET', project('00000000-0000-4000-8000-000000000000'), { token: tenant.userToken })).status, 404);
    assert.equal((await call(service, 'GET', project('not-a-uuid'), { token: tenant.userToken })).status, 404);
  });

  test('bad input is a 4xx naming the problem, and writes nothing', async () => {
    const user = await createUserWithToken(service, 'bad-input');
    const cases: [unknown, number, RegExp][] = [
      ['{"name":', 400, /JSON/i],
      ['[]', 400, /object/],
      [{}, 400, /name is required/],
      [{ name: 7 }, 400, /name/],
      [{ name: '' }, 400, /name/],
      [{ name: 'x'.repeat(201) }, 400, /name/],
      [{ name: 'a/b' }, 400, /name/],
      [{ name: 'ok', settings: 'dark' }, 400, /settings/],
      [{ name: 'ok', settings: [1] }, 400, /settings/],
    ];
    for (const [json, status, message] of cases) {
      const r = await call(service, 'POST', '/accounts/projects', { token: user.token, json });
      assert.equal(r.status, status, JSON.stringify(json));
      assert.match(r.body.error.message, message, JSON.stringify(json));
      assert.equal(typeof r.body.error.code, 'string');
    }
    const huge = await call(service, 'POST', '/accounts/projects', { token: user.token, json: { name: 'big', settings: { blob: 'x'.repeat(1024 * 1024 + 10) } } });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.error.code, 'payload_too_large');
    const nul = await call(service, 'POST', '/accounts/projects', { token: user.token, json: { name: 'nul', settings: { note: 'a\u0000b' } } });
    assert.equal(nul.status, 400, JSON.stringify(nul.body));
    assert.deepEqual((await call(service, 'GET', '/accounts/projects', { token: user.token })).body, { projects: [] });

    const settingsCases: [unknown, number][] = [['{', 400], ['[1,2]', 400], ['"text"', 400], ['null', 400], [{ note: 'a\u0000b' }, 400]];
    for (const [json, status] of settingsCases) {
      const r = await call(service, 'PUT', `${project()}/settings`, { token: tenant.apiKey, json });
      assert.equal(r.status, status, JSON.stringify(json));
      assert.equal(typeof r.body.error.message, 'string');
    }
    const hugeSettings = await call(service, 'PUT', `${project()}/settings`, { token: tenant.apiKey, json: { blob: 'y'.repeat(2 * 1024 * 1024) } });
    assert.equal(hugeSettings.status, 413);

    // Unknown role values are refused wherever roles are accepted.
    const badRole = await call(service, 'POST', `${project()}/users`, { token: tenant.apiKey, json: { user_id: user.userId, roles: ['superuser'] } });
    assert.equal(badRole.status, 400);
    assert.match(badRole.body.error.message, /roles/);
    const badKeyRole = await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: 'k', roles: ['owner'] } });
    assert.equal(badKeyRole.status, 400);
    assert.match(badKeyRole.body.error.message, /roles/);
  });
});

forEachEngine('the role catalogue', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'roles');
  });
  after(() => service?.stop());

  test('every project role, in words and grouped, for any signed-in caller; nobody else', async () => {
    const member = await createUserWithToken(service, 'catalogue');
    const listed = await call(service, 'GET', '/accounts/roles', { token: member.token });
    assert.equal(listed.status, 200);
    const roles = listed.body.roles as { name: string; description: string; group: string }[];
    assert.deepEqual(roles.map((r) => r.name), PROJECT_ROLES);
    assert.deepEqual(roles.find((r) => r.name === 'feed_manager'), { name: 'feed_manager', description: 'Updates and deletes feeds.', group: 'Integrations' });
    assert.deepEqual([...new Set(roles.map((r) => r.group))].sort(), [...ROLE_GROUPS].sort(), 'every group holds a role');
    assert.ok(roles.every((r) => r.description.endsWith('.')));
    assert.equal((await call(service, 'GET', '/accounts/roles', { token: tenant.apiKey })).status, 200);
    assert.equal((await call(service, 'GET', '/accounts/roles')).status, 401);
  });
});

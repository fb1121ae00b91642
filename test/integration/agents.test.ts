// Managed agents end to end over HTTP, on both engines.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('agents', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'agents');
  });
  after(() => service?.stop());

  const agents = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}/agents`;
  const spec = (name: string, extra: Record<string, unknown> = {}) => ({ version: 'v1', kind: 'ManagedAgent', metadata: { name, annotations: { team: 'a' } }, instructions: 'be brief', ...extra });

  test('create, get by name, rename by id keeps the id, delete by id', async () => {
    const created = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('helper', { toolkits: [{ type: 'web_search' }] }) } });
    assert.equal(created.status, 201);
    assert.equal(created.body.name, 'helper');
    assert.equal(created.body.configuration.metadata.name, 'helper');
    assert.deepEqual(created.body.configuration.metadata.annotations, { team: 'a' });
    assert.deepEqual(created.body.configuration.toolkits, [{ type: 'web_search' }]);
    assert.equal(created.body.configuration.instructions, 'be brief');
    assert.match(created.body.id, /^[0-9a-f-]{36}$/);

    const got = await call(service, 'GET', `${agents()}/helper`, { token: tenant.apiKey });
    assert.equal(got.status, 200);
    assert.equal(got.body.id, created.body.id);
    assert.deepEqual(got.body.configuration, created.body.configuration);

    const renamed = await call(service, 'PUT', `${agents()}/${created.body.id}`, { token: tenant.apiKey, json: { configuration: spec('assistant', { instructions: 'be kind' }) } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.id, created.body.id);
    assert.equal(renamed.body.name, 'assistant');
    assert.equal(renamed.body.configuration.instructions, 'be kind');
    assert.equal((await call(service, 'GET', `${agents()}/helper`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'GET', `${agents()}/assistant`, { token: tenant.apiKey })).body.id, created.body.id);

    const deleted = await call(service, 'DELETE', `${agents()}/${created.body.id}`, { token: tenant.apiKey });
    assert.equal(deleted.status, 200);
    assert.deepEqual(deleted.body, { ok: true });
    assert.equal((await call(service, 'GET', `${agents()}/assistant`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'DELETE', `${agents()}/${created.body.id}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${agents()}/${created.body.id}`, { token: tenant.apiKey, json: { configuration: spec('ghost') } })).status, 404);
  });

  test('the list is by name, paged with count/offset and filtered on the name, in this project only', async () => {
    const own = await createTenant(service, 'agent-list');
    for (const name of ['gamma', 'alpha', 'beta']) {
      assert.equal((await call(service, 'POST', agents(own), { token: own.apiKey, json: { configuration: spec(name) } })).status, 201);
    }
    const all = await call(service, 'GET', agents(own), { token: own.apiKey });
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.agents.map((a: { name: string }) => a.name), ['alpha', 'beta', 'gamma']);
    assert.equal(all.body.total, 3);
    const page = await call(service, 'GET', `${agents(own)}?count=1&offset=1`, { token: own.apiKey });
    assert.deepEqual(page.body.agents.map((a: { name: string }) => a.name), ['beta']);
    assert.equal(page.body.total, 3);
    const filtered = await call(service, 'GET', `${agents(own)}?filter=MM`, { token: own.apiKey });
    assert.deepEqual(filtered.body.agents.map((a: { name: string }) => a.name), ['gamma']);
    const other = await call(service, 'GET', agents(own), { token: tenant.apiKey });
    assert.equal(other.status, 404);
  });

  test('the legacy top-level name is accepted; names are trimmed and lower-cased', async () => {
    const legacy = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: { name: 'Legacy-Bot' } } });
    assert.equal(legacy.status, 201);
    assert.equal(legacy.body.name, 'legacy-bot');
    assert.equal(legacy.body.configuration.metadata.name, 'legacy-bot');
    assert.equal(legacy.body.configuration.name, undefined);
    assert.equal(legacy.body.configuration.kind, 'ManagedAgent');
    assert.equal((await call(service, 'GET', `${agents()}/LEGACY-BOT`, { token: tenant.apiKey })).body.id, legacy.body.id);

    const padded = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: { metadata: { name: '  Spaced ' } } } });
    assert.equal(padded.status, 201);
    assert.equal(padded.body.name, 'spaced');
  });

  test('duplicate names are 409 unless if_not_exists', async () => {
    const first = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('dup') } });
    assert.equal(first.status, 201);
    const again = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('DUP') } });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'already_exists');
    const idempotent = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('dup', { instructions: 'changed' }), if_not_exists: true } });
    assert.equal(idempotent.status, 200);
    assert.equal(idempotent.body.id, first.body.id);
    assert.equal(idempotent.body.configuration.instructions, 'be brief', 'if_not_exists returns the existing agent unchanged');

    const other = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('other') } });
    const clash = await call(service, 'PUT', `${agents()}/${other.body.id}`, { token: tenant.apiKey, json: { configuration: spec('dup') } });
    assert.equal(clash.status, 409);
    assert.equal((await call(service, 'GET', `${agents()}/other`, { token: tenant.apiKey })).status, 200);

    // Concurrent creates of one name: one wins, the other is a clean 409.
    const racers = await Promise.all([1, 2, 3].map(() => call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('racer') } })));
    assert.deepEqual(racers.map((r) => r.status).sort(), [201, 409, 409]);
  });

  test('permissions are kept; an array (the TS SDK shape) is accepted', async () => {
    const owner = randomUUID();
    const withMap = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('perm-map'), permissions: { [owner]: { admin: true } } } });
    assert.equal(withMap.status, 201);
    assert.deepEqual(withMap.body.permissions, { [owner]: { admin: true } });
    const withArray = await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('perm-array'), permissions: [] } });
    assert.equal(withArray.status, 201);
    assert.deepEqual(withArray.body.permissions, {});
  });

  test('connect returns a participant token for the agent', async () => {
    await call(service, 'POST', agents(), { token: tenant.apiKey, json: { configuration: spec('caller') } });
    const connected = await call(service, 'POST', `${agents()}/caller/connect`, { token: tenant.apiKey, json: {} });
    assert.equal(connected.status, 200);
    assert.deepEqual(Object.keys(connected.body).sort(), ['agent_name', 'agent_url', 'jwt', 'project_id']);
    assert.equal(connected.body.agent_name, 'caller');
    assert.equal(connected.body.project_id, tenant.projectId);
    assert.match(connected.body.agent_url, new RegExp(`/agents/${tenant.projectId}/caller/messages$`));
    const validated = await call(service, 'POST', '/api/participant-token/validate', { json: { token: connected.body.jwt } });
    assert.equal(validated.status, 200);
    assert.equal(validated.body.sub, tenant.projectId);
    assert.deepEqual(validated.body.grants.find((g: { name: string }) => g.name === 'agent'), { name: 'agent', scope: 'caller' });
    // Without a body, as some clients send it.
    assert.equal((await call(service, 'POST', `${agents()}/caller/connect`, { token: tenant.apiKey })).status, 200);
    assert.equal((await call(service, 'POST', `${agents()}/nobody/connect`, { token: tenant.apiKey, json: {} })).status, 404);
  });

  test('roles: members read and connect, agent creators create, developers change', async () => {
    const t = await createTenant(service, 'agent-roles');
    const member = await createUserWithToken(service, 'agent-member');
    const creator = await createUserWithToken(service, 'agent-creator');
    await call(service, 'POST', `/accounts/projects/${t.projectId}/users`, { token: t.apiKey, json: { user_id: member.userId } });
    await call(service, 'POST', `/accounts/projects/${t.projectId}/users`, { token: t.apiKey, json: { user_id: creator.userId, can_create_agents: true } });
    assert.equal((await call(service, 'POST', agents(t), { token: member.token, json: { configuration: spec('m') } })).status, 403);
    const made = await call(service, 'POST', agents(t), { token: creator.token, json: { configuration: spec('c') } });
    assert.equal(made.status, 201);
    assert.equal((await call(service, 'GET', `${agents(t)}/c`, { token: member.token })).status, 200);
    assert.equal((await call(service, 'POST', `${agents(t)}/c/connect`, { token: member.token, json: {} })).status, 200);
    assert.equal((await call(service, 'PUT', `${agents(t)}/${made.body.id}`, { token: creator.token, json: { configuration: spec('c2') } })).status, 403);
    assert.equal((await call(service, 'DELETE', `${agents(t)}/${made.body.id}`, { token: member.token })).status, 403);
  });

  test('bad input is a 4xx naming the problem, and writes nothing', async () => {
    const t = await createTenant(service, 'agent-bad');
    const cases: [unknown, number, RegExp][] = [
      ['{"configuration":', 400, /JSON/i],
      ['[]', 400, /object/],
      [{}, 400, /configuration is required/],
      [{ configuration: 'x' }, 400, /configuration/],
      [{ configuration: {} }, 400, /name is required/],
      [{ configuration: { metadata: { name: '   ' } } }, 400, /name is required/],
      [{ configuration: { metadata: { name: 'a/b' } } }, 400, /name/],
      [{ configuration: { name: 'a/b' } }, 400, /name/],
      [{ configuration: { metadata: { name: 42 } } }, 400, /name/],
      [{ configuration: { metadata: { name: 'x'.repeat(201) } } }, 400, /name/],
      [{ configuration: { metadata: { name: 'tab\there' } } }, 400, /name/],
      [{ configuration: { metadata: { name: 'ok', annotations: { a: 1 } } } }, 400, /annotations/],
      [{ configuration: spec('ok'), if_not_exists: 'yes' }, 400, /if_not_exists/],
      [{ configuration: spec('ok'), permissions: 'all' }, 400, /permissions/],
      [{ configuration: spec('nul', { instructions: 'a\u0000b' }) }, 400, /./],
      [{ configuration: spec('big', { instructions: 'x'.repeat(1024 * 1024) }) }, 413, /./],
    ];
    for (const [json, status, message] of cases) {
      const r = await call(service, 'POST', agents(t), { token: t.apiKey, json });
      assert.equal(r.status, status, JSON.stringify(json).slice(0, 100));
      assert.match(r.body.error.message, message, JSON.stringify(json).slice(0, 100));
    }
    for (const name of ['ok', 'nul', 'big']) assert.equal((await call(service, 'GET', `${agents(t)}/${name}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${agents(t)}/not-a-uuid`, { token: t.apiKey, json: { configuration: spec('x') } })).status, 400);
    assert.equal((await call(service, 'DELETE', `${agents(t)}/not-a-uuid`, { token: t.apiKey })).status, 400);
    const made = await call(service, 'POST', agents(t), { token: t.apiKey, json: { configuration: spec('stay') } });
    assert.equal((await call(service, 'PUT', `${agents(t)}/${made.body.id}`, { token: t.apiKey, json: {} })).status, 400);
    assert.equal((await call(service, 'PUT', `${agents(t)}/${made.body.id}`, { token: t.apiKey, json: { configuration: { metadata: { name: '' } } } })).status, 400);
    assert.equal((await call(service, 'GET', `${agents(t)}/stay`, { token: t.apiKey })).body.id, made.body.id);
  });
});

// Rooms end to end over HTTP, on both engines.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('rooms', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'rooms');
  });
  after(() => service?.stop());

  const rooms = () => `/accounts/projects/${tenant.projectId}/rooms`;

  test('create, get by name, rename keeps id, list, delete', async () => {
    const created = await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: 'lobby', metadata: { topic: 'hi' }, annotations: { a: 'b' } } });
    assert.equal(created.status, 201);
    assert.equal(created.body.name, 'lobby');
    assert.deepEqual(created.body.metadata, { topic: 'hi' });
    const got = await call(service, 'GET', `${rooms()}/lobby`, { token: tenant.apiKey });
    assert.equal(got.status, 200);
    assert.equal(got.body.id, created.body.id);
    const renamed = await call(service, 'PUT', `${rooms()}/${created.body.id}`, { token: tenant.apiKey, json: { name: 'hall' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.id, created.body.id);
    assert.equal((await call(service, 'GET', `${rooms()}/lobby`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'GET', `${rooms()}/hall`, { token: tenant.apiKey })).body.id, created.body.id);
    const listed = await call(service, 'GET', `${rooms()}?limit=10&offset=0&order_by=room_name`, { token: tenant.apiKey });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.rooms.map((r: { name: string }) => r.name), ['hall']);
    assert.equal(listed.body.total, 1);
    assert.equal((await call(service, 'DELETE', `${rooms()}/${created.body.id}`, { token: tenant.apiKey })).status, 200);
    assert.equal((await call(service, 'GET', `${rooms()}/hall`, { token: tenant.apiKey })).status, 404);
  });

  test('duplicate name is 409 unless if_not_exists', async () => {
    const first = await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: 'dup' } });
    assert.equal(first.status, 201);
    const again = await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: 'dup' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, 'already_exists');
    const idempotent = await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: 'dup', if_not_exists: true } });
    assert.equal(idempotent.status, 200);
    assert.equal(idempotent.body.id, first.body.id);
  });

  test('connect returns a participant token that validates', async () => {
    await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: 'stage' } });
    const connected = await call(service, 'POST', `${rooms()}/stage/connect`, { token: tenant.apiKey, json: {} });
    assert.equal(connected.status, 200);
    assert.equal(connected.body.room_name, 'stage');
    assert.equal(connected.body.project_id, tenant.projectId);
    assert.match(connected.body.room_url, /^ws:\/\/127\.0\.0\.1:\d+\/rooms\/stage$/);
    const validated = await call(service, 'POST', '/api/participant-token/validate', { json: { token: connected.body.jwt } });
    assert.equal(validated.status, 200);
    assert.equal(validated.body.sub, tenant.projectId);
    assert.deepEqual(validated.body.grants.find((g: { name: string }) => g.name === 'room'), { name: 'room', scope: 'stage' });
  });

  test('bad input is a 4xx naming the problem, and writes nothing', async () => {
    const cases: [unknown, number, RegExp][] = [
      ['{"name":', 400, /JSON/i],
      [{}, 400, /name is required/],
      [{ name: 42 }, 400, /name/],
      [{ name: '' }, 400, /name/],
      [{ name: 'a/b' }, 400, /name/],
      [{ name: 'x'.repeat(201) }, 400, /name/],
      [{ name: 'ok', metadata: 'nope' }, 400, /metadata/],
    ];
    for (const [json, status, message] of cases) {
      const response = await call(service, 'POST', rooms(), { token: tenant.apiKey, json });
      assert.equal(response.status, status, JSON.stringify(json));
      assert.match(response.body.error.message, message);
    }
    const huge = await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: 'big', metadata: { blob: 'x'.repeat(2 * 1024 * 1024) } } });
    assert.equal(huge.status, 413);
    const listed = await call(service, 'GET', rooms(), { token: tenant.apiKey });
    assert.ok(!listed.body.rooms.some((r: { name: string }) => r.name === 'ok' || r.name === 'big'));
    assert.equal((await call(service, 'PUT', `${rooms()}/not-a-uuid`, { token: tenant.apiKey, json: { name: 'x' } })).status, 400);
    assert.equal((await call(service, 'GET', `${rooms()}?limit=0`, { token: tenant.apiKey })).status, 400);
    assert.equal((await call(service, 'GET', `${rooms()}?order_by=nope`, { token: tenant.apiKey })).status, 400);
  });
});

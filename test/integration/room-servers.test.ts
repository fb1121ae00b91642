// The room servers' read path, driven as a room server drives it: an admin configures a project over
// HTTP, then a project API key created with only the room_server role reads one room's services
// (project + room, templates rendered, obscure values in place), secrets (decrypted, only this room's
// and this identity's, and the project secrets its services refer to), mailboxes, and resolves a
// domain; and it can do nothing else of an admin's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TOOL_TEMPLATE } from '../support/service-templates.ts';
import { call, createTenant, forEachEngine, startTestService, TEST_MAIL_DOMAIN, type Tenant, type TestService } from '../support/service.ts';

const b64 = (text: string) => Buffer.from(text).toString('base64');

forEachEngine('room servers', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let other: Tenant;
  let roomServer: string;
  const lobby = 'lobby';
  const ids: Record<string, string> = {};

  const project = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}`;
  const asAdmin = async (method: string, path: string, json?: unknown) => {
    const r = await call(service, method, `${project()}${path}`, { token: tenant.apiKey, json });
    assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const asRoomServer = (path: string, token = roomServer) => call(service, 'GET', path, { token });

  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'room-server');
    other = await createTenant(service, 'room-server-other');
    ids.lobby = (await asAdmin('POST', '/rooms', { name: lobby })).id;
    await asAdmin('POST', '/rooms', { name: 'stage' });

    ids.pull = (await asAdmin('POST', '/secrets', { name: 'registry', type: 'docker', data_base64: b64('{"server":"ghcr.io","username":"u","password":"p"}') })).id;
    ids.listed = (await asAdmin('POST', '/secrets', { name: 'openai', type: 'keys', data_base64: b64('{"OPENAI_API_KEY":"sk-1"}') })).id;
    ids.env = (await asAdmin('POST', '/secrets', { name: 'env', type: 'keys', data_base64: b64('env-value') })).id;
    ids.unused = (await asAdmin('POST', '/secrets', { name: 'unused', type: 'keys', data_base64: b64('never-for-rooms') })).id;

    const container = { image: 'ghcr.io/example/echo:1', secrets: [ids.listed], pull_secret: ids.pull, environment: [{ name: 'FROM_SECRET', secret: { id: ids.env } }] };
    ids.projectEcho = (await asAdmin('POST', '/services', { version: 'v1', kind: 'Service', metadata: { name: 'echo' }, container })).id;
    ids.projectShadowed = (await asAdmin('POST', '/services', { version: 'v1', kind: 'Service', metadata: { name: 'helper' }, external: { url: 'https://project.example.com' } })).id;
    ids.projectTool = (await asAdmin('POST', '/services', { template: TOOL_TEMPLATE, values: { name: 'tool', token: 'obscure-token-1' } })).id;
    ids.roomHelper = (await asAdmin('POST', `/rooms/${lobby}/services`, { version: 'v1', kind: 'Service', metadata: { name: 'helper' }, external: { url: 'https://room.example.com' } })).id;
    await asAdmin('POST', '/rooms/stage/services', { version: 'v1', kind: 'Service', metadata: { name: 'stage-only' }, external: { url: 'https://stage.example.com' } });

    await asAdmin('POST', `/rooms/${lobby}/secrets`, { secret_id: 'room-wide', data_base64: b64('for-everyone') });
    await asAdmin('POST', `/rooms/${lobby}/secrets`, { secret_id: 'github', for_identity: 'alice', data_base64: b64('alice-token') });
    await asAdmin('POST', `/rooms/${lobby}/secrets`, { secret_id: 'github', for_identity: 'alice', delegated_to: 'bot', data_base64: b64('alice-for-bot') });
    await asAdmin('POST', `/rooms/${lobby}/secrets`, { secret_id: 'github', for_identity: 'bob', data_base64: b64('bob-token') });
    await asAdmin('POST', '/rooms/stage/secrets', { secret_id: 'stage-secret', data_base64: b64('stage-only') });

    await asAdmin('POST', '/mailboxes', { address: `lobby@${TEST_MAIL_DOMAIN}`, room: lobby, queue: 'inbox' });
    await asAdmin('POST', '/mailboxes', { address: `stage@${TEST_MAIL_DOMAIN}`, room: 'stage', queue: 'inbox' });
    await asAdmin('POST', '/routes', { domain: 'lobby.apps.example.test', room_name: lobby, port: 8080 });

    // What a room server is given: a project API key with the room_server role only.
    roomServer = (await asAdmin('POST', '/api-keys', { name: 'room server', roles: ['room_server'] })).value;
  });
  after(() => service?.stop());

  test('services: the project\'s and the room\'s, a room service shadowing a project one, templates rendered with obscure values', async () => {
    const r = await asRoomServer(`${project()}/rooms/${lobby}/server/services`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.room, { id: ids.lobby, name: lobby });
    const byName = Object.fromEntries(r.body.services.map((s: { spec: { metadata: { name: string } } }) => [s.spec.metadata.name, s]));
    assert.deepEqual(Object.keys(byName).sort(), ['echo', 'helper', 'tool']);
    assert.deepEqual(byName.helper, { id: ids.roomHelper, scope: 'room', spec: { version: 'v1', kind: 'Service', metadata: { name: 'helper' }, external: { url: 'https://room.example.com' }, id: ids.roomHelper } });
    assert.equal(byName.echo.scope, 'project');
    assert.equal(byName.tool.id, ids.projectTool);
    assert.deepEqual(byName.tool.spec.container.environment, [{ name: 'TOKEN', value: 'obscure-token-1' }], 'the room server gets the obscure value');
    // Admins still see it hidden.
    assert.equal((await asAdmin('GET', `/services/${ids.projectTool}`)).container.environment[0].value, '********');
  });

  test('secrets: the project secrets the services use, and the room\'s for the whole room and for one identity', async () => {
    const read = async (identity?: string) => {
      const r = await asRoomServer(`${project()}/rooms/${lobby}/server/secrets${identity === undefined ? '' : `?for_identity=${identity}`}`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return Object.fromEntries(r.body.secrets.map((s: { id: string; scope: string; for_identity: string | null; delegated_to: string | null; data_base64: string }) =>
        [`${s.scope}:${s.id}:${s.for_identity ?? ''}:${s.delegated_to ?? ''}`, Buffer.from(s.data_base64, 'base64').toString()]));
    };
    const projectOnes = {
      [`project:${ids.pull}::`]: '{"server":"ghcr.io","username":"u","password":"p"}',
      [`project:${ids.listed}::`]: '{"OPENAI_API_KEY":"sk-1"}',
      [`project:${ids.env}::`]: 'env-value',
    };
    assert.deepEqual(await read(), { ...projectOnes, 'room:room-wide::': 'for-everyone' });
    assert.deepEqual(await read('alice'), { ...projectOnes, 'room:room-wide::': 'for-everyone', 'room:github:alice:': 'alice-token', 'room:github:alice:bot': 'alice-for-bot' });
    assert.deepEqual(await read('bot'), { ...projectOnes, 'room:room-wide::': 'for-everyone', 'room:github:alice:bot': 'alice-for-bot' });
    assert.deepEqual(await read('bob'), { ...projectOnes, 'room:room-wide::': 'for-everyone', 'room:github:bob:': 'bob-token' });
    const stage = await asRoomServer(`${project()}/rooms/stage/server/secrets`);
    assert.deepEqual(stage.body.secrets.map((s: { id: string }) => s.id).sort(), [ids.env, ids.listed, ids.pull, 'stage-secret'].sort(),
      "another room gets its own, and the project secrets of the project's services (available to every room)");
    assert.ok(!JSON.stringify(stage.body).includes(b64('never-for-rooms')));
  });

  test('mailboxes and routes of the room', async () => {
    const mailboxes = await asRoomServer(`${project()}/rooms/${lobby}/server/mailboxes`);
    assert.deepEqual(mailboxes.body, { room: { id: ids.lobby, name: lobby }, mailboxes: [{ address: `lobby@${TEST_MAIL_DOMAIN}`, room: lobby, room_id: ids.lobby, queue: 'inbox', public: false, annotations: {} }] });
    const resolved = await asRoomServer('/api/routes/resolve?domain=lobby.apps.example.test');
    assert.equal(resolved.body.room_id, ids.lobby);
    assert.equal(resolved.body.port, 8080);
  });

  test('a missing room, another project\'s room or key: 404, as for anything that is not there', async () => {
    for (const part of ['services', 'secrets', 'mailboxes']) {
      assert.equal((await asRoomServer(`${project()}/rooms/nowhere/server/${part}`)).status, 404);
      assert.equal((await asRoomServer(`${project(other)}/rooms/${lobby}/server/${part}`)).status, 404, "another project's path");
    }
    const theirs = (await call(service, 'POST', `${project(other)}/api-keys`, { token: other.apiKey, json: { name: 'theirs', roles: ['room_server'] } })).body.value;
    assert.equal((await asRoomServer(`${project()}/rooms/${lobby}/server/secrets`, theirs)).status, 404);
    assert.equal((await asRoomServer('/api/routes/resolve?domain=lobby.apps.example.test', theirs)).status, 404);
    // Another project's room of the same name is that project's room.
    await call(service, 'POST', `${project(other)}/rooms`, { token: other.apiKey, json: { name: lobby } });
    const theirLobby = await asRoomServer(`${project(other)}/rooms/${lobby}/server/services`, theirs);
    assert.deepEqual(theirLobby.body.services, []);
  });

  test('the room_server key can do nothing of an admin\'s', async () => {
    const refused: [string, string, unknown?][] = [
      ['POST', '/rooms', { name: 'new-room' }],
      ['DELETE', `/rooms/${ids.lobby}`],
      ['GET', '/secrets'],
      ['GET', `/secrets/${ids.unused}`],
      ['GET', `/rooms/${lobby}/secrets/github?for_identity=alice`],
      ['POST', '/secrets', { name: 'x', type: 'keys', data_base64: b64('x') }],
      ['GET', '/services'],
      ['GET', `/services/${ids.projectTool}`],
      ['POST', `/rooms/${lobby}/services`, { version: 'v1', kind: 'Service', metadata: { name: 'x' } }],
      ['GET', '/mailboxes'],
      ['GET', '/routes'],
      ['POST', '/api-keys', { name: 'escalate' }],
      ['GET', '/api-keys'],
      ['POST', '/users', { user_id: tenant.userId }],
      ['PUT', '/settings', { x: 1 }],
    ];
    for (const [method, path, json] of refused) {
      const r = await call(service, method, `${project()}${path}`, { token: roomServer, json });
      assert.equal(r.status, 403, `${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 120)}`);
    }
  });
});

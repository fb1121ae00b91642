// The official TypeScript SDK (@meshagent/meshagent 0.39.9) against a live server on both engines,
// for the resource families it has methods for: services (project and room), secrets (project, room,
// and the typed docker/keys helpers) and mailboxes. Every call must succeed and give back what was
// written; refusals surface as the SDK's RoomException with the status. (Routes, which 0.39.9 lacks,
// are tested over HTTP in test/integration/domain-routes.test.ts.)
//
// The SDK is loaded through require(), as in test/e2e/sdk.test.ts: its "import" build does not load
// on Node 24.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import type * as Sdk from '@meshagent/meshagent';
import { call, createTenant, forEachEngine, startTestService, TEST_MAIL_DOMAIN, type Tenant, type TestService } from '../support/service.ts';

const require = createRequire(import.meta.url);
const { Meshagent, RoomException } = require('@meshagent/meshagent') as typeof Sdk;

async function rejectsWithStatus(promise: Promise<unknown>, status: number): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof RoomException, `expected a RoomException, got ${String(error)}`);
    assert.match((error as Error).message, new RegExp(`Status code: ${status}\\b`));
    return true;
  });
}

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

forEachEngine('official SDK: services, secrets, mailboxes', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let client: InstanceType<typeof Meshagent>;
  let room: string;

  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'sdk-resources');
    client = new Meshagent({ baseUrl: service.url, token: tenant.apiKey });
    room = (await client.createRoom({ projectId: tenant.projectId, name: 'sdk-room' })).name;
  });
  after(() => service?.stop());

  test('project services: create returns the id; get, list, update, delete', async () => {
    const spec: Sdk.ServiceSpec = {
      version: 'v1',
      kind: 'Service',
      metadata: { name: 'sdk-echo', description: 'from the SDK', annotations: { team: 'sdk' } },
      agents: [{ name: 'echo', channels: { messaging: [{}] } }],
      ports: [{ num: 8080, type: 'http', endpoints: [{ path: '/agent', meshagent: { identity: 'echo' } }] }],
      container: { image: 'ghcr.io/example/echo:1', environment: [{ name: 'MODE', value: 'fast' }], secrets: [], storage: { room: [{ path: '/data', read_only: false }] } },
    };
    const id = await client.createService(tenant.projectId, spec);
    assert.match(id, /^[0-9a-f-]{36}$/);
    const got = await client.getService(tenant.projectId, id);
    assert.equal(got.id, id);
    assert.equal(got.metadata.name, 'sdk-echo');
    // The SDK fills in the default messaging protocol; it is kept as sent.
    assert.deepEqual(got.agents, [{ name: 'echo', channels: { messaging: [{ protocol: 'meshagent.agent-message.v1' }] } }]);
    assert.deepEqual(got.container, spec.container);

    assert.deepEqual((await client.listServices(tenant.projectId)).map((s) => s.id), [id]);
    await client.updateService(tenant.projectId, id, { ...got, metadata: { name: 'sdk-echo-2' } });
    assert.equal((await client.getService(tenant.projectId, id)).metadata.name, 'sdk-echo-2');
    await rejectsWithStatus(client.createService(tenant.projectId, { ...spec, metadata: { name: 'sdk-echo-2' } }), 409);
    await client.deleteService(tenant.projectId, id);
    await rejectsWithStatus(client.getService(tenant.projectId, id), 404);
    assert.deepEqual(await client.listServices(tenant.projectId), []);
  });

  test('room services: create, get, list, update, delete; scoped to the room', async () => {
    const id = await client.createRoomService(tenant.projectId, room, { version: 'v1', kind: 'Service', metadata: { name: 'helper' }, external: { url: 'https://helper.example.com' } });
    const got = await client.getRoomService(tenant.projectId, room, id);
    assert.deepEqual(got, { version: 'v1', kind: 'Service', metadata: { name: 'helper' }, external: { url: 'https://helper.example.com' }, id });
    assert.deepEqual((await client.listRoomServices(tenant.projectId, room)).map((s) => s.id), [id]);
    await client.updateRoomService(tenant.projectId, room, id, { ...got, external: { url: 'https://helper-2.example.com' } });
    assert.equal((await client.getRoomService(tenant.projectId, room, id)).external?.url, 'https://helper-2.example.com');
    await rejectsWithStatus(client.getService(tenant.projectId, id), 404);
    await rejectsWithStatus(client.createRoomService(tenant.projectId, 'no-such-room', got), 404);
    await client.deleteRoomService(tenant.projectId, room, id);
    assert.deepEqual(await client.listRoomServices(tenant.projectId, room), []);
  });

  test('project secrets: create returns the id; the value only from get; update, delete', async () => {
    const id = await client.createProjectSecret({ projectId: tenant.projectId, name: 'api', type: 'keys', data: bytes('{"API_KEY":"v1"}') });
    const info = await client.listProjectSecrets(tenant.projectId);
    assert.deepEqual(info, [{ id, name: 'api', type: 'keys', delegatedTo: null }]);
    const got = await client.getProjectSecret(tenant.projectId, id);
    assert.equal(text(got.data), '{"API_KEY":"v1"}');
    await client.updateProjectSecret({ projectId: tenant.projectId, secretId: id, name: 'api', type: 'keys', data: bytes('{"API_KEY":"v2"}') });
    assert.equal(text((await client.getProjectSecret(tenant.projectId, id)).data), '{"API_KEY":"v2"}');
    await client.deleteProjectSecret(tenant.projectId, id);
    await rejectsWithStatus(client.getProjectSecret(tenant.projectId, id), 404);
  });

  test('typed secrets: docker and keys round-trip through createSecret, listSecrets, updateSecret, deleteSecret', async () => {
    await client.createSecret(tenant.projectId, { name: 'registry', type: 'docker', server: 'ghcr.io', username: 'me', password: 'pw' });
    await client.createSecret(tenant.projectId, { name: 'keys', type: 'keys', data: { A: '1', B: '2' } });
    const all = await client.listSecrets(tenant.projectId);
    const registry = all.find((s) => s.name === 'registry') as Sdk.PullSecret;
    assert.deepEqual({ ...registry, id: undefined }, { id: undefined, name: 'registry', type: 'docker', server: 'ghcr.io', username: 'me', password: 'pw', email: 'none@example.com' });
    const keys = all.find((s) => s.name === 'keys') as Sdk.KeysSecret;
    assert.deepEqual(keys.data, { A: '1', B: '2' });
    await client.updateSecret(tenant.projectId, { ...keys, data: { A: '3' } });
    assert.deepEqual(((await client.listSecrets(tenant.projectId)).find((s) => s.name === 'keys') as Sdk.KeysSecret).data, { A: '3' });
    await rejectsWithStatus(client.createSecret(tenant.projectId, { name: 'keys', type: 'keys', data: {} }), 409);
    for (const secret of all) await client.deleteSecret(tenant.projectId, secret.id!);
    assert.deepEqual(await client.listSecrets(tenant.projectId), []);
  });

  test('room secrets: per identity and delegation; get, list, update, delete', async () => {
    const id = await client.createRoomSecret({ projectId: tenant.projectId, roomName: room, name: 'github', type: 'token', data: bytes('room-wide') });
    const forAlice = await client.createRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id, forIdentity: 'alice', data: bytes('alice') });
    assert.equal(forAlice, id);
    await client.createRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id, forIdentity: 'alice', delegatedTo: 'bot', data: bytes('alice-for-bot') });

    assert.equal(text((await client.getRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id })).data), 'room-wide');
    assert.equal(text((await client.getRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id, forIdentity: 'alice' })).data), 'alice');
    const delegated = await client.getRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id, forIdentity: 'alice', delegatedTo: 'bot' });
    assert.equal(text(delegated.data), 'alice-for-bot');
    assert.equal(delegated.delegatedTo, 'bot');

    assert.equal((await client.listRoomSecrets({ projectId: tenant.projectId, roomName: room })).length, 3);
    const alices = await client.listRoomSecrets({ projectId: tenant.projectId, roomName: room, forIdentity: 'alice' });
    assert.deepEqual(alices.map((s) => s.delegatedTo).sort(), ['bot', null]);

    await client.updateRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id, forIdentity: 'alice', data: bytes('alice-2') });
    assert.equal(text((await client.getRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id, forIdentity: 'alice' })).data), 'alice-2');
    await client.deleteRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id, forIdentity: 'alice', delegatedTo: 'bot' });
    await rejectsWithStatus(client.getRoomSecret({ projectId: tenant.projectId, roomName: room, secretId: id, forIdentity: 'alice', delegatedTo: 'bot' }), 404);
    assert.equal((await client.listRoomSecrets({ projectId: tenant.projectId, roomName: room })).length, 2);
  });

  test('mailboxes: create, list pages with filter, update, delete; an address is taken once', async () => {
    const address = `sdk@${TEST_MAIL_DOMAIN}`;
    await client.createMailbox({ projectId: tenant.projectId, address, room, queue: 'inbox', isPublic: true });
    await client.createMailbox({ projectId: tenant.projectId, address: `other@${TEST_MAIL_DOMAIN}`, room, queue: 'inbox', isPublic: false });
    const page = await client.listMailboxesPage(tenant.projectId, { count: 1, offset: 0 });
    assert.equal(page.total, 2);
    assert.equal(page.mailboxes.length, 1);
    const filtered = await client.listMailboxes(tenant.projectId, { filter: 'sdk@' });
    const roomId = (await client.getRoom(tenant.projectId, room)).id;
    assert.deepEqual(filtered, [{ address, room, roomId, queue: 'inbox' }]);
    await client.updateMailbox({ projectId: tenant.projectId, address, room, queue: 'tickets', isPublic: false });
    const got = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/mailboxes/${address}`, { token: tenant.apiKey });
    assert.deepEqual(got.body.mailbox, { address, room, room_id: roomId, queue: 'tickets', public: false, annotations: {} });
    await rejectsWithStatus(client.createMailbox({ projectId: tenant.projectId, address, room, queue: 'inbox', isPublic: true }), 409);
    await rejectsWithStatus(client.createMailbox({ projectId: tenant.projectId, address: 'x@not-allowed.example.com', room, queue: 'inbox', isPublic: true }), 400);
    await client.deleteMailbox(tenant.projectId, address);
    assert.deepEqual((await client.listMailboxes(tenant.projectId)).map((m) => m.address), [`other@${TEST_MAIL_DOMAIN}`]);
  });
});

// The official TypeScript SDK (@meshagent/meshagent 0.39.9) against a live server on both engines,
// for the families that let others in: shares, external OAuth registrations (project and room) and
// image repositories. The SDK has no method for share connect, registry tokens or resource
// policies; those are exercised over plain HTTP in their own suites, and share connect here too.
//
// Loaded through require(): the package's "import" build does not load on Node 24 (see sdk.test.ts).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import type * as Sdk from '@meshagent/meshagent';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const require = createRequire(import.meta.url);
const { Meshagent, RoomException } = require('@meshagent/meshagent') as typeof Sdk;

async function rejectsWithStatus(promise: Promise<unknown>, status: number): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof RoomException, `expected a RoomException, got ${String(error)}`);
    assert.match((error as Error).message, new RegExp(`Status code: ${status}\\b`));
    return true;
  });
}

const SECRET = 'sdk-client-secret-41c2';
const provider = { client_id: 'sdk-client', authorization_endpoint: 'https://idp.example.com/authorize', token_endpoint: 'https://idp.example.com/token', scopes: ['read'] };

forEachEngine('official SDK: shares, external OAuth, repositories', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let sdk: InstanceType<typeof Meshagent>;

  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'sdk-access');
    sdk = new Meshagent({ baseUrl: service.url, token: tenant.apiKey });
    await sdk.createRoom({ projectId: tenant.projectId, name: 'sdk-shared' });
    await sdk.createRoom({ projectId: tenant.projectId, name: 'sdk-other' });
  });
  after(() => service?.stop());

  test('shares: create, list, update, delete; the token from create connects until the share is deleted', async () => {
    const created = await sdk.createShare(tenant.projectId, { room: 'sdk-shared', label: 'from the SDK' }) as { id: string; token?: string };
    assert.equal(typeof created.id, 'string');
    assert.match(created.token ?? '', /^ash_/);

    const listed = await sdk.listShares(tenant.projectId);
    const share = listed.find((s) => s.id === created.id);
    assert.ok(share);
    assert.equal(share.projectId, tenant.projectId);
    assert.equal(share.settings.room, 'sdk-shared');
    assert.equal(share.settings.label, 'from the SDK');

    const connected = await call(service, 'POST', `/shares/${created.id}/connect`, { token: created.token, json: {} });
    assert.equal(connected.status, 200);
    assert.equal(connected.body.room_name, 'sdk-shared');

    await sdk.updateShare(tenant.projectId, created.id, { room: 'sdk-other', label: 'moved' });
    const moved = (await sdk.listShares(tenant.projectId)).find((s) => s.id === created.id)!;
    assert.equal(moved.settings.room, 'sdk-other');
    assert.equal(moved.settings.label, 'moved');
    assert.equal((await call(service, 'POST', `/shares/${created.id}/connect`, { token: created.token })).body.room_name, 'sdk-other');

    await sdk.deleteShare(tenant.projectId, created.id);
    assert.ok(!(await sdk.listShares(tenant.projectId)).some((s) => s.id === created.id));
    assert.equal((await call(service, 'POST', `/shares/${created.id}/connect`, { token: created.token })).status, 401);
    await rejectsWithStatus(sdk.deleteShare(tenant.projectId, created.id), 404);
    // The SDK's default settings name no room.
    await rejectsWithStatus(sdk.createShare(tenant.projectId), 400);
  });

  test('external OAuth, project scope: create, list (no secret), update keeps the secret, delete by delegate', async () => {
    const id = await sdk.createProjectExternalOAuthRegistration({ projectId: tenant.projectId, oauth: provider, clientId: 'sdk-client', clientSecret: SECRET, delegatedTo: 'agent-7' });
    assert.equal(typeof id, 'string');
    const listed = await sdk.listProjectExternalOAuthRegistrations({ projectId: tenant.projectId });
    const registration = listed.find((r) => r.id === id);
    assert.ok(registration);
    assert.equal(registration.clientId, 'sdk-client');
    assert.equal(registration.delegatedTo, 'agent-7');
    assert.equal(registration.clientSecret, null, 'never returned');
    assert.deepEqual(registration.oauth, provider);
    assert.equal(registration.connector, null);
    assert.deepEqual((await sdk.listProjectExternalOAuthRegistrations({ projectId: tenant.projectId, delegatedTo: 'someone-else' })).map((r) => r.id), []);

    await sdk.updateProjectExternalOAuthRegistration({
      projectId: tenant.projectId, registrationId: id, oauth: { ...provider, scopes: ['read', 'write'] }, clientId: 'sdk-client-2', delegatedTo: 'agent-7',
      connector: { serverUrl: 'https://mcp.example.com/sse' },
    });
    const updated = (await sdk.listProjectExternalOAuthRegistrations({ projectId: tenant.projectId, delegatedTo: 'agent-7' })).find((r) => r.id === id)!;
    assert.equal(updated.clientId, 'sdk-client-2');
    assert.deepEqual(updated.oauth?.scopes, ['read', 'write']);
    assert.deepEqual(updated.connector, { openaiConnectorId: null, serverUrl: 'https://mcp.example.com/sse', clientSecretId: null });
    const raw = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/external-oauth`, { token: tenant.apiKey });
    assert.equal(raw.body.registrations.find((r: { id: string }) => r.id === id).has_client_secret, true, 'the update without a secret kept it');
    assert.ok(!JSON.stringify(raw.body).includes(SECRET));

    await rejectsWithStatus(sdk.deleteProjectExternalOAuthRegistration({ projectId: tenant.projectId, registrationId: id, delegatedTo: 'someone-else' }), 404);
    await sdk.deleteProjectExternalOAuthRegistration({ projectId: tenant.projectId, registrationId: id, delegatedTo: 'agent-7' });
    assert.ok(!(await sdk.listProjectExternalOAuthRegistrations({ projectId: tenant.projectId })).some((r) => r.id === id));
  });

  test('external OAuth, room scope: create, list, update, delete, kept apart from the project and other rooms', async () => {
    const id = await sdk.createRoomExternalOAuthRegistration({ projectId: tenant.projectId, roomName: 'sdk-shared', oauth: provider, clientId: 'room-client', clientSecret: SECRET });
    const inRoom = await sdk.listRoomExternalOAuthRegistrations({ projectId: tenant.projectId, roomName: 'sdk-shared' });
    assert.deepEqual(inRoom.map((r) => [r.id, r.clientId, r.delegatedTo, r.clientSecret]), [[id, 'room-client', '', null]]);
    assert.deepEqual(await sdk.listRoomExternalOAuthRegistrations({ projectId: tenant.projectId, roomName: 'sdk-other' }), []);
    assert.ok(!(await sdk.listProjectExternalOAuthRegistrations({ projectId: tenant.projectId })).some((r) => r.id === id));

    await rejectsWithStatus(sdk.updateRoomExternalOAuthRegistration({ projectId: tenant.projectId, roomName: 'sdk-other', registrationId: id, oauth: provider, clientId: 'x' }), 404);
    await sdk.updateRoomExternalOAuthRegistration({ projectId: tenant.projectId, roomName: 'sdk-shared', registrationId: id, oauth: provider, clientId: 'room-client-2', delegatedTo: 'guest' });
    assert.deepEqual((await sdk.listRoomExternalOAuthRegistrations({ projectId: tenant.projectId, roomName: 'sdk-shared', delegatedTo: 'guest' })).map((r) => r.clientId), ['room-client-2']);
    await rejectsWithStatus(sdk.deleteProjectExternalOAuthRegistration({ projectId: tenant.projectId, registrationId: id }), 404);
    await sdk.deleteRoomExternalOAuthRegistration({ projectId: tenant.projectId, roomName: 'sdk-shared', registrationId: id });
    assert.deepEqual(await sdk.listRoomExternalOAuthRegistrations({ projectId: tenant.projectId, roomName: 'sdk-shared' }), []);
    await rejectsWithStatus(sdk.createRoomExternalOAuthRegistration({ projectId: tenant.projectId, roomName: 'no-such-room', oauth: provider, clientId: 'x' }), 404);
  });

  test('repositories: create, get, list, update, delete', async () => {
    const created = await sdk.createRepository({ projectId: tenant.projectId, name: 'sdk/app', description: 'From the SDK', annotations: { team: 'sdk' } });
    assert.equal(created.name, 'sdk/app');
    assert.equal(created.projectId, tenant.projectId);
    assert.equal(created.description, 'From the SDK');
    assert.deepEqual(created.annotations, { team: 'sdk' });
    assert.ok(created.createdAt instanceof Date && !Number.isNaN(created.createdAt.getTime()));

    assert.deepEqual(await sdk.getRepository(tenant.projectId, created.id), created);
    assert.deepEqual((await sdk.listRepositories(tenant.projectId)).map((r) => r.name), ['sdk/app']);
    const updated = await sdk.updateRepository({ projectId: tenant.projectId, repositoryId: created.id, name: 'sdk/app-2' });
    assert.equal(updated.id, created.id);
    assert.equal(updated.name, 'sdk/app-2');
    assert.equal(updated.description, '');
    await rejectsWithStatus(sdk.createRepository({ projectId: tenant.projectId, name: 'SDK/Not-Valid' }), 400);
    await rejectsWithStatus(sdk.createRepository({ projectId: tenant.projectId, name: 'sdk/app-2' }), 409);

    const token = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/repositories/${created.id}/token`, { token: tenant.apiKey, json: { actions: ['pull'] } });
    assert.equal(token.status, 200);

    await sdk.deleteRepository(tenant.projectId, created.id);
    await rejectsWithStatus(sdk.getRepository(tenant.projectId, created.id), 404);
    assert.deepEqual(await sdk.listRepositories(tenant.projectId), []);
  });
});

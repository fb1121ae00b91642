// The official TypeScript SDK (@meshagent/meshagent 0.39.9, a devDependency; nothing is installed at
// run time) against a live server on both engines: every SDK method for the foundation endpoints
// must succeed and give back what was written: projects, project users, profiles, rooms, connect,
// API keys and SDK-minted participant tokens, storage, OAuth clients and webhooks (managed agents,
// which 0.39.9 lacks, over plain HTTP).
//
// The package's "import" build (dist/esm) is CommonJS code under a `"type": "module"` marker and
// does not load on Node 24, so the SDK is loaded through require(), which picks dist/node.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type * as Sdk from '@meshagent/meshagent';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const require = createRequire(import.meta.url);
const { Meshagent, ParticipantToken, ApiScope, RoomException, parseApiKey } = require('@meshagent/meshagent') as typeof Sdk;

/** The SDK throws RoomException("Failed to <action>. Status code: N, body: …") on any non-2xx. */
async function rejectsWithStatus(promise: Promise<unknown>, status: number): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof RoomException, `expected a RoomException, got ${String(error)}`);
    assert.match((error as Error).message, new RegExp(`Status code: ${status}\\b`));
    return true;
  });
}

forEachEngine('official SDK', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  /** The tenant admin, with a personal access token. */
  let asUser: InstanceType<typeof Meshagent>;
  /** The same project, with its admin API key. */
  let asKey: InstanceType<typeof Meshagent>;

  before(async () => {
    // Webhook targets below are on loopback; nothing delivers to them (no workers in tests).
    service = await startTestService(engine, { ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    tenant = await createTenant(service, 'sdk');
    asUser = new Meshagent({ baseUrl: service.url, token: tenant.userToken });
    asKey = new Meshagent({ baseUrl: service.url, token: tenant.apiKey });
  });
  after(() => service?.stop());

  test('projects: create, list, get, settings, status, role', async () => {
    const created = await asUser.createProject('sdk made', { theme: 'dark', limits: { rooms: 5 } });
    const projectId = created.id as string;
    assert.equal(typeof projectId, 'string');
    assert.equal(created.name, 'sdk made');
    assert.equal(created.owner_user_id, tenant.userId);
    assert.equal(typeof created.project_key, 'string');
    assert.deepEqual(created.settings, { theme: 'dark', limits: { rooms: 5 } });

    const listed = await asUser.listProjects();
    const names = (listed.projects as { id: string; name: string }[]).map((p) => [p.id, p.name]);
    assert.deepEqual(names.sort(), [[projectId, 'sdk made'], [tenant.projectId, 'sdk project']].sort());
    // An API key sees its own project only.
    assert.deepEqual(((await asKey.listProjects()).projects as { id: string }[]).map((p) => p.id), [tenant.projectId]);

    const got = await asUser.getProject(projectId);
    assert.equal(got.id, projectId);
    assert.equal(got.name, 'sdk made');

    const updated = await asUser.updateProjectSettings(projectId, { theme: 'light' });
    assert.deepEqual(updated.settings, { theme: 'light' });
    assert.deepEqual((await asUser.getProject(projectId)).settings, { theme: 'light' });

    assert.equal(await asUser.getStatus(projectId), true);
    assert.equal(await asUser.getProjectRole(projectId), 'admin');
    assert.equal(await asKey.getProjectRole(tenant.projectId), 'admin');
    // Another user's project is invisible to the key.
    await rejectsWithStatus(asKey.getProject(projectId), 404);
  });

  test('project users: add with legacy flags, list, role, remove', async () => {
    const other = await createUserWithToken(service, 'sdk-member');
    const asOther = new Meshagent({ baseUrl: service.url, token: other.token });
    await rejectsWithStatus(asOther.getProject(tenant.projectId), 404);

    const added = await asUser.addUserToProject(tenant.projectId, other.userId, { isDeveloper: true, canCreateRooms: true });
    assert.deepEqual(added, { ok: true, status: 'added', user_id: other.userId }, 'the SDK hands back the answer as sent: ok, and what happened');

    const page = await asUser.getUsersInProjectPage(tenant.projectId, { count: 10, offset: 0 });
    assert.equal(page.total, 2);
    const member = page.users.find((u) => u.user_id === other.userId);
    assert.ok(member, 'the added user is listed');
    assert.equal(member.email, other.email);
    assert.equal(member.is_developer, true, JSON.stringify(member));
    assert.equal(member.can_create_rooms, true);
    assert.equal(member.is_admin, false);

    const filtered = await asUser.getUsersInProjectPage(tenant.projectId, { filter: 'sdk-member' });
    assert.deepEqual(filtered.users.map((u) => u.user_id), [other.userId]);
    const all = await asUser.getUsersInProject(tenant.projectId);
    assert.equal(all.total, 2);

    assert.equal(await asOther.getProjectRole(tenant.projectId), 'developer');
    assert.equal((await asOther.getProject(tenant.projectId)).id, tenant.projectId);

    // An admin may read a member's profile by id.
    const profile = await asUser.getUserProfile(other.userId);
    assert.equal(profile.id, other.userId);
    assert.equal(profile.email, other.email);

    assert.deepEqual(await asUser.removeUserFromProject(tenant.projectId, other.userId), { ok: true });
    const after = await asUser.getUsersInProjectPage(tenant.projectId);
    assert.deepEqual(after.users.map((u) => u.user_id), [tenant.userId]);
    await rejectsWithStatus(asOther.getProjectRole(tenant.projectId), 404);
  });

  test('profiles: me, by id, update', async () => {
    const me = await asUser.getUserProfile('me');
    assert.equal(me.id, tenant.userId);
    assert.equal(me.email, tenant.email);
    assert.deepEqual(await asUser.updateUserProfile('me', 'Ada', 'Lovelace'), { ok: true });
    const byId = await asUser.getUserProfile(tenant.userId);
    assert.deepEqual(byId, { id: tenant.userId, email: tenant.email, first_name: 'Ada', last_name: 'Lovelace' });
    // API keys may read the profiles of their project's members.
    assert.equal((await asKey.getUserProfile(tenant.userId)).first_name, 'Ada');
  });

  test('rooms: create, get, list, rename keeps id, delete', async () => {
    const member = await createUserWithToken(service, 'sdk-room-guest');
    const scope = ApiScope.userDefault();
    const room = await asKey.createRoom({
      projectId: tenant.projectId,
      name: 'sdk-lobby',
      metadata: { topic: 'launch', nested: { n: 1 } },
      annotations: { team: 'core' },
      permissions: { [member.userId]: scope },
    });
    assert.equal(room.name, 'sdk-lobby');
    assert.deepEqual(room.metadata, { topic: 'launch', nested: { n: 1 } });
    assert.deepEqual(room.annotations, { team: 'core' });
    // The SDK's Room type drops permissions; check over the wire that the ApiScope was kept as sent.
    const raw = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/rooms/sdk-lobby`, { token: tenant.apiKey });
    assert.deepEqual(raw.body.permissions, { [member.userId]: scope.toJSON() });

    const again = await asKey.createRoom({ projectId: tenant.projectId, name: 'sdk-lobby', ifNotExists: true });
    assert.equal(again.id, room.id);
    assert.deepEqual(again.metadata, room.metadata);
    await rejectsWithStatus(asKey.createRoom({ projectId: tenant.projectId, name: 'sdk-lobby' }), 409);

    const fetched = await asKey.getRoom(tenant.projectId, 'sdk-lobby');
    assert.deepEqual(fetched, room);

    await asKey.createRoom({ projectId: tenant.projectId, name: 'sdk-annex' });
    const listed = await asKey.listRooms(tenant.projectId, { limit: 10, offset: 0, orderBy: 'room_name' });
    assert.deepEqual(listed.map((r) => r.name), ['sdk-annex', 'sdk-lobby']);
    assert.deepEqual((await asKey.listRooms(tenant.projectId, { limit: 1, offset: 1 })).map((r) => r.name), ['sdk-lobby']);

    await asKey.updateRoom(tenant.projectId, room.id, 'sdk-hall', { metadata: { topic: 'renamed' }, annotations: { team: 'ops' } });
    const renamed = await asKey.getRoom(tenant.projectId, 'sdk-hall');
    assert.deepEqual(renamed, { id: room.id, name: 'sdk-hall', metadata: { topic: 'renamed' }, annotations: { team: 'ops' } });
    await rejectsWithStatus(asKey.getRoom(tenant.projectId, 'sdk-lobby'), 404);

    await asKey.deleteRoom(tenant.projectId, room.id);
    await rejectsWithStatus(asKey.getRoom(tenant.projectId, 'sdk-hall'), 404);
    await rejectsWithStatus(asKey.deleteRoom(tenant.projectId, room.id), 404);
    assert.deepEqual((await asKey.listRooms(tenant.projectId)).map((r) => r.name), ['sdk-annex']);
  });

  test('connectRoom: the jwt validates online and offline (JWKS)', async () => {
    await asUser.createRoom({ projectId: tenant.projectId, name: 'sdk-stage', ifNotExists: true });
    const info = await asUser.connectRoom(tenant.projectId, 'sdk-stage');
    assert.equal(info.roomName, 'sdk-stage');
    assert.equal(info.projectId, tenant.projectId);
    assert.equal(info.roomUrl, `${service.url.replace(/^http/, 'ws')}/rooms/sdk-stage`);

    const online = await call(service, 'POST', '/api/participant-token/validate', { json: { token: info.jwt } });
    assert.equal(online.status, 200);
    assert.equal(online.body.sub, tenant.projectId);
    assert.equal(online.body.name, tenant.email);

    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(info.jwt, jwks, { issuer: service.url });
    const token = ParticipantToken.fromJson(payload);
    assert.equal(token.projectId, tenant.projectId);
    assert.equal(token.grantScope('room'), 'sdk-stage');
    assert.equal(token.role, 'user');
    assert.ok(token.getApiGrant() instanceof ApiScope, 'the api grant parses as an ApiScope');

    await rejectsWithStatus(asUser.connectRoom(tenant.projectId, 'no-such-room'), 404);
  });

  test('api keys: create, use, sign participant tokens, list without values, delete', async () => {
    const created = await asUser.createApiKey(tenant.projectId, 'sdk key', 'made by the SDK test');
    const value = created.value as string;
    assert.match(value, /^ma-[A-Za-z0-9._]{22}-[A-Za-z0-9._]{22}-.+$/);
    // The SDK's own parser reads our key: its id is the key's id, its project is ours.
    assert.deepEqual({ id: parseApiKey(value).id, projectId: parseApiKey(value).projectId }, { id: created.id, projectId: tenant.projectId });
    assert.ok(parseApiKey(value).secret.length >= 20);
    assert.equal(created.name, 'sdk key');
    assert.equal(created.description, 'made by the SDK test');

    // The value is a Meshagent token for further calls.
    const withNewKey = new Meshagent({ baseUrl: service.url, token: value });
    assert.equal((await withNewKey.getProject(tenant.projectId)).id, tenant.projectId);
    assert.equal((await withNewKey.createRoom({ projectId: tenant.projectId, name: 'sdk-by-new-key' })).name, 'sdk-by-new-key');

    // An application mints its own participant token from the key; our validator accepts it.
    const minted = new ParticipantToken({ name: 'sdk-app-user' });
    minted.addRoomGrant('sdk-by-new-key');
    minted.addRoleGrant('user');
    minted.addApiGrant(ApiScope.userDefault());
    const jwt = await minted.toJwt({ apiKey: value });
    const validated = await call(service, 'POST', '/api/participant-token/validate', { json: { token: jwt } });
    assert.equal(validated.status, 200, JSON.stringify(validated.body));
    assert.equal(validated.body.name, 'sdk-app-user');
    assert.equal(validated.body.sub, tenant.projectId);
    assert.equal(validated.body.kid, created.id);
    assert.deepEqual(validated.body.grants.find((g: { name: string }) => g.name === 'room'), { name: 'room', scope: 'sdk-by-new-key' });

    const listed = await asUser.listApiKeys(tenant.projectId);
    const keys = listed.keys as Record<string, unknown>[];
    const mine = keys.find((k) => k.id === created.id);
    assert.ok(mine, 'the new key is listed');
    assert.equal(mine.name, 'sdk key');
    for (const key of keys) {
      assert.ok(!('value' in key), 'list never carries values');
      assert.ok(!JSON.stringify(key).includes(parseApiKey(value).secret), 'nor the secret');
    }

    await asUser.deleteApiKey(tenant.projectId, created.id as string);
    await rejectsWithStatus(withNewKey.getProject(tenant.projectId), 401);
    const afterRevoke = await call(service, 'POST', '/api/participant-token/validate', { json: { token: jwt } });
    assert.equal(afterRevoke.status, 401);
    assert.ok(!((await asUser.listApiKeys(tenant.projectId)).keys as { id: string }[]).some((k) => k.id === created.id));
    await rejectsWithStatus(asUser.deleteApiKey(tenant.projectId, created.id as string), 404);
  });

  test('storage: upload and download round-trip bytes', async () => {
    const bytes = new Uint8Array(70_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) % 256;
    await asKey.upload({ projectId: tenant.projectId, path: 'sdk/data/blob.bin', data: bytes });
    const back = await asKey.download({ projectId: tenant.projectId, path: 'sdk/data/blob.bin' });
    assert.deepEqual(Buffer.from(back), Buffer.from(bytes));
    // An ArrayBuffer body, overwriting, read back by the user credential.
    await asKey.upload({ projectId: tenant.projectId, path: 'sdk/data/blob.bin', data: new TextEncoder().encode('second').buffer });
    assert.equal(new TextDecoder().decode(await asUser.download({ projectId: tenant.projectId, path: 'sdk/data/blob.bin' })), 'second');
    await rejectsWithStatus(asKey.download({ projectId: tenant.projectId, path: 'sdk/missing.bin' }), 404);
    await rejectsWithStatus(asKey.upload({ projectId: tenant.projectId, path: '../escape.bin', data: bytes }), 400);
  });

  test('OAuth clients: create (secret once), list, get, update, delete', async () => {
    const sortedScope = (scope: string) => scope.split(' ').sort().join(' ');
    const created = await asUser.createOAuthClient(tenant.projectId, {
      grantTypes: ['authorization_code', 'refresh_token'],
      responseTypes: ['code'],
      redirectUris: ['https://app.example.com/callback'],
      scope: 'profile:read rooms:connect',
      metadata: { name: 'SDK App', theme: 'dark' },
    });
    assert.ok(created.clientSecret.length >= 20, 'the secret is returned on create');
    assert.equal(created.projectId, tenant.projectId);
    assert.deepEqual(created.grantTypes, ['authorization_code', 'refresh_token']);
    assert.deepEqual(created.responseTypes, ['code']);
    assert.deepEqual(created.redirectUris, ['https://app.example.com/callback']);
    assert.equal(sortedScope(created.scope), 'profile:read rooms:connect');
    assert.equal(created.metadata.name, 'SDK App');
    assert.equal(created.metadata.theme, 'dark');

    const listed = await asUser.listOAuthClients(tenant.projectId);
    const mine = listed.find((c) => c.clientId === created.clientId);
    assert.ok(mine, 'the client is listed');
    assert.equal(mine.clientSecret, '', 'list never carries the secret');
    const page = await asKey.listOAuthClientsPage(tenant.projectId, { count: 10, offset: 0 });
    assert.ok(page.total >= 1);
    assert.ok(page.clients.some((c) => c.clientId === created.clientId));

    const got = await asUser.getOAuthClient(tenant.projectId, created.clientId);
    assert.deepEqual({ ...got, clientSecret: undefined }, { ...created, clientSecret: undefined });
    assert.equal(got.clientSecret, '');

    const updated = await asUser.updateOAuthClient(tenant.projectId, created.clientId, {
      redirectUris: ['https://app.example.com/callback', 'http://127.0.0.1:8765/callback'],
      scope: 'profile:read',
      metadata: { theme: 'light' },
    });
    assert.deepEqual(updated, { ok: true });
    const after = await asUser.getOAuthClient(tenant.projectId, created.clientId);
    assert.deepEqual(after.redirectUris, ['https://app.example.com/callback', 'http://127.0.0.1:8765/callback']);
    assert.equal(after.scope, 'profile:read');
    assert.deepEqual(after.grantTypes, ['authorization_code', 'refresh_token'], 'fields not sent keep their value');
    assert.equal(after.metadata.theme, 'light');
    assert.equal(after.metadata.name, 'SDK App', 'metadata merges');

    await asUser.deleteOAuthClient(tenant.projectId, created.clientId);
    await rejectsWithStatus(asUser.getOAuthClient(tenant.projectId, created.clientId), 404);
    assert.ok(!(await asUser.listOAuthClients(tenant.projectId)).some((c) => c.clientId === created.clientId));
  });

  test('webhooks: create, list, update, delete', async () => {
    const created = await asUser.createWebhook(tenant.projectId, {
      name: 'sdk-hook',
      url: 'http://127.0.0.1:9/hooks/atrium',
      events: ['room.started', 'room.ended'],
      description: 'made by the SDK test',
    });
    const id = created.id as string;
    assert.equal(typeof id, 'string');
    assert.equal(created.name, 'sdk-hook');
    assert.equal(created.url, 'http://127.0.0.1:9/hooks/atrium');
    assert.deepEqual(created.events, ['room.started', 'room.ended']);
    assert.equal(created.description, 'made by the SDK test');
    assert.equal(created.action, '');
    assert.equal(created.payload, null);
    assert.equal(created.enabled, true);

    const listed = (await asKey.listWebhooks(tenant.projectId)).webhooks as Record<string, unknown>[];
    assert.deepEqual(listed.find((w) => w.id === id), created);

    const updated = await asUser.updateWebhook(tenant.projectId, id, {
      name: 'sdk-hook-2',
      url: 'http://127.0.0.1:9/hooks/other',
      events: ['*'],
      action: 'call',
      payload: { agent: 'helper' },
    });
    assert.equal(updated.id, id);
    assert.equal(updated.name, 'sdk-hook-2');
    assert.equal(updated.url, 'http://127.0.0.1:9/hooks/other');
    assert.deepEqual(updated.events, ['*']);
    assert.equal(updated.action, 'call');
    assert.deepEqual(updated.payload, { agent: 'helper' });
    const relisted = (await asUser.listWebhooks(tenant.projectId)).webhooks as Record<string, unknown>[];
    assert.equal(relisted.find((w) => w.id === id)?.name, 'sdk-hook-2');

    await asUser.deleteWebhook(tenant.projectId, id);
    assert.ok(!((await asUser.listWebhooks(tenant.projectId)).webhooks as { id: string }[]).some((w) => w.id === id));
    await rejectsWithStatus(asUser.deleteWebhook(tenant.projectId, id), 404);
  });

  // 0.39.9 has no managed-agent methods; the SDK's wire shapes for managed agents over plain HTTP.
  test('managed agents (no SDK methods in 0.39.9): create, get, update, connect, delete', async () => {
    const base = `/accounts/projects/${tenant.projectId}/agents`;
    const configuration = { version: 'v1', kind: 'ManagedAgent', metadata: { name: 'sdk-helper', annotations: { a: 'b' } }, image: 'example/agent:1' };
    const created = await call(service, 'POST', base, { token: tenant.apiKey, json: { configuration, if_not_exists: false } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.name, 'sdk-helper');
    assert.deepEqual(created.body.configuration, configuration);
    const again = await call(service, 'POST', base, { token: tenant.apiKey, json: { configuration, if_not_exists: true } });
    assert.equal(again.body.id, created.body.id);
    const got = await call(service, 'GET', `${base}/sdk-helper`, { token: tenant.apiKey });
    assert.equal(got.body.id, created.body.id);
    const changed = { ...configuration, image: 'example/agent:2' };
    const updated = await call(service, 'PUT', `${base}/${created.body.id}`, { token: tenant.apiKey, json: { configuration: changed } });
    assert.equal(updated.status, 200);
    assert.deepEqual((await call(service, 'GET', `${base}/sdk-helper`, { token: tenant.apiKey })).body.configuration, changed);
    const connected = await call(service, 'POST', `${base}/sdk-helper/connect`, { token: tenant.apiKey, json: {} });
    assert.equal(connected.status, 200);
    assert.deepEqual(Object.keys(connected.body).sort(), ['agent_name', 'agent_url', 'jwt', 'project_id']);
    assert.equal(connected.body.agent_name, 'sdk-helper');
    assert.equal((await call(service, 'POST', '/api/participant-token/validate', { json: { token: connected.body.jwt } })).status, 200);
    assert.equal((await call(service, 'DELETE', `${base}/${created.body.id}`, { token: tenant.apiKey })).status, 200);
    assert.equal((await call(service, 'GET', `${base}/sdk-helper`, { token: tenant.apiKey })).status, 404);
  });
});

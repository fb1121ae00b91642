// Escalations inside one project, each as it was found: a credential reaching, through a token it
// signs or mints or through a side door, what it may not do itself. Participant tokens are signed
// the official SDK's way (`ParticipantToken.toJwt({ apiKey })`, HS256).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import type * as Sdk from '@meshagent/meshagent';
import { FULL_SCOPE, USER_SCOPE } from '../../src/modules/participant-tokens/service.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/llm-upstream.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { eventually } from '../support/webhooks.ts';

const { ParticipantToken, ParticipantGrant } = createRequire(import.meta.url)('@meshagent/meshagent') as typeof Sdk;

forEachEngine('escalations', (engine) => {
  let upstream: FakeUpstream;
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    upstream = await startFakeUpstream();
    // One message flushes a subscription's file at once.
    service = await startTestService(engine, { ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`, ATRIUM_OPENAI_API_KEY: 'sk-operator', ATRIUM_FEEDS_FLUSH_MESSAGES: '1' });
    tenant = await createTenant(service, 'escalations');
  });
  after(async () => {
    await service?.stop();
    await upstream?.close();
  });

  const project = () => `/accounts/projects/${tenant.projectId}`;
  const keyWith = async (roles: string[]) => {
    const r = await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: `key-${roles.join('-')}`, roles } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.value as string;
  };
  const memberWith = async (roles: string[]) => {
    const user = await createUserWithToken(service, 'escalation-member');
    assert.equal((await call(service, 'POST', `${project()}/users`, { token: tenant.apiKey, json: { user_id: user.userId, roles } })).status, 200);
    return user;
  };
  const signed = (apiKey: string, grants: { name: string; scope: unknown }[]) => new ParticipantToken({ name: 'app-user', grants: grants.map((g) => ParticipantGrant.fromJson(g)) }).toJwt({ apiKey });
  // Users name the project in a header; keys and participant tokens are bound to theirs.
  const headers = () => ({ 'service-project-id': tenant.projectId });
  const models = (token: string) => call(service, 'GET', '/openai/v1/models', { token, headers: headers() });
  const chat = (token: string) => call(service, 'POST', '/openai/v1/chat/completions', { token, headers: headers(), json: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });

  test('a participant token signed with a key that may not use the LLM proxy gets no further with an llm grant', async () => {
    for (const roles of [['member'], ['room_server']]) {
      const key = await keyWith(roles);
      assert.equal((await models(key)).status, 403, `the key itself (${roles}) is refused`);
      const token = await signed(key, [{ name: 'api', scope: { llm: {} } }]);
      const calls = upstream.requests.length;
      assert.equal((await chat(token)).status, 403, `a token it signed (${roles}) spends nothing on the operator's key`);
      assert.equal(upstream.requests.length, calls, 'no call went upstream');
    }
    // The SDK's way keeps working for a key that holds the role: no exp, valid while the key exists.
    const proxyKey = await keyWith(['llm_proxy_user']);
    const token = await signed(proxyKey, [{ name: 'api', scope: { llm: {} } }]);
    assert.equal(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp, undefined);
    assert.equal((await chat(token)).status, 200);
  });

  test('a participant token signed with a key that cannot see a private feed does not publish to it', async () => {
    const feed = (await call(service, 'POST', `${project()}/feeds`, { token: tenant.apiKey, json: { name: 'private-orders' } })).body.feed;
    const key = await keyWith(['member']);
    assert.equal((await call(service, 'GET', `${project()}/feeds/${feed.id}`, { token: key })).status, 404, 'the key cannot even see it');
    for (const scope of ['*', feed.id, feed.name]) {
      const token = await signed(key, [{ name: 'feed', scope }]);
      const published = await call(service, 'POST', `${project()}/feeds/${feed.id}/messages`, { token, json: { forged: scope } });
      assert.equal(published.status, 404, `a feed grant ${scope} of the key's token`);
    }
    const publisher = await keyWith(['feed_manager']);
    const allowed = await signed(publisher, [{ name: 'feed', scope: '*' }]);
    assert.equal((await call(service, 'POST', `${project()}/feeds/${feed.id}/messages`, { token: allowed, json: { ok: 1 } })).status, 201, 'a key that may publish signs tokens that may');
  });

  test('validate vouches for no more than the signing key gets by connecting', async () => {
    const room = (await call(service, 'POST', `${project()}/rooms`, { token: tenant.apiKey, json: { name: 'vault' } })).body;
    const key = await keyWith(['member']);
    const own = await call(service, 'POST', `${project()}/rooms/${room.name}/connect`, { token: key, json: {} });
    assert.equal(own.status, 200);
    const ownScope = (await call(service, 'POST', '/api/participant-token/validate', { json: { token: own.body.jwt } })).body.grants.find((g: { name: string }) => g.name === 'api').scope;
    assert.deepEqual(ownScope, USER_SCOPE, "the key's own connect gives the participant defaults");

    const token = await signed(key, [
      { name: 'room', scope: room.name },
      { name: 'role', scope: 'admin' },
      { name: 'api', scope: { admin: {}, tunnels: {}, secrets: {}, livekit: {} } },
      { name: 'tunnel_ports', scope: '22' },
    ]);
    const validated = await call(service, 'POST', '/api/participant-token/validate', { json: { token } });
    assert.equal(validated.status, 200);
    assert.deepEqual(validated.body.grants, [{ name: 'room', scope: room.name }, { name: 'api', scope: { secrets: {}, livekit: {} } }], 'admin, tunnels, the admin role and tunnel ports are left out');

    // A key that holds the room fully keeps all of it.
    const full = await signed(tenant.apiKey, [{ name: 'room', scope: room.name }, { name: 'role', scope: 'agent' }, { name: 'api', scope: FULL_SCOPE }]);
    assert.deepEqual((await call(service, 'POST', '/api/participant-token/validate', { json: { token: full } })).body.grants, [{ name: 'room', scope: room.name }, { name: 'role', scope: 'agent' }, { name: 'api', scope: FULL_SCOPE }]);
  });

  test('a member refused at a private room does not read its files through project storage', async () => {
    const room = (await call(service, 'POST', `${project()}/rooms`, { token: tenant.apiKey, json: { name: 'board' } })).body;
    const upload = await call(service, 'POST', `/projects/${tenant.projectId}/storage/upload?path=${encodeURIComponent('rooms/board/minutes.txt')}`, {
      token: tenant.apiKey, body: 'secret minutes', headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(upload.status, 200);
    // A private feed's subscription writes into the room too.
    const feed = (await call(service, 'POST', `${project()}/feeds`, { token: tenant.apiKey, json: { name: 'board-feed' } })).body.feed;
    assert.equal((await call(service, 'POST', `${project()}/feeds/${feed.id}/subscriptions`, { token: tenant.apiKey, json: { room: 'board', path: 'feed' } })).status, 201);
    assert.equal((await call(service, 'POST', `${project()}/feeds/${feed.id}/messages`, { token: tenant.apiKey, json: { vote: 'no' } })).status, 201);
    const list = (token: string, path: string) => call(service, 'GET', `/projects/${tenant.projectId}/storage?path=${encodeURIComponent(path)}`, { token });
    const fed = await eventually(async () => (await list(tenant.apiKey, 'rooms/board/feed')).body.files?.[0]?.path as string | undefined);

    const member = await memberWith(['member']);
    assert.equal((await call(service, 'POST', `${project()}/rooms/board/connect`, { token: member.token, json: {} })).status, 403, 'refused at the room');
    for (const path of ['rooms/board', 'rooms/board/feed', './rooms//board/']) assert.equal((await list(member.token, path)).status, 403, `listing ${path}`);
    for (const path of ['rooms/board/minutes.txt', fed]) {
      assert.equal((await call(service, 'GET', `/projects/${tenant.projectId}/storage/download?path=${encodeURIComponent(path)}`, { token: member.token })).status, 403, `downloading ${path}`);
    }
    assert.equal((await list(member.token, 'rooms')).status, 200, 'the folder of all rooms lists their names, as the room list does');

    // A role on the room's policy lets its holder in, files included.
    assert.equal((await call(service, 'POST', `${project()}/policies/resources/room/${room.id}`, { token: tenant.apiKey, json: { subject: { type: 'user', id: member.userId }, roles: ['viewer'] } })).status, 200);
    assert.equal((await list(member.token, 'rooms/board')).status, 200);
    assert.equal((await call(service, 'GET', `/projects/${tenant.projectId}/storage/download?path=rooms/board/minutes.txt`, { token: member.token })).body, 'secret minutes');
  });

  test('connecting to an agent or a room gives no llm to a caller that may not use the LLM proxy', async () => {
    const agent = (await call(service, 'POST', `${project()}/agents`, { token: tenant.apiKey, json: { configuration: { metadata: { name: 'helper' } } } })).body;
    const room = (await call(service, 'POST', `${project()}/rooms`, { token: tenant.apiKey, json: { name: 'studio' } })).body;
    const member = await memberWith(['member']);
    await call(service, 'POST', `${project()}/policies/resources/room/${room.id}`, { token: tenant.apiKey, json: { subject: { type: 'user', id: member.userId }, roles: ['admin'] } });
    assert.equal((await models(member.token)).status, 403, 'the member itself is refused');
    for (const path of [`agents/${agent.name}/connect`, `rooms/${room.name}/connect`]) {
      const connected = await call(service, 'POST', `${project()}/${path}`, { token: member.token, json: {} });
      assert.equal(connected.status, 200, path);
      assert.equal((await models(connected.body.jwt)).status, 403, `${path}: its token is refused too`);
    }
    const proxyUser = await memberWith(['llm_proxy_user']);
    const connected = await call(service, 'POST', `${project()}/agents/${agent.name}/connect`, { token: proxyUser.token, json: {} });
    assert.equal((await models(connected.body.jwt)).status, 200, 'an LLM proxy user\'s token may');
  });
});

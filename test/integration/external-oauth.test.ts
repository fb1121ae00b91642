// External OAuth registrations of projects and rooms, on both engines: the client secret is stored
// encrypted and never comes back, rooms and the project keep theirs apart, and bad input is refused
// without writing anything.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { fingerprint } from '../support/walk.ts';

const SECRET = 'very-secret-client-value-9f3a';
const provider = { authorization_endpoint: 'https://idp.example.com/authorize', token_endpoint: 'https://idp.example.com/token', scopes: ['read', 'write'], no_pkce: false };

forEachEngine('external OAuth registrations', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'xoauth');
  });
  after(() => service?.stop());

  const base = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}/external-oauth`;
  const roomBase = (room: string, t: Tenant = tenant) => `/accounts/projects/${t.projectId}/rooms/${room}/external-oauth`;
  const storedSecret = async (id: string) => rowsOf<{ secret: string | null }>(await service.ctx.db.execute(sql`select client_secret_encrypted as secret from external_oauth_registrations where id = ${id}`))[0]?.secret;
  const newRoom = async (name: string, t: Tenant = tenant) => {
    assert.equal((await call(service, 'POST', `/accounts/projects/${t.projectId}/rooms`, { token: t.apiKey, json: { name } })).status, 201);
  };

  test('create, list, replace and delete a project registration; the secret is encrypted and never returned', async () => {
    const created = await call(service, 'POST', base(), { token: tenant.apiKey, json: { oauth: provider, client_id: 'agents', client_secret: SECRET, delegated_to: 'alice@example.com' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id as string;
    assert.deepEqual({ ...created.body, id: 'x', created_at: 'x', updated_at: 'x' }, {
      id: 'x', project_id: tenant.projectId, room_name: null, delegated_to: 'alice@example.com', client_id: 'agents', has_client_secret: true,
      oauth: provider, connector: null, created_at: 'x', updated_at: 'x',
    });
    const stored = await storedSecret(id);
    assert.ok(stored && !stored.includes(SECRET), 'stored encrypted');
    assert.equal(service.ctx.secrets.decrypt(stored), SECRET);

    await call(service, 'POST', base(), { token: tenant.apiKey, json: { oauth: provider, client_id: 'other-client' } });
    const listed = await call(service, 'GET', base(), { token: tenant.apiKey });
    assert.equal(listed.status, 200);
    assert.equal(listed.body.total, 2);
    assert.ok(!JSON.stringify(listed.body).includes(SECRET));
    assert.deepEqual((await call(service, 'GET', `${base()}?delegated_to=alice@example.com`, { token: tenant.apiKey })).body.registrations.map((r: { id: string }) => r.id), [id]);
    assert.deepEqual((await call(service, 'GET', `${base()}?filter=OTHER`, { token: tenant.apiKey })).body.registrations.map((r: { client_id: string }) => r.client_id), ['other-client']);
    assert.equal((await call(service, 'GET', `${base()}?count=1&offset=1`, { token: tenant.apiKey })).body.registrations.length, 1);

    // A replace without a secret keeps it; "" removes it; a new one replaces it.
    const kept = await call(service, 'PUT', `${base()}/${id}`, { token: tenant.apiKey, json: { oauth: { ...provider, scopes: ['read'] }, client_id: 'agents-2' } });
    assert.equal(kept.status, 200);
    assert.equal(kept.body.client_id, 'agents-2');
    assert.equal(kept.body.delegated_to, '', 'PUT replaces: no delegated_to is everyone');
    assert.deepEqual(kept.body.oauth.scopes, ['read']);
    assert.equal(kept.body.has_client_secret, true);
    assert.equal(service.ctx.secrets.decrypt((await storedSecret(id))!), SECRET);
    const replaced = await call(service, 'PUT', `${base()}/${id}`, { token: tenant.apiKey, json: { oauth: { ...provider, client_secret: 'from-oauth' }, client_id: 'agents' } });
    assert.equal(replaced.body.has_client_secret, true);
    assert.ok(!('client_secret' in replaced.body.oauth));
    assert.equal(service.ctx.secrets.decrypt((await storedSecret(id))!), 'from-oauth');
    const removed = await call(service, 'PUT', `${base()}/${id}`, { token: tenant.apiKey, json: { oauth: provider, client_id: 'agents', client_secret: '' } });
    assert.equal(removed.body.has_client_secret, false);
    assert.equal(await storedSecret(id), null);

    // delete ?delegated_to= must match when given.
    await call(service, 'PUT', `${base()}/${id}`, { token: tenant.apiKey, json: { oauth: provider, client_id: 'agents', delegated_to: 'bob' } });
    assert.equal((await call(service, 'DELETE', `${base()}/${id}?delegated_to=alice`, { token: tenant.apiKey })).status, 404);
    assert.deepEqual((await call(service, 'DELETE', `${base()}/${id}?delegated_to=bob`, { token: tenant.apiKey })).body, { ok: true });
    assert.equal((await call(service, 'DELETE', `${base()}/${id}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${base()}/${id}`, { token: tenant.apiKey, json: { oauth: provider, client_id: 'x' } })).status, 404);
  });

  test("a room's registrations are the room's alone, and go with the room", async () => {
    await newRoom('studio');
    await newRoom('annex');
    const made = await call(service, 'POST', roomBase('studio'), { token: tenant.apiKey, json: { oauth: provider, client_id: 'studio-client', client_secret: SECRET } });
    assert.equal(made.status, 201);
    assert.equal(made.body.room_name, 'studio');
    const id = made.body.id as string;
    const studio = await call(service, 'GET', roomBase('studio'), { token: tenant.apiKey });
    assert.deepEqual(studio.body.registrations.map((r: { id: string }) => r.id), [id]);
    assert.ok(!JSON.stringify(studio.body).includes(SECRET));
    assert.ok(!(await call(service, 'GET', base(), { token: tenant.apiKey })).body.registrations.some((r: { id: string }) => r.id === id), 'not among the project\'s');
    assert.equal((await call(service, 'GET', roomBase('annex'), { token: tenant.apiKey })).body.total, 0);

    // Addressed only through its own room.
    assert.equal((await call(service, 'PUT', `${base()}/${id}`, { token: tenant.apiKey, json: { oauth: provider, client_id: 'x' } })).status, 404);
    assert.equal((await call(service, 'DELETE', `${base()}/${id}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${roomBase('annex')}/${id}`, { token: tenant.apiKey, json: { oauth: provider, client_id: 'x' } })).status, 404);
    assert.equal((await call(service, 'DELETE', `${roomBase('annex')}/${id}`, { token: tenant.apiKey })).status, 404);
    const updated = await call(service, 'PUT', `${roomBase('studio')}/${id}`, { token: tenant.apiKey, json: { oauth: provider, client_id: 'studio-2', delegated_to: 'agent-1' } });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.room_name, 'studio');
    assert.equal(updated.body.has_client_secret, true);
    assert.equal((await call(service, 'POST', roomBase('nowhere'), { token: tenant.apiKey, json: { oauth: provider, client_id: 'x' } })).status, 404);

    const room = (await call(service, 'GET', `/accounts/projects/${tenant.projectId}/rooms/studio`, { token: tenant.apiKey })).body;
    assert.equal((await call(service, 'DELETE', `/accounts/projects/${tenant.projectId}/rooms/${room.id}`, { token: tenant.apiKey })).status, 200);
    assert.equal(await storedSecret(id), undefined, 'deleting the room deleted its registrations');
  });

  test('connectors stand in for endpoints; bad providers, URLs and bodies are 4xx, never echo the secret, and write nothing', async () => {
    const viaConnector = await call(service, 'POST', base(), { token: tenant.apiKey, json: { oauth: {}, client_id: 'mcp', connector: { server_url: 'https://mcp.example.com/sse', openai_connector_id: '', client_secret_id: null } } });
    assert.equal(viaConnector.status, 201, JSON.stringify(viaConnector.body));
    assert.deepEqual(viaConnector.body.connector, { server_url: 'https://mcp.example.com/sse' });

    const other = await createTenant(service, 'xoauth-other');
    const theirs = (await call(service, 'POST', base(other), { token: other.apiKey, json: { oauth: provider, client_id: 'theirs', client_secret: SECRET } })).body;
    await newRoom('bad-input');
    const before = await fingerprint(service);
    const bad: [string, unknown, number][] = [
      ['no endpoints and no connector', { oauth: {}, client_id: 'a', client_secret: SECRET }, 400],
      ['one endpoint only', { oauth: { authorization_endpoint: provider.authorization_endpoint }, client_id: 'a', client_secret: SECRET }, 400],
      ['a relative endpoint', { oauth: { ...provider, token_endpoint: '/token' }, client_id: 'a', client_secret: SECRET }, 400],
      ['a javascript: endpoint', { oauth: { ...provider, authorization_endpoint: 'javascript:alert(1)' }, client_id: 'a', client_secret: SECRET }, 400],
      ['an ftp endpoint', { oauth: { ...provider, token_endpoint: 'ftp://idp.example.com/token' }, client_id: 'a', client_secret: SECRET }, 400],
      ['credentials in an endpoint', { oauth: { ...provider, token_endpoint: 'https://user:pw@idp.example.com/token' }, client_id: 'a', client_secret: SECRET }, 400],
      ['a bad connector URL', { oauth: {}, client_id: 'a', connector: { server_url: 'not a url' }, client_secret: SECRET }, 400],
      ['two different secrets', { oauth: { ...provider, client_secret: 'other' }, client_id: 'a', client_secret: SECRET }, 400],
      ['no client_id', { oauth: provider, client_secret: SECRET }, 400],
      ['an empty client_id', { oauth: provider, client_id: '', client_secret: SECRET }, 400],
      ['no oauth', { client_id: 'a', client_secret: SECRET }, 400],
      ['scopes not a list', { oauth: { ...provider, scopes: 'read' }, client_id: 'a', client_secret: SECRET }, 400],
      ['no_pkce not a boolean', { oauth: { ...provider, no_pkce: 'yes' }, client_id: 'a', client_secret: SECRET }, 400],
      ['a secret too long', { oauth: provider, client_id: 'a', client_secret: `${SECRET}${'x'.repeat(4000)}` }, 400],
      ['too many scopes', { oauth: { ...provider, scopes: Array.from({ length: 101 }, (_v, i) => `s${i}`) }, client_id: 'a', client_secret: SECRET }, 400],
      ['a huge body', { oauth: provider, client_id: 'a', client_secret: SECRET, padding: 'x'.repeat(1024 * 1024) }, 413],
      // The SDKs' OAuthClientConfig forbids extra fields; so does the server, at every level.
      ['an unknown field', { oauth: provider, client_id: 'a', client_secret: SECRET, colour: 'blue' }, 400],
      ['an unknown provider field', { oauth: { ...provider, colour: 'blue' }, client_id: 'a', client_secret: SECRET }, 400],
      ['an unknown connector field', { oauth: {}, client_id: 'a', connector: { server_url: 'https://mcp.example.com', colour: 'blue' }, client_secret: SECRET }, 400],
    ];
    for (const [what, json, status] of bad) {
      for (const path of [base(), roomBase('bad-input')]) {
        const r = await call(service, 'POST', path, { token: tenant.apiKey, json });
        assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body).slice(0, 200)}`);
        assert.ok(!JSON.stringify(r.body).includes(SECRET), `${what}: the error does not echo the secret`);
        if (what.startsWith('an unknown')) assert.match(r.body.error.message, /colour/, what);
      }
    }
    assert.equal((await call(service, 'PUT', `${base()}/${theirs.id}`, { token: tenant.apiKey, json: { oauth: provider, client_id: 'mine' } })).status, 404);
    assert.equal((await call(service, 'DELETE', `${base()}/${theirs.id}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${base()}/not-an-id`, { token: tenant.apiKey, json: { oauth: provider, client_id: 'mine' } })).status, 400);
    assert.equal(await fingerprint(service), before, 'nothing was written');
  });

  test('the external_oauth roles gate each route', async () => {
    const member = await createUserWithToken(service, 'xoauth-member');
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: member.userId, roles: ['external_oauth_inventory'] } });
    assert.equal((await call(service, 'GET', base(), { token: member.token })).status, 200);
    assert.equal((await call(service, 'POST', base(), { token: member.token, json: { oauth: provider, client_id: 'a' } })).status, 403);
    const id = (await call(service, 'POST', base(), { token: tenant.apiKey, json: { oauth: provider, client_id: 'gate' } })).body.id;
    assert.equal((await call(service, 'DELETE', `${base()}/${id}`, { token: member.token })).status, 403);
  });
});

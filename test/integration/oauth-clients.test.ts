// Project OAuth client management over HTTP and through the official SDK, on both engines.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import type * as Sdk from '@meshagent/meshagent';
import { secretMatches } from '../../src/platform/crypto/secrets.ts';
import { findOAuthClient } from '../../src/modules/oauth-clients/store.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

// The SDK's ESM build does not load on Node 24; require() picks dist/node.
const require = createRequire(import.meta.url);
const { Meshagent } = require('@meshagent/meshagent') as typeof Sdk;

const WEB_CLIENT = {
  name: 'Web app',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  redirect_uris: ['https://app.example.com/callback'],
  scope: 'profile:read rooms:connect',
  metadata: { logo_url: 'https://app.example.com/logo.png', theme: 'dark', support: 'help@example.com' },
};

forEachEngine('oauth clients', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'oauth-clients');
  });
  after(() => service?.stop());

  const clients = (projectId = tenant.projectId) => `/accounts/projects/${projectId}/oauth/clients`;
  const create = (json: unknown, token = tenant.apiKey, projectId = tenant.projectId) => call(service, 'POST', clients(projectId), { token, json });

  test('create returns the secret once; get and list return it as ""; the stored hash verifies it', async () => {
    const created = await create(WEB_CLIENT);
    assert.equal(created.status, 201);
    const client = created.body;
    assert.match(client.client_id, /^[A-Za-z0-9]{32}$/);
    assert.ok(client.client_secret.length >= 40, 'a high-entropy secret');
    assert.equal(client.name, 'Web app');
    assert.equal(client.project_id, tenant.projectId);
    assert.deepEqual(client.grant_types, WEB_CLIENT.grant_types);
    assert.deepEqual(client.response_types, ['code']);
    assert.deepEqual(client.redirect_uris, WEB_CLIENT.redirect_uris);
    assert.equal(client.scope, 'profile:read rooms:connect');
    assert.deepEqual(client.metadata, WEB_CLIENT.metadata);
    assert.equal(client.official, false);
    assert.equal(client.public, false);
    assert.ok(!Number.isNaN(Date.parse(client.created_at)));

    const got = await call(service, 'GET', `${clients()}/${client.client_id}`, { token: tenant.apiKey });
    assert.equal(got.status, 200);
    assert.equal(got.body.client_secret, '');
    assert.deepEqual({ ...got.body, client_secret: client.client_secret }, client);
    const listed = await call(service, 'GET', clients(), { token: tenant.apiKey });
    const inList = listed.body.clients.find((c: { client_id: string }) => c.client_id === client.client_id);
    assert.equal(inList.client_secret, '');
    assert.ok(!JSON.stringify(listed.body).includes(client.client_secret));
    assert.ok(!JSON.stringify(got.body).includes(client.client_secret));

    const row = await findOAuthClient(service.ctx.db, client.client_id);
    assert.ok(row?.secretHash);
    assert.ok(secretMatches(client.client_secret, row.secretHash), 'stored hash matches the secret');
    assert.ok(!secretMatches(`${client.client_secret}x`, row.secretHash));
    assert.ok(!Buffer.from(row.secretHash).toString('utf8').includes(client.client_secret), 'the secret is not stored as is');
  });

  test('public clients have no secret and cannot use client_credentials', async () => {
    const created = await create({ grant_types: ['authorization_code'], redirect_uris: ['http://127.0.0.1/callback', 'com.example.app:/oauth'], scope: 'profile:read', public: true });
    assert.equal(created.status, 201);
    assert.equal(created.body.client_secret, '');
    assert.equal(created.body.public, true);
    assert.deepEqual(created.body.response_types, ['code'], 'derived from the grant');
    assert.equal((await findOAuthClient(service.ctx.db, created.body.client_id))?.secretHash, null);
    const refused = await create({ grant_types: ['client_credentials'], scope: 'llm:invoke', public: true });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error.message, /public client/);
    const update = await call(service, 'PUT', `${clients()}/${created.body.client_id}`, { token: tenant.apiKey, json: { grant_types: ['client_credentials'], response_types: [], redirect_uris: [] } });
    assert.equal(update.status, 400);
  });

  test('a client_credentials-only client needs no redirect URI', async () => {
    const created = await create({ grant_types: ['client_credentials'], scope: 'llm:invoke', metadata: { name: 'batch' } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body.response_types, []);
    assert.deepEqual(created.body.redirect_uris, []);
    assert.equal(created.body.name, 'batch', 'the label falls back to metadata.name');
    assert.equal(created.body.metadata.theme, 'auto', 'theme defaults to auto');
  });

  test('update changes only what is sent, merges metadata, and logo removal restores the default', async () => {
    const { body: client } = await create(WEB_CLIENT);
    const url = `${clients()}/${client.client_id}`;
    const put = (json: unknown) => call(service, 'PUT', url, { token: tenant.apiKey, json });
    const get = async () => (await call(service, 'GET', url, { token: tenant.apiKey })).body;

    const updated = await put({ metadata: { theme: 'light' } });
    assert.equal(updated.status, 200);
    assert.deepEqual(updated.body, { ok: true });
    let now = await get();
    assert.deepEqual(now.metadata, { ...WEB_CLIENT.metadata, theme: 'light' }, 'other entries kept');
    assert.deepEqual(now.redirect_uris, WEB_CLIENT.redirect_uris);
    assert.equal(now.scope, WEB_CLIENT.scope);

    assert.equal((await put({ metadata: { logo_url: '' } })).status, 200);
    now = await get();
    assert.equal(now.metadata.logo_url, undefined, 'empty logo_url restores the default logo');
    assert.equal(now.metadata.support, 'help@example.com');
    assert.equal((await put({ metadata: { logo_url: 'http://cdn.example.com/l.svg' } })).status, 200);
    assert.equal((await get()).metadata.logo_url, 'http://cdn.example.com/l.svg');
    assert.equal((await put({ metadata: { logo_url: null, theme: null, support: null } })).status, 200);
    now = await get();
    assert.deepEqual(now.metadata, { theme: 'auto' }, 'null removes entries; theme falls back to auto');

    assert.equal((await put({ name: 'Renamed', scope: 'openid  email  openid', redirect_uris: ['https://a.example/cb', 'http://localhost:8765/callback', 'http://[::1]:9/cb'] })).status, 200);
    now = await get();
    assert.equal(now.name, 'Renamed');
    assert.equal(now.scope, 'openid email', 'scope normalised and de-duplicated');
    assert.equal(now.redirect_uris.length, 3);
    assert.ok(Date.parse(now.updated_at) >= Date.parse(now.created_at));

    // A rule broken by the combination is refused and nothing changes.
    const broken = await put({ redirect_uris: [], name: 'Nope' });
    assert.equal(broken.status, 400);
    assert.match(broken.body.error.message, /authorization_code/);
    assert.equal((await get()).name, 'Renamed');
  });

  test('creation rules: bad input is a 400 naming the problem and writes nothing', async () => {
    const base = { grant_types: ['authorization_code'], redirect_uris: ['https://ok.example/cb'], scope: 'profile:read' };
    const cases: [unknown, RegExp][] = [
      [{ ...base, redirect_uris: [] }, /redirect_uris.*authorization_code/],
      [{ ...base, redirect_uris: undefined }, /redirect_uris.*authorization_code/],
      [{ ...base, grant_types: ['password'] }, /grant_types/],
      [{ ...base, grant_types: ['implicit'] }, /grant_types/],
      [{ ...base, grant_types: [] }, /grant_types/],
      [{ ...base, grant_types: ['authorization_code', 'authorization_code'] }, /grant_types/],
      [{ ...base, response_types: ['code', 'none'] }, /response_types/],
      [{ ...base, response_types: ['token'] }, /response_types includes code/],
      [{ grant_types: ['client_credentials'], response_types: ['code'], redirect_uris: ['https://ok.example/cb'], scope: 'llm:invoke' }, /response_types includes code/],
      [{ grant_types: ['refresh_token', 'client_credentials'], scope: 'llm:invoke' }, /refresh_token/],
      [{ ...base, scope: 'admin' }, /scope.*"admin"/],
      [{ ...base, scope: 'profile:read rooms:*' }, /scope/],
      [{ ...base, scope: '   ' }, /scope/],
      [{ ...base, scope: undefined }, /scope is required/],
      [{ ...base, scope: 'x'.repeat(501) }, /scope/],
      [{ ...base, redirect_uris: ['/callback'] }, /absolute/],
      [{ ...base, redirect_uris: ['https://ok.example/cb#frag'] }, /fragment/],
      [{ ...base, redirect_uris: ['https://ok.example/cb#'] }, /fragment/],
      [{ ...base, redirect_uris: ['https://*.example.com/cb'] }, /wildcard/],
      [{ ...base, redirect_uris: ['https://ok.example/*'] }, /wildcard/],
      [{ ...base, redirect_uris: ['http://app.example.com/cb'] }, /loopback/],
      [{ ...base, redirect_uris: ['http://127.0.0.1.evil.com/cb'] }, /loopback/],
      [{ ...base, redirect_uris: ['javascript:alert(1)'] }, /https/],
      [{ ...base, redirect_uris: ['data:text/html,hi'] }, /https/],
      [{ ...base, redirect_uris: ['https://user:pw@ok.example/cb'] }, /credentials/],
      [{ ...base, redirect_uris: Array.from({ length: 21 }, (_, i) => `https://ok.example/${i}`) }, /redirect_uris/],
      [{ ...base, redirect_uris: [`https://ok.example/${'a'.repeat(2000)}`] }, /redirect_uris/],
      [{ ...base, metadata: { theme: 'blue' } }, /theme/],
      [{ ...base, metadata: { logo_url: 'logo.png' } }, /logo_url/],
      [{ ...base, metadata: { logo_url: 'ftp://files.example/logo.png' } }, /logo_url/],
      [{ ...base, metadata: { logo_url: 'javascript:alert(1)' } }, /logo_url/],
      [{ ...base, metadata: { count: 3 } }, /metadata/],
      [{ ...base, metadata: 'nope' }, /metadata/],
      [{ ...base, metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) }, /metadata/],
      [{ ...base, metadata: { 'bad key': 'v' } }, /metadata/],
      [{ ...base, name: 'x'.repeat(201) }, /name/],
      [{ ...base, official: true }, /official/],
    ];
    const before = (await call(service, 'GET', clients(), { token: tenant.apiKey })).body.total;
    for (const [json, message] of cases) {
      const response = await create(json);
      assert.equal(response.status, 400, JSON.stringify(json).slice(0, 300));
      assert.equal(response.body.error.code, 'invalid_request');
      assert.match(response.body.error.message, message, JSON.stringify(json).slice(0, 300));
    }
    assert.equal((await create('{"grant_types":')).status, 400);
    assert.equal((await call(service, 'GET', clients(), { token: tenant.apiKey })).body.total, before, 'nothing written');
  });

  test('metadata refuses passwords, secrets and session tokens', async () => {
    const base = { grant_types: ['client_credentials'], scope: 'llm:invoke' };
    const jwt = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
    const refused: Record<string, string>[] = [
      { password: 'hunter2' },
      { admin_passwd: 'x' },
      { client_secret: 'abc' },
      { Secret: 'abc' },
      { access_token: 'abc' },
      { refreshToken: 'abc' },
      { 'session-id': 'abc' },
      { cookie: 'abc' },
      { api_key: 'abc' },
      { note: jwt },
      { note: `Authorization: Bearer ${'a1B2'.repeat(8)}` },
      { note: `Basic ${Buffer.from('user:pw-long-enough').toString('base64')}` },
      { note: 'connect.sid=s%3AaVeryLongSessionValue123' },
      { note: 'PHPSESSID=0123456789abcdef' },
      { note: tenant.apiKey },
      { note: `use ${tenant.userToken} please` },
      { logo_url: `https://cdn.example.com/logo.png?token=${'z'.repeat(20)}` },
    ];
    for (const metadata of refused) {
      const response = await create({ ...base, metadata });
      assert.equal(response.status, 400, JSON.stringify(metadata));
      assert.match(response.body.error.message, /metadata/);
    }
    const prose = { description: 'Basic information for the bearer of this card', credits: 'author=Jonathan Smith', considerable: 'sidebar=collapsed' };
    const accepted = await create({ ...base, metadata: prose });
    assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
    assert.deepEqual(accepted.body.metadata, { ...prose, theme: 'auto' });
    const { body: client } = await create({ ...base, metadata: { note: 'plain words', homepage: 'https://example.com/about' } });
    assert.ok(client.client_id);
    const update = await call(service, 'PUT', `${clients()}/${client.client_id}`, { token: tenant.apiKey, json: { metadata: { session: jwt } } });
    assert.equal(update.status, 400);
    const stored = (await call(service, 'GET', `${clients()}/${client.client_id}`, { token: tenant.apiKey })).body;
    assert.deepEqual(stored.metadata, { note: 'plain words', homepage: 'https://example.com/about', theme: 'auto' });
  });

  test('list pages with count/offset and filters by name or id', async () => {
    const own = await createTenant(service, 'oauth-list');
    const names = ['alpha one', 'beta two', 'gamma three', 'alpha four'];
    const ids: string[] = [];
    for (const name of names) ids.push((await create({ name, grant_types: ['client_credentials'], scope: 'llm:invoke' }, own.apiKey, own.projectId)).body.client_id);
    const page = await call(service, 'GET', `${clients(own.projectId)}?count=2&offset=1`, { token: own.apiKey });
    assert.equal(page.status, 200);
    assert.equal(page.body.total, 4);
    assert.deepEqual(page.body.clients.map((c: { name: string }) => c.name), ['beta two', 'gamma three']);
    const filtered = await call(service, 'GET', `${clients(own.projectId)}?filter=ALPHA`, { token: own.apiKey });
    assert.deepEqual(filtered.body.clients.map((c: { name: string }) => c.name), ['alpha one', 'alpha four']);
    assert.equal(filtered.body.total, 2);
    const byId = await call(service, 'GET', `${clients(own.projectId)}?filter=${ids[2]}`, { token: own.apiKey });
    assert.deepEqual(byId.body.clients.map((c: { client_id: string }) => c.client_id), [ids[2]]);
    assert.equal((await call(service, 'GET', `${clients(own.projectId)}?filter=%25`, { token: own.apiKey })).body.total, 0, 'LIKE wildcards match literally');
    assert.equal((await call(service, 'GET', `${clients(own.projectId)}?count=0`, { token: own.apiKey })).status, 400);
    assert.equal((await call(service, 'GET', `${clients(own.projectId)}?count=1001`, { token: own.apiKey })).status, 400);
  });

  test('delete removes the client; a second delete is 404', async () => {
    const { body: client } = await create(WEB_CLIENT);
    const url = `${clients()}/${client.client_id}`;
    const deleted = await call(service, 'DELETE', url, { token: tenant.apiKey });
    assert.equal(deleted.status, 200);
    assert.equal((await call(service, 'GET', url, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'DELETE', url, { token: tenant.apiKey })).status, 404);
    assert.equal(await findOAuthClient(service.ctx.db, client.client_id), undefined);
    assert.equal((await call(service, 'GET', `${clients()}/has%20space`, { token: tenant.apiKey })).status, 400);
  });

  test("another project's client is 404 on every route", async () => {
    const other = await createTenant(service, 'oauth-other');
    const { body: theirs } = await create(WEB_CLIENT, other.apiKey, other.projectId);
    // Our credentials, our project path, their client id.
    const ours = `${clients()}/${theirs.client_id}`;
    assert.equal((await call(service, 'GET', ours, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', ours, { token: tenant.apiKey, json: { name: 'hijack' } })).status, 404);
    assert.equal((await call(service, 'DELETE', ours, { token: tenant.apiKey })).status, 404);
    assert.ok(!(await call(service, 'GET', clients(), { token: tenant.apiKey })).body.clients.some((c: { client_id: string }) => c.client_id === theirs.client_id));
    // Our credentials on their project path.
    const theirsPath = `${clients(other.projectId)}/${theirs.client_id}`;
    assert.equal((await call(service, 'GET', theirsPath, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'GET', theirsPath, { token: tenant.userToken })).status, 404);
    assert.equal((await call(service, 'DELETE', theirsPath, { token: tenant.userToken })).status, 404);
    const still = await call(service, 'GET', theirsPath, { token: other.apiKey });
    assert.equal(still.status, 200);
    assert.equal(still.body.name, 'Web app');
  });

  test('roles: member is refused, each oauth_client_* role opens its routes, llm_proxy_user and admin all', async () => {
    const { body: client } = await create(WEB_CLIENT);
    const url = `${clients()}/${client.client_id}`;
    const member = async (roles: string[]) => {
      const user = await createUserWithToken(service, 'oauth-role');
      const added = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: user.userId, roles } });
      assert.equal(added.status, 200);
      return user.token;
    };
    const attempt = async (token: string) => ({
      create: (await create({ grant_types: ['client_credentials'], scope: 'llm:invoke' }, token)).status,
      list: (await call(service, 'GET', clients(), { token })).status,
      get: (await call(service, 'GET', url, { token })).status,
      update: (await call(service, 'PUT', url, { token, json: { metadata: { theme: 'dark' } } })).status,
    });

    const plain = await member(['member']);
    assert.deepEqual(await attempt(plain), { create: 403, list: 403, get: 403, update: 403 });
    assert.equal((await call(service, 'DELETE', url, { token: plain })).status, 403);
    const refusal = await call(service, 'GET', url, { token: plain });
    assert.equal(refusal.body.error.code, 'forbidden');

    assert.deepEqual(await attempt(await member(['oauth_client_creator'])), { create: 201, list: 403, get: 403, update: 403 });
    assert.deepEqual(await attempt(await member(['oauth_client_inventory'])), { create: 403, list: 200, get: 200, update: 403 });
    assert.deepEqual(await attempt(await member(['oauth_client_manager'])), { create: 403, list: 403, get: 403, update: 200 });
    assert.deepEqual(await attempt(await member(['llm_proxy_user'])), { create: 201, list: 200, get: 200, update: 200 });
    // Legacy flag: can_use_llm_proxy qualifies too (SPEC "earlier variant").
    const legacy = await createUserWithToken(service, 'oauth-legacy');
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: legacy.userId, can_use_llm_proxy: true } });
    assert.deepEqual(await attempt(legacy.token), { create: 201, list: 200, get: 200, update: 200 });
    assert.deepEqual(await attempt(tenant.userToken), { create: 201, list: 200, get: 200, update: 200 });

    const manager = await member(['oauth_client_manager']);
    assert.equal((await call(service, 'DELETE', url, { token: manager })).status, 200);
    assert.equal((await call(service, 'GET', url)).status, 401, 'no credential');
  });

  test('the official SDK creates, lists, fetches, updates and deletes clients', async () => {
    const sdk = new Meshagent({ baseUrl: service.url, token: tenant.apiKey });
    const created = await sdk.createOAuthClient(tenant.projectId, {
      grantTypes: ['authorization_code', 'refresh_token'],
      responseTypes: ['code'],
      redirectUris: ['http://localhost:8765/callback'],
      scope: 'profile:read rooms:connect llm:invoke',
      metadata: { name: 'SDK app', theme: 'light' },
    });
    assert.ok(created.clientSecret.length >= 40);
    assert.equal(created.projectId, tenant.projectId);
    assert.deepEqual(created.metadata, { name: 'SDK app', theme: 'light' });

    const fetched = await sdk.getOAuthClient(tenant.projectId, created.clientId);
    assert.equal(fetched.clientSecret, '');
    assert.deepEqual(fetched.redirectUris, ['http://localhost:8765/callback']);

    await sdk.updateOAuthClient(tenant.projectId, created.clientId, { metadata: { logo_url: 'https://cdn.example.com/sdk.png' } });
    const updated = await sdk.getOAuthClient(tenant.projectId, created.clientId);
    assert.deepEqual(updated.metadata, { name: 'SDK app', theme: 'light', logo_url: 'https://cdn.example.com/sdk.png' });

    const page = await sdk.listOAuthClientsPage(tenant.projectId, { count: 1000, offset: 0 });
    assert.ok(page.total >= 1);
    assert.ok(page.clients.some((c) => c.clientId === created.clientId && c.clientSecret === ''));
    assert.ok((await sdk.listOAuthClients(tenant.projectId)).some((c) => c.clientId === created.clientId));

    await sdk.deleteOAuthClient(tenant.projectId, created.clientId);
    assert.ok(!(await sdk.listOAuthClients(tenant.projectId, { count: 1000 })).some((c) => c.clientId === created.clientId));
  });
});

// CORS for browser apps: the endpoints that accept OAuth access tokens answer preflights for the
// origins OAuth clients allow (a public client's redirect URIs, `allowed_origins` metadata) and the
// deployment's ATRIUM_CORS_ORIGINS, echo the origin (never `*`, never a credentials header), cache
// the preflight, and on the request itself allow only the token's own client's origins.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as oidc from 'openid-client';
import { EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, insertClient, signInAndConsent, type TestClient } from '../support/oauth.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const SPA = 'https://spa.example';
const LISTED = 'https://listed.example';
const B_ORIGIN = 'https://b.example';
const EVIL = 'https://evil.example';

forEachEngine('CORS for browser apps', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let spaClient: TestClient;
  let spaToken: string;
  let spaRefresh: string;

  before(async () => {
    service = await startTestService(engine, { ...EMAIL_LOGIN_ENV, ATRIUM_CORS_ORIGINS: LISTED });
    tenant = await createTenant(service, 'cors');
    spaClient = await insertClient(service, tenant.projectId, { public: true, redirectUris: [`${SPA}/callback`] });
    // A confidential client: its redirect URI's origin is a backend's, not a browser app's.
    await insertClient(service, tenant.projectId, { redirectUris: ['https://backend.example/cb'], metadata: { allowed_origins: `${B_ORIGIN} https://b2.example` } });
    const config = await discover(service, spaClient);
    const request = await authorizationRequest(config, spaClient.redirectUri, 'openid offline_access profile:read rooms:connect');
    const callback = await signInAndConsent(new FormBrowser(service.url), request, spaClient.redirectUri, tenant.email, tenant.password);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
    spaToken = tokens.access_token;
    spaRefresh = tokens.refresh_token!;
    assert.ok(spaRefresh);
  });
  after(async () => service?.stop());

  const preflight = (path: string, origin: string, method = 'GET') => fetch(`${service.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
  });
  const connectPath = () => `/accounts/projects/${tenant.projectId}/rooms/lobby/connect`;

  test('preflights from allowed origins are answered, echoed (never *), cached, without a credentials header', async () => {
    for (const [path, method] of [[connectPath(), 'POST'], ['/accounts/profiles/me', 'GET'], ['/oauth/userinfo', 'GET'], [`/accounts/projects/${tenant.projectId}/role`, 'GET']] as const) {
      for (const origin of [SPA, LISTED, B_ORIGIN]) {
        const response = await preflight(path, origin, method);
        assert.equal(response.status, 204, `${method} ${path} from ${origin}`);
        assert.equal(response.headers.get('access-control-allow-origin'), origin, `${method} ${path} from ${origin}`);
        assert.match(response.headers.get('access-control-allow-methods') ?? '', new RegExp(method));
        assert.match(response.headers.get('access-control-allow-headers') ?? '', /authorization/);
        assert.equal(response.headers.get('access-control-max-age'), '7200');
        assert.equal(response.headers.get('access-control-allow-credentials'), null);
        assert.match(response.headers.get('vary') ?? '', /Origin/);
      }
    }
  });

  test('preflights from refused origins get no allow headers', async () => {
    // Unknown; a confidential client's redirect origin; "null" (sandboxed frames, file://).
    for (const origin of [EVIL, 'https://backend.example', 'null', 'https://spa.example.evil.example']) {
      const response = await preflight(connectPath(), origin, 'POST');
      assert.equal(response.status, 204, origin);
      assert.equal(response.headers.get('access-control-allow-origin'), null, origin);
      assert.equal(response.headers.get('access-control-allow-methods'), null, origin);
    }
    // A method the path does not have is refused even for an allowed origin.
    assert.equal((await preflight(connectPath(), SPA, 'DELETE')).headers.get('access-control-allow-origin'), null);
    // Endpoints that take no user token are not opened to browsers at all.
    const admin = await preflight(`/accounts/projects/${tenant.projectId}/users`, SPA, 'GET');
    assert.equal(admin.headers.get('access-control-allow-origin'), null);
  });

  test('with the token: the origin must be allowed for the token\'s own client', async () => {
    const me = (origin: string, token?: string) => fetch(`${service.url}/accounts/profiles/me`, { headers: { origin, ...(token ? { authorization: `Bearer ${token}` } : {}) } });
    const own = await me(SPA, spaToken);
    assert.equal(own.status, 200);
    assert.equal(own.headers.get('access-control-allow-origin'), SPA);
    assert.equal(own.headers.get('access-control-allow-credentials'), null);
    assert.match(own.headers.get('vary') ?? '', /Origin/);
    // Allowed for another client, not for the one that issued this token.
    const other = await me(B_ORIGIN, spaToken);
    assert.equal(other.status, 200);
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    assert.equal((await me(LISTED, spaToken)).headers.get('access-control-allow-origin'), LISTED);
    assert.equal((await me(EVIL, spaToken)).headers.get('access-control-allow-origin'), null);

    const connect = await fetch(`${service.url}${connectPath()}`, { method: 'POST', headers: { origin: SPA, authorization: `Bearer ${spaToken}`, 'content-type': 'application/json' }, body: '{}' });
    assert.equal(connect.headers.get('access-control-allow-origin'), SPA, `connect answered ${connect.status}`);
  });

  test('without a token: an allowed origin may read the 401, a refused one may not', async () => {
    const anonymous = await fetch(`${service.url}/accounts/profiles/me`, { headers: { origin: SPA } });
    assert.equal(anonymous.status, 401);
    assert.equal(anonymous.headers.get('access-control-allow-origin'), SPA);
    assert.match(anonymous.headers.get('access-control-expose-headers') ?? '', /www-authenticate/);
    assert.match(anonymous.headers.get('access-control-expose-headers') ?? '', /x-request-id/, 'a browser app can read the request id');
    const refused = await fetch(`${service.url}/accounts/profiles/me`, { headers: { origin: EVIL } });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
  });

  test('the token and revocation endpoints follow the same client rule', async () => {
    const tokenPreflight = await preflight('/oauth/token', SPA, 'POST');
    assert.equal(tokenPreflight.headers.get('access-control-allow-origin'), SPA);
    const refresh = (origin: string, token: string) => fetch(`${service.url}/oauth/token`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: spaClient.clientId }).toString(),
    });
    const refused = await refresh(EVIL, spaRefresh);
    assert.notEqual(refused.headers.get('access-control-allow-origin'), EVIL);
    assert.notEqual(refused.headers.get('access-control-allow-origin'), '*');
    const ok = await refresh(SPA, spaRefresh);
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(ok.headers.get('access-control-allow-origin'), SPA);
    const body = await ok.json() as { refresh_token: string };
    const revoke = await fetch(`${service.url}/oauth/revoke`, {
      method: 'POST',
      headers: { origin: LISTED, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: body.refresh_token, client_id: spaClient.clientId }).toString(),
    });
    assert.equal(revoke.status, 200);
    assert.equal(revoke.headers.get('access-control-allow-origin'), LISTED, 'the deployment allow-list applies to the provider too');
  });

  test('allowed_origins metadata must list origins', async () => {
    const created = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/oauth/clients`, {
      token: tenant.userToken,
      json: { name: 'bad origins', grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['https://app.example.com/callback'], scope: 'openid', metadata: { allowed_origins: 'https://ok.example https://bad.example/path' } },
    });
    assert.equal(created.status, 400);
    assert.match(created.body.error.message, /allowed_origins.*bad\.example\/path/);
  });
});

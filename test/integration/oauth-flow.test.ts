// The authorization server end to end with openid-client (no browser): discovery, the
// authorization code flow with PKCE through the real sign-in and consent forms, refresh rotation,
// client_credentials, revocation, userinfo, the built-in CLI client (loopback and device flow),
// and OAuth access tokens on the Atrium API — on both engines.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as oidc from 'openid-client';
import { upsertMember } from '../../src/modules/projects/store.ts';
import { ATRIUM_CLI_CLIENT_ID } from '../../src/modules/oauth/first-party.ts';
import { call, createTenant, forEachEngine, freePort, type Tenant, type TestService } from '../support/service.ts';
import {
  EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, insertClient, jwtClaims, oauthError, pageError, signInAndConsent, startOAuthService,
  type TestClient,
} from '../support/oauth.ts';

forEachEngine('oauth flows', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let other: Tenant;
  let client: TestClient;
  let config: oidc.Configuration;
  const scope = 'openid profile email offline_access profile:read rooms:connect';

  before(async () => {
    // No credential cache: revocation must show at once in these tests.
    ({ service, tenant, client, config } = await startOAuthService(engine, {
      env: { ...EMAIL_LOGIN_ENV, ATRIUM_AUTH_CACHE_SECONDS: '0' },
      tenant: 'oauth',
      client: { name: 'Flow App' },
    }));
    other = await createTenant(service, 'other');
  });
  after(() => service?.stop());

  /** Authorization code + PKCE through the forms, then the code exchange. */
  async function codeFlow(forClient: TestClient, forConfig: oidc.Configuration, who: { email: string; password: string } = tenant, requestedScope = scope) {
    const request = await authorizationRequest(forConfig, forClient.redirectUri, requestedScope);
    const callback = await signInAndConsent(new FormBrowser(service.url), request, forClient.redirectUri, who.email, who.password);
    return oidc.authorizationCodeGrant(forConfig, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
  }

  test('discovery at both well-known names, with the endpoints under /oauth', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const response = await call(service, 'GET', path);
      assert.equal(response.status, 200, path);
      const doc = response.body;
      assert.equal(doc.issuer, service.url);
      assert.equal(doc.authorization_endpoint, `${service.url}/oauth/authorize`);
      assert.equal(doc.token_endpoint, `${service.url}/oauth/token`);
      assert.equal(doc.jwks_uri, `${service.url}/oauth/jwks`);
      assert.equal(doc.userinfo_endpoint, `${service.url}/oauth/userinfo`);
      assert.equal(doc.revocation_endpoint, `${service.url}/oauth/revoke`);
      assert.equal(doc.introspection_endpoint, `${service.url}/oauth/introspect`);
      assert.equal(doc.device_authorization_endpoint, `${service.url}/oauth/device/auth`);
      assert.equal(doc.end_session_endpoint, `${service.url}/oauth/logout`);
      assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
      assert.equal(doc.authorization_response_iss_parameter_supported, true);
      assert.deepEqual(doc.response_types_supported, ['code']);
      for (const grant of ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']) assert.ok(doc.grant_types_supported.includes(grant), grant);
      for (const s of ['profile:read', 'rooms:connect', 'llm:invoke', 'secrets:proxy', 'openid', 'profile', 'email', 'offline_access', 'llm_proxy']) assert.ok(doc.scopes_supported.includes(s), s);
      assert.deepEqual([...doc.token_endpoint_auth_methods_supported].sort(), ['client_secret_basic', 'client_secret_post', 'none']);
    }
    // The provider signs with the service's keys: the JWKS is the same set everyone verifies with.
    const jwks = (await call(service, 'GET', '/oauth/jwks')).body.keys.map((k: { kid: string }) => k.kid);
    const shared = (await call(service, 'GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    assert.deepEqual(jwks.sort(), shared.sort());
  });

  test('authorization code + PKCE through the sign-in form: tokens, claims, and the API accepts them', async () => {
    const tokens = await codeFlow(client, config);
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.ok(tokens.refresh_token, 'refresh token issued');
    assert.ok(tokens.expires_in! > 0 && tokens.expires_in! <= 600, 'short-lived access token');
    const claims = jwtClaims(tokens.access_token);
    assert.equal(claims.sub, tenant.userId);
    assert.equal(claims.client_id, client.clientId);
    assert.equal(claims.project_id, tenant.projectId);
    assert.equal(claims.iss, service.url);
    assert.equal(claims.aud, service.url);
    assert.equal(Number(claims.exp) - Number(claims.iat), 600);
    // offline_access was asked for without prompt=consent, which OpenID Connect needs to grant it.
    assert.deepEqual(String(claims.scope).split(' ').sort(), ['email', 'openid', 'profile', 'profile:read', 'rooms:connect']);
    const header = JSON.parse(Buffer.from(tokens.access_token.split('.')[0]!, 'base64url').toString()) as { typ: string; alg: string };
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.alg, 'ES256');
    const idToken = tokens.claims()!;
    assert.equal(idToken.sub, tenant.userId);
    assert.equal(idToken.email, tenant.email);

    const me = await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token });
    assert.equal(me.status, 200);
    assert.equal(me.body.email, tenant.email);
    const role = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/role`, { token: tokens.access_token });
    assert.equal(role.status, 200);
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms`, { token: tenant.apiKey, json: { name: 'oauth-room' } });
    const connect = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms/oauth-room/connect`, { token: tokens.access_token, json: {} });
    assert.equal(connect.status, 200);
    assert.equal(connect.body.room_name, 'oauth-room');
    // A route that does not accept OAuth tokens refuses them.
    const keys = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/api-keys`, { token: tokens.access_token });
    assert.equal(keys.status, 403);
  });

  test('a token for a client in project A does nothing in project B, even for a member of both', async () => {
    await upsertMember(service.ctx.db, other.projectId, tenant.userId, ['admin']);
    await call(service, 'POST', `/accounts/projects/${other.projectId}/rooms`, { token: other.apiKey, json: { name: 'b-room' } });
    const tokens = await codeFlow(client, config);
    assert.equal((await call(service, 'GET', `/accounts/projects/${tenant.projectId}/role`, { token: tokens.access_token })).status, 200);
    const role = await call(service, 'GET', `/accounts/projects/${other.projectId}/role`, { token: tokens.access_token });
    assert.equal(role.status, 404);
    const connect = await call(service, 'POST', `/accounts/projects/${other.projectId}/rooms/b-room/connect`, { token: tokens.access_token, json: {} });
    assert.equal(connect.status, 404);
    // The same user's personal token does reach project B: the refusal is the client binding.
    assert.equal((await call(service, 'GET', `/accounts/projects/${other.projectId}/role`, { token: tenant.userToken })).status, 200);
  });

  test('a token without the route\'s scope is refused; llm_proxy counts as llm:invoke', async () => {
    const narrow = await insertClient(service, tenant.projectId, { scope: 'openid profile:read llm_proxy' });
    const tokens = await codeFlow(narrow, await discover(service, narrow), tenant, 'openid profile:read llm_proxy');
    const claims = jwtClaims(tokens.access_token);
    assert.equal(claims.scope, 'openid profile:read llm_proxy');
    const principal = await service.ctx.auth.authenticate(tokens.access_token);
    assert.ok(principal?.scopes?.has('llm:invoke'), 'alias expanded');
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms`, { token: tenant.apiKey, json: { name: 'scoped-room' } });
    const connect = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms/scoped-room/connect`, { token: tokens.access_token, json: {} });
    assert.equal(connect.status, 403);
    assert.match(connect.body.error.message, /rooms:connect/);
  });

  test('refresh rotation: each refresh returns a new refresh token and a working access token', async () => {
    const first = await codeFlow(client, config);
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    assert.ok(second.refresh_token);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.notEqual(second.access_token, first.access_token);
    const third = await oidc.refreshTokenGrant(config, second.refresh_token!);
    assert.notEqual(third.refresh_token, second.refresh_token);
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: third.access_token })).status, 200);
  });

  test('offline_access: the token response, the access token and the refresh token\'s introspection name the same scopes', async () => {
    const sorted = (value: unknown) => String(value).split(' ').sort();
    /** A code flow with prompt=consent: OpenID Connect grants offline_access only with it. */
    const withConsent = async (requested: string) => {
      const request = await authorizationRequest(config, client.redirectUri, requested, { prompt: 'consent' });
      const callback = await signInAndConsent(new FormBrowser(service.url), request, client.redirectUri, tenant.email, tenant.password);
      return oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
    };
    const agree = async (tokens: oidc.TokenEndpointResponse, expected: string[], when: string) => {
      assert.deepEqual(sorted(tokens.scope), expected, `${when}: token response`);
      assert.deepEqual(sorted(jwtClaims(tokens.access_token).scope), expected, `${when}: access token`);
      const introspected = await oidc.tokenIntrospection(config, tokens.refresh_token!);
      assert.equal(introspected.active, true);
      assert.deepEqual(sorted(introspected.scope), expected, `${when}: refresh token introspection`);
    };

    const offline = await withConsent(scope);
    await agree(offline, sorted(scope), 'code');
    assert.ok(sorted(offline.scope).includes('offline_access'));
    await agree(await oidc.refreshTokenGrant(config, offline.refresh_token!), sorted(scope), 'refresh');

    // Without offline_access (not asked for, or asked for without prompt=consent), none names it.
    const online = sorted(scope).filter((s) => s !== 'offline_access');
    await agree(await withConsent(online.join(' ')), online, 'not asked for');
    await agree(await codeFlow(client, config), online, 'without prompt=consent');
  });

  test('client_secret_post authenticates too; a wrong secret does not', async () => {
    const tokens = await codeFlow(client, await discover(service, client, 'post'));
    assert.ok(tokens.access_token);
    const wrong = await discover(service, { clientId: client.clientId, clientSecret: 'not-the-secret' });
    await assert.rejects(oidc.clientCredentialsGrant(wrong, { scope: 'profile:read' }), (error) => oauthError(error) === 'invalid_client');
  });

  test('userinfo returns the claims the token\'s scopes allow', async () => {
    const tokens = await codeFlow(client, config);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tenant.userId);
    assert.equal(info.sub, tenant.userId);
    assert.equal(info.email, tenant.email);
    assert.equal(info.email_verified, true);
    assert.equal(info.given_name, 'Test');
    const narrow = await insertClient(service, tenant.projectId, { scope: 'openid profile:read' });
    const narrowTokens = await codeFlow(narrow, await discover(service, narrow), tenant, 'openid profile:read');
    const minimal = await oidc.fetchUserInfo(await discover(service, narrow), narrowTokens.access_token, tenant.userId);
    assert.deepEqual(Object.keys(minimal), ['sub']);
    assert.equal((await call(service, 'GET', '/oauth/userinfo')).status, 401);
  });

  test('client_credentials: a JWT for the client alone, with no user and no project role', async () => {
    const machine = await insertClient(service, tenant.projectId, { grantTypes: ['client_credentials'], redirectUris: [], scope: 'profile:read rooms:connect' });
    const machineConfig = await discover(service, machine);
    const tokens = await oidc.clientCredentialsGrant(machineConfig, { scope: 'profile:read rooms:connect' });
    assert.equal(tokens.refresh_token, undefined);
    const claims = jwtClaims(tokens.access_token);
    assert.equal(claims.sub, machine.clientId);
    assert.equal(claims.client_id, machine.clientId);
    assert.equal(claims.project_id, tenant.projectId);
    assert.equal(claims.grant_id, undefined);
    const principal = await service.ctx.auth.authenticate(tokens.access_token);
    assert.equal(principal?.kind, 'oauth');
    assert.equal(principal?.userId, undefined);
    // Least privilege: no user to read, no membership to act with, no userinfo.
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 404);
    assert.equal((await call(service, 'GET', `/accounts/profiles/${tenant.userId}`, { token: tokens.access_token })).status, 404);
    assert.equal((await call(service, 'GET', `/accounts/projects/${tenant.projectId}/role`, { token: tokens.access_token })).status, 404);
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms`, { token: tenant.apiKey, json: { name: 'machine-room' } });
    assert.equal((await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms/machine-room/connect`, { token: tokens.access_token, json: {} })).status, 404);
    // A client registered without client_credentials cannot use it.
    await assert.rejects(oidc.clientCredentialsGrant(config, { scope: 'profile:read' }), (error) => /grant type is not allowed/.test(String((error as { error_description?: string }).error_description)));
  });

  test('revoking the refresh token ends the grant: no refresh, and the access token stops working', async () => {
    const tokens = await codeFlow(client, config);
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 200);
    const introspected = await oidc.tokenIntrospection(config, tokens.refresh_token!);
    assert.equal(introspected.active, true);
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    assert.equal((await oidc.tokenIntrospection(config, tokens.refresh_token!)).active, false);
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token!), (error) => oauthError(error) === 'invalid_grant');
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 401);
  });

  test('a client cannot introspect or revoke another client\'s tokens', async () => {
    const tokens = await codeFlow(client, config);
    const intruder = await insertClient(service, other.projectId);
    const intruderConfig = await discover(service, intruder);
    assert.equal((await oidc.tokenIntrospection(intruderConfig, tokens.refresh_token!)).active, false);
    await oidc.tokenRevocation(intruderConfig, tokens.refresh_token!);
    assert.equal((await oidc.tokenIntrospection(config, tokens.refresh_token!)).active, true, 'still valid');
    assert.ok((await oidc.refreshTokenGrant(config, tokens.refresh_token!)).access_token);
  });

  test('end-session signs the browser out: the next authorization asks to sign in again', async () => {
    const browser = new FormBrowser(service.url);
    const request = await authorizationRequest(config, client.redirectUri, scope);
    await signInAndConsent(browser, request, client.redirectUri, tenant.email, tenant.password);
    // Signed in: a new request goes straight back with a code.
    const again = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, scope)).url, undefined, client.redirectUri);
    assert.ok(again.redirectedTo?.includes('code='), 'single sign-on while the session lasts');
    const confirm = await browser.go('GET', `/oauth/logout?client_id=${client.clientId}`);
    assert.equal(confirm.status, 200);
    const out = await browser.submit(confirm, '/oauth/logout/confirm', { logout: 'yes' });
    assert.match(out.html, /You are signed out/);
    const after = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, scope)).url, undefined, client.redirectUri);
    assert.equal(after.redirectedTo, undefined);
    assert.match(after.html, /id="password-form"/);
  });

  test('deleting a client stops its tokens', async () => {
    const doomed = await insertClient(service, tenant.projectId);
    const tokens = await codeFlow(doomed, await discover(service, doomed));
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 200);
    const { oauthClientsTable } = await import('../../src/modules/oauth-clients/store.ts');
    const { eq } = await import('drizzle-orm');
    await service.ctx.db.delete(oauthClientsTable).where(eq(oauthClientsTable.clientId, doomed.clientId));
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 401);
  });

  test('deny returns access_denied (with iss) to the application', async () => {
    const request = await authorizationRequest(config, client.redirectUri, scope);
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', request.url);
    const consent = await browser.submit(login, '/password', { email: tenant.email, password: tenant.password }, client.redirectUri);
    const denied = await browser.submit(consent, '/consent', { decision: 'deny' }, client.redirectUri);
    const callback = new URL(denied.redirectedTo!);
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    assert.equal(callback.searchParams.get('state'), request.state);
    assert.equal(callback.searchParams.get('iss'), service.url);
    assert.equal(callback.searchParams.get('code'), null);
  });

  test('a public client (PKCE only) completes the flow without a secret', async () => {
    const spa = await insertClient(service, tenant.projectId, { public: true, redirectUris: ['http://localhost:5173/callback'] });
    const tokens = await codeFlow(spa, await discover(service, spa));
    assert.equal(jwtClaims(tokens.access_token).project_id, tenant.projectId);
  });

  test('built-in CLI client: loopback redirect on any port, and its tokens act across the user\'s projects', async () => {
    const cli = await discover(service, { clientId: ATRIUM_CLI_CLIENT_ID, clientSecret: '' });
    const redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
    const tokens = await codeFlow({ clientId: ATRIUM_CLI_CLIENT_ID, clientSecret: '', redirectUri, projectId: '' }, cli, tenant, 'openid profile email offline_access profile:read rooms:connect llm:invoke');
    const claims = jwtClaims(tokens.access_token);
    assert.equal(claims.client_id, ATRIUM_CLI_CLIENT_ID);
    assert.equal(claims.project_id, undefined);
    assert.ok(tokens.refresh_token);
    const principal = await service.ctx.auth.authenticate(tokens.access_token);
    assert.equal(principal?.projectId, undefined);
    // Membership decides: the user's own project yes, a stranger's project no.
    assert.equal((await call(service, 'GET', `/accounts/projects/${tenant.projectId}/role`, { token: tokens.access_token })).status, 200);
    const stranger = await createTenant(service, 'stranger');
    assert.equal((await call(service, 'GET', `/accounts/projects/${stranger.projectId}/role`, { token: tokens.access_token })).status, 404);
    // The loopback rule is for the CLI's loopback URIs only.
    const elsewhere = await authorizationRequest(cli, 'http://127.0.0.1:4000/not-callback', 'openid');
    const refused = await fetch(elsewhere.url, { redirect: 'manual' });
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.get('location'), null);
  });

  test('device authorization grant for the CLI: code entry, sign-in, consent, polling', async () => {
    const cli = await discover(service, { clientId: ATRIUM_CLI_CLIENT_ID, clientSecret: '' });
    const device = await oidc.initiateDeviceAuthorization(cli, { scope: 'openid offline_access profile:read' });
    assert.match(device.user_code, /^[A-Z]{4}-[A-Z]{4}$/);
    assert.equal(device.verification_uri, `${service.url}/oauth/device`);
    // Polling stops with the test, whatever happens to it.
    const stop = new AbortController();
    const polling = oidc.pollDeviceAuthorizationGrant(cli, device, undefined, { signal: stop.signal });
    polling.catch(() => {});
    try {
      await approveDevice(device.verification_uri, device.user_code);
      const tokens = await polling;
      assert.equal(jwtClaims(tokens.access_token).sub, tenant.userId);
      assert.ok(tokens.refresh_token);
      assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 200);
    } finally {
      stop.abort();
    }
  });

  test('a device link (verification_uri_complete) opens Atrium\'s confirmation page, not the library\'s script page', async () => {
    const cli = await discover(service, { clientId: ATRIUM_CLI_CLIENT_ID, clientSecret: '' });
    const device = await oidc.initiateDeviceAuthorization(cli, { scope: 'openid offline_access profile:read' });
    const link = device.verification_uri_complete!;
    assert.equal(link, `${service.url}/oauth/device?user_code=${encodeURIComponent(device.user_code)}`);
    const stop = new AbortController();
    const polling = oidc.pollDeviceAuthorizationGrant(cli, device, undefined, { signal: stop.signal });
    polling.catch(() => {});
    try {
      const browser = new FormBrowser(service.url);
      const first = await browser.go('GET', link);
      assert.equal(first.status, 200);
      assert.doesNotMatch(first.html, /Submitting Callback|<script/);
      assert.match(first.html, /<link rel="stylesheet" href="\/signin\/assets\/style\.css">/);
      assert.match(first.html, /<title>Confirm the device · Atrium CLI<\/title>/);
      assert.match(first.html, /<p class="app" id="client-name">Atrium CLI<\/p>/);
      assert.match(first.html, new RegExp(`id="user-code">${device.user_code}<`));
      assert.match(first.headers.get('content-security-policy')!, /default-src 'none'/);
      assert.doesNotMatch(first.headers.get('content-security-policy')!, /script-src/);
      // Continue is the confirmation a typed code leads to: sign-in, consent, and the CLI's tokens.
      const login = await browser.submit(first, '/oauth/device', {});
      const consent = await browser.submit(login, '/password', { email: tenant.email, password: tenant.password });
      const done = await browser.submit(consent, '/consent', { decision: 'allow' });
      assert.match(done.html, /Device connected/);
      const tokens = await polling;
      assert.equal(jwtClaims(tokens.access_token).sub, tenant.userId);
      assert.deepEqual(tokens.scope?.split(' ').sort(), ['offline_access', 'openid', 'profile:read']);
    } finally {
      stop.abort();
    }

    // The link of a used code shows the entry form, with the code to correct, and the reason.
    const used = await new FormBrowser(service.url).go('GET', link);
    assert.equal(used.status, 400);
    assert.match(pageError(used.html)!, /not valid/);
    assert.match(used.html, new RegExp(`id="f-user_code" name="user_code" type="text" value="${device.user_code}"`));
    // A code typed into the link the way people do (lower case, no dash) is found all the same.
    const another = await oidc.initiateDeviceAuthorization(cli, { scope: 'openid' });
    const typed = another.user_code.replace('-', '').toLowerCase();
    const page = await new FormBrowser(service.url).go('GET', `${service.url}/oauth/device?user_code=${typed}`);
    assert.equal(page.status, 200);
    assert.match(page.html, new RegExp(`id="user-code">${another.user_code}<`));
  });

  /** The user's side of the device flow: enter the code, confirm, sign in, consent. */
  async function approveDevice(verificationUri: string, userCode: string) {
    const browser = new FormBrowser(service.url);
    const entry = await browser.go('GET', verificationUri);
    assert.equal(entry.status, 200);
    assert.match(entry.html, /<label for="f-user_code">/);
    const wrong = await browser.submit(entry, '/oauth/device', { user_code: 'BCDF-GHJK' });
    assert.equal(wrong.status, 400);
    assert.match(pageError(wrong.html)!, /not valid/);
    const confirm = await browser.submit(wrong, '/oauth/device', { user_code: userCode });
    assert.match(confirm.html, new RegExp(userCode));
    const login = await browser.submit(confirm, '/oauth/device', {});
    const consent = await browser.submit(login, '/password', { email: tenant.email, password: tenant.password });
    const done = await browser.submit(consent, '/consent', { decision: 'allow' });
    assert.match(done.html, /Device connected/);
  }
});

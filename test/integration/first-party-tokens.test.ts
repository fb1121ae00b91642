// Atrium's own clients (console, CLI) act as the signed-in user on every route when their token
// carries the atrium:user scope; no other token gains that, whatever a client is registered with.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as oidc from 'openid-client';
import { ATRIUM_CLI_CLIENT_ID, ATRIUM_CLI_SCOPE, ATRIUM_CONSOLE_CLIENT_ID } from '../../src/modules/oauth/first-party.ts';
import { EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, insertClient, jwtClaims, signInAndConsent } from '../support/oauth.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('first-party tokens', (engine) => {
  let service: TestService;
  let tenant: Tenant;

  before(async () => {
    service = await startTestService(engine, { ...EMAIL_LOGIN_ENV, ATRIUM_AUTH_CACHE_SECONDS: '0' });
    tenant = await createTenant(service, 'first-party');
  });
  after(() => service?.stop());

  async function tokenFor(clientId: string, redirectUri: string, scope: string, clientSecret = ''): Promise<string> {
    const config = await discover(service, { clientId, clientSecret });
    const request = await authorizationRequest(config, redirectUri, scope);
    const callback = await signInAndConsent(new FormBrowser(service.url), request, redirectUri, tenant.email, tenant.password);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
    return tokens.access_token;
  }

  const projectsOf = (token: string) => call(service, 'GET', '/accounts/projects', { token });

  test('the console\'s token acts as the user: user-only routes, every project, the user\'s roles', async () => {
    const token = await tokenFor(ATRIUM_CONSOLE_CLIENT_ID, `${service.url}/console/callback`, 'openid profile email atrium:user');
    const claims = jwtClaims(token);
    assert.equal(claims.sub, tenant.userId);
    assert.equal(claims.project_id, undefined);
    assert.match(String(claims.scope), /\batrium:user\b/);

    const listed = await projectsOf(token);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.ok(listed.body.projects.some((p: { id: string }) => p.id === tenant.projectId));
    const created = await call(service, 'POST', '/accounts/projects', { token, json: { name: 'made from the console' } });
    assert.equal(created.status, 201);
    assert.equal((await call(service, 'GET', `/accounts/projects/${tenant.projectId}/api-keys`, { token })).status, 200, 'an admin route, as the admin');
    // Still the user's roles: another user's project stays invisible.
    const stranger = await createTenant(service, 'stranger');
    assert.equal((await call(service, 'GET', `/accounts/projects/${stranger.projectId}/rooms`, { token })).status, 404);
  });

  test('the CLI\'s token with atrium:user acts as the user; without it, it is a scoped OAuth token', async () => {
    const full = await tokenFor(ATRIUM_CLI_CLIENT_ID, 'http://127.0.0.1:45678/callback', ATRIUM_CLI_SCOPE);
    assert.equal((await projectsOf(full)).status, 200);

    const scoped = await tokenFor(ATRIUM_CLI_CLIENT_ID, 'http://127.0.0.1:45678/callback', 'openid profile:read');
    const refused = await projectsOf(scoped);
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /does not accept oauth credentials/);
    assert.equal((await call(service, 'GET', `/accounts/projects/${tenant.projectId}/role`, { token: scoped })).status, 200, 'routes naming its scope still take it');
  });

  test('a project client cannot be registered with atrium:user', async () => {
    const registered = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/oauth/clients`, {
      token: tenant.apiKey,
      json: { name: 'wants it all', grant_types: ['authorization_code'], redirect_uris: ['http://127.0.0.1:9/cb'], scope: 'openid atrium:user' },
    });
    assert.equal(registered.status, 400);
    assert.match(registered.body.error.message, /scope has unknown value\(s\) "atrium:user"/);
  });

  test('a project client whose stored scope names atrium:user still gets neither the scope nor the user\'s authority', async () => {
    const client = await insertClient(service, tenant.projectId, { scope: 'openid profile:read atrium:user' });
    const token = await tokenFor(client.clientId, client.redirectUri, 'openid profile:read', client.clientSecret);
    assert.doesNotMatch(String(jwtClaims(token).scope), /atrium:user/);
    assert.equal((await projectsOf(token)).status, 403);
    const asking = await discover(service, client).then((config) => authorizationRequest(config, client.redirectUri, 'openid atrium:user'));
    const answer = await new FormBrowser(service.url).go('GET', asking.url, undefined, client.redirectUri);
    assert.match(answer.redirectedTo ?? '', /error=invalid_scope/, 'asking for it is refused');
  });
});

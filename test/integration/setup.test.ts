// First-run setup: only with the token, only while no account exists, then gone, and never for an
// admin who could not sign in; the console's sign-in that follows asks neither for the password
// again nor for consent. (The deployment matrix walks it on PostgreSQL too.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import * as oidc from 'openid-client';
import { FIRST_RUN_COOKIE, setupLink, setupToken } from '../../src/modules/setup/service.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { findUserById, issuePersonalAccessToken } from '../../src/modules/users/service.ts';
import { ATRIUM_CLI_CLIENT_ID, ATRIUM_CONSOLE_CLIENT_ID } from '../../src/modules/oauth/first-party.ts';
import { authorizationRequest, discover, FormBrowser } from '../support/oauth.ts';
import { call, startTestService, type TestService } from '../support/service.ts';

describe('first-run setup [pglite]', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService('pglite');
  });
  after(() => service?.stop());

  const body = (token: string, extra: Record<string, string> = {}) => ({ token, email: 'First@Example.test', password: 'a long password', first_name: 'Ada', project_name: 'First project', ...extra });

  test('the link is printed on an empty database; the wrong token is refused; the right one creates the admin and project once', async () => {
    const token = setupToken(service.ctx.config);
    assert.equal(await setupLink(service.ctx), `${service.url}/console/setup?token=${token}`);

    assert.equal((await call(service, 'POST', '/setup/check', { json: { token: 'x'.repeat(43) } })).status, 403);
    assert.equal((await call(service, 'POST', '/setup', { json: body('wrong') })).status, 403);
    assert.equal((await call(service, 'POST', '/setup/check', { json: { token } })).status, 200);
    const weak = await call(service, 'POST', '/setup', { json: body(token, { password: 'short' }) });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.error.code, 'weak_password');

    const created = await call(service, 'POST', '/setup', { json: body(token) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { user_id: userId, project_id: projectId } = created.body;

    // An ordinary, confirmed account (its address lower-cased), admin of the new project.
    const user = await findUserById(service.ctx.db, userId);
    assert.equal(user?.email, 'first@example.test');
    assert.ok(user?.emailVerifiedAt);
    const userToken = await issuePersonalAccessToken(service.ctx.db, userId, 'test');
    const role = await call(service, 'GET', `/accounts/projects/${projectId}/role`, { token: userToken });
    assert.equal(role.body.role, 'admin');
    // The deployment's audit log names the setup, its admin and the client's address.
    const [entry] = rowsOf<{ actor_id: string; target_id: string; client_address: string }>(await service.ctx.db.execute(sql`select * from audit_log where action = 'deployment.setup'`));
    assert.deepEqual([entry?.actor_id, entry?.target_id, entry?.client_address], [userId, projectId, '127.0.0.1']);

    // Gone once an account exists, token or not.
    assert.equal(await setupLink(service.ctx), undefined);
    assert.equal((await call(service, 'POST', '/setup/check', { json: { token } })).status, 404);
    const again = await call(service, 'POST', '/setup', { json: body(token, { email: 'second@example.test' }) });
    assert.equal(again.status, 404);
  });
});

describe('first-run setup where the admin could not sign in [pglite]', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService('pglite', { ATRIUM_PASSWORD_LOGIN: 'false' });
  });
  after(() => service?.stop());

  test('is refused before any account exists, naming the setting', async () => {
    const token = setupToken(service.ctx.config);
    const check = await call(service, 'POST', '/setup/check', { json: { token } });
    assert.equal(check.status, 409);
    assert.match(check.body.error.message, /ATRIUM_PASSWORD_LOGIN=false/);
    const setup = await call(service, 'POST', '/setup', { json: { token, email: 'admin@example.test', password: 'a long password', project_name: 'First project' } });
    assert.equal(setup.status, 409);
    assert.ok(await setupLink(service.ctx), 'no account was created: the setup is still open');
  });
});

describe('the console\'s first sign-in after setup [pglite]', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService('pglite');
  });
  after(() => service?.stop());

  const consoleRedirect = () => `${service.url}/console/callback`;
  const consoleRequest = async () => authorizationRequest(await discover(service, { clientId: ATRIUM_CONSOLE_CLIENT_ID, clientSecret: '' }), consoleRedirect(), 'openid profile email atrium:user');

  test('signs the new admin in without the password form or a consent page, once, and for the console only', async () => {
    const browser = new FormBrowser(service.url);
    const token = setupToken(service.ctx.config);
    const created = await browser.request('POST', '/setup', JSON.stringify({ token, email: 'ada@example.test', password: 'a long password', project_name: 'First' }), { 'content-type': 'application/json', accept: 'application/json' });
    assert.equal(created.status, 201, created.html);
    const cookie = created.headers.getSetCookie().find((c) => c.startsWith(`${FIRST_RUN_COOKIE}=`));
    assert.match(cookie ?? '', /; Path=\/interaction; Max-Age=300; HttpOnly; SameSite=Lax$/);
    const { project_id: projectId } = JSON.parse(created.html) as { project_id: string };

    // Another client's sign-in in the same browser still asks who is signing in.
    const cli = await authorizationRequest(await discover(service, { clientId: ATRIUM_CLI_CLIENT_ID, clientSecret: '' }), 'http://127.0.0.1/callback', 'openid profile');
    const cliPage = await browser.go('GET', cli.url, undefined, 'http://127.0.0.1/callback');
    assert.ok(cliPage.html.includes('id="password-form"'), 'the CLI gets the sign-in form');

    // The console's: straight back to the console, signed in as the new admin.
    const request = await consoleRequest();
    const done = await browser.go('GET', request.url, undefined, consoleRedirect());
    assert.ok(done.redirectedTo, `expected the console's callback, got ${done.status}: ${done.html.slice(0, 300)}`);
    const config = await discover(service, { clientId: ATRIUM_CONSOLE_CLIENT_ID, clientSecret: '' });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.redirectedTo), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
    assert.equal((await call(service, 'GET', `/accounts/projects/${projectId}/role`, { token: tokens.access_token })).body.role, 'admin');
    assert.ok(!browser.cookieNames().includes(FIRST_RUN_COOKIE), 'the cookie is spent');

    // A forged cookie, or one past its five minutes, signs nobody in.
    const { user_id: userId } = JSON.parse(created.html) as { user_id: string };
    const stale = service.ctx.secrets.encrypt(JSON.stringify({ purpose: 'first-run sign-in', userId, expiresAt: Date.now() - 1 }));
    const otherPurpose = service.ctx.secrets.encrypt(JSON.stringify({ purpose: 'something else', userId, expiresAt: Date.now() + 60_000 }));
    for (const value of ['v1.forged', stale, otherPurpose]) {
      const other = new FormBrowser(service.url);
      other.setCookie(FIRST_RUN_COOKIE, value, '/interaction');
      const page = await other.go('GET', (await consoleRequest()).url, undefined, consoleRedirect());
      assert.ok(page.html.includes('id="password-form"'), 'the sign-in form');
    }
  });

  test('the console never shows a consent page, also to an admin who signs in with a password', async () => {
    const browser = new FormBrowser(service.url);
    const request = await consoleRequest();
    const form = await browser.go('GET', request.url, undefined, consoleRedirect());
    assert.ok(form.html.includes('id="password-form"'));
    const done = await browser.submit(form, '/password', { email: 'ada@example.test', password: 'a long password' }, consoleRedirect());
    assert.ok(done.redirectedTo?.startsWith(`${consoleRedirect()}?code=`), `expected the callback, got ${done.status}: ${done.html.slice(0, 300)}`);
  });
});

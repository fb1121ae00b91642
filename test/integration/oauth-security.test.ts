// Security properties of the authorization server and sign-in pages, each a test, on both engines:
// redirect URI rules, PKCE, single-use codes under concurrency (also the adapter's own race path),
// refresh token reuse, unconfirmed accounts, scope ceilings, CSRF (also on the emailed-link forms),
// account enumeration, attempt limits (also on every request that sends mail) and open redirects.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { errors } from 'oidc-provider';
import * as oidc from 'openid-client';
import postgres from 'postgres';
import { createUser } from '../../src/modules/users/service.ts';
import { findUserByEmail, updateUser } from '../../src/modules/users/store.ts';
import { adapterClass } from '../../src/modules/oauth/adapter.ts';
import { call, forEachEngine, type Tenant, type TestService } from '../support/service.ts';
import {
  EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, findForm, insertClient, linkIn, mailCount, oauthError, pageError, signInAndConsent,
  startOAuthService, uniqueEmail, waitForMail, type TestClient,
} from '../support/oauth.ts';

const SCOPE = 'openid offline_access profile:read';

forEachEngine('oauth security', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    ({ service, tenant, client, config } = await startOAuthService(engine, {
      env: { ...EMAIL_LOGIN_ENV, ATRIUM_AUTH_CACHE_SECONDS: '0' },
      tenant: 'sec',
      client: { redirectUris: ['http://127.0.0.1:9/cb/exact'] },
    }));
  });
  after(() => service?.stop());

  /** A fresh authorization code (and what redeems it) for the tenant user. */
  async function freshCode() {
    const request = await authorizationRequest(config, client.redirectUri, SCOPE);
    const callback = await signInAndConsent(new FormBrowser(service.url), request, client.redirectUri, tenant.email, tenant.password);
    return { request, callback, code: callback.searchParams.get('code')! };
  }

  function redeem(code: string, verifier: string) {
    return fetch(`${service.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: client.redirectUri }),
    });
  }

  /** GETs an authorization URL and asserts the error page: 400, HTML, and no redirect anywhere. */
  async function assertErrorPage(url: URL | string) {
    const response = await fetch(url, { redirect: 'manual' });
    assert.equal(response.status, 400, String(url));
    assert.equal(response.headers.get('location'), null, `no redirect for ${url}`);
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await response.text(), /This sign-in request cannot continue/);
  }

  test('redirect URIs must match exactly', async () => {
    const variants = [
      'http://127.0.0.1:9/cb/exact/',
      'http://127.0.0.1:9/cb/exact?x=1',
      'http://127.0.0.1:9/cb/exact/evil',
      'http://127.0.0.1:10/cb/exact',
      'http://localhost:9/cb/exact',
      'https://127.0.0.1:9/cb/exact',
      'http://127.0.0.1:9/CB/exact',
      'http://127.0.0.1:9/cb/exact#frag',
      'http://evil.example/cb/exact',
    ];
    for (const redirectUri of variants) {
      const { url } = await authorizationRequest(config, redirectUri, SCOPE);
      await assertErrorPage(url);
    }
    // And the registered one is accepted (redirects to the sign-in page).
    const ok = await fetch((await authorizationRequest(config, client.redirectUri, SCOPE)).url, { redirect: 'manual' });
    assert.equal(ok.status, 303);
    assert.match(ok.headers.get('location')!, /^\/interaction\//);
  });

  test('unknown client or missing redirect_uri renders an error page and never redirects', async () => {
    const unknown = new URL(`${service.url}/oauth/authorize`);
    for (const [k, v] of Object.entries({ client_id: 'no-such-client', response_type: 'code', redirect_uri: 'http://127.0.0.1:9/cb/exact', scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })) unknown.searchParams.set(k, v);
    await assertErrorPage(unknown);
    const noRedirect = (await authorizationRequest(config, client.redirectUri, SCOPE)).url;
    noRedirect.searchParams.delete('redirect_uri');
    await assertErrorPage(noRedirect);
  });

  test('PKCE is required, and plain is refused', async () => {
    const missing = (await authorizationRequest(config, client.redirectUri, SCOPE)).url;
    missing.searchParams.delete('code_challenge');
    missing.searchParams.delete('code_challenge_method');
    const plain = (await authorizationRequest(config, client.redirectUri, SCOPE)).url;
    plain.searchParams.set('code_challenge_method', 'plain');
    plain.searchParams.set('code_challenge', 'a'.repeat(43));
    for (const url of [missing, plain]) {
      const response = await fetch(url, { redirect: 'manual' });
      assert.equal(response.status, 303);
      const back = new URL(response.headers.get('location')!);
      assert.equal(back.origin + back.pathname, client.redirectUri, 'errors for a known client and redirect go back to it');
      assert.equal(back.searchParams.get('error'), 'invalid_request');
      assert.equal(back.searchParams.get('iss'), service.url);
      assert.equal(back.searchParams.get('code'), null);
    }
    // A code redeemed with the wrong verifier, or none, yields nothing.
    const { code } = await freshCode();
    const wrong = await redeem(code, oidc.randomPKCECodeVerifier());
    assert.equal(wrong.status, 400);
    assert.equal(((await wrong.json()) as { error: string }).error, 'invalid_grant');
    const { code: code2 } = await freshCode();
    const none = await fetch(`${service.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code2, redirect_uri: client.redirectUri }),
    });
    assert.equal(none.status, 400);
  });

  test('a replayed code fails and revokes what the first redemption issued', async () => {
    const { code, request } = await freshCode();
    const first = await redeem(code, request.verifier);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('cache-control'), 'no-store');
    const tokens = (await first.json()) as { access_token: string; refresh_token: string };
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 200);
    const replay = await redeem(code, request.verifier);
    assert.equal(replay.status, 400);
    assert.equal(((await replay.json()) as { error: string }).error, 'invalid_grant');
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token), (error) => oauthError(error) === 'invalid_grant');
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 401);
  });

  test('20 parallel redemptions of one code yield exactly one token', async () => {
    const { code, request } = await freshCode();
    const responses = await Promise.all(Array.from({ length: 20 }, () => redeem(code, request.verifier)));
    const statuses = responses.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses.join(',')}`);
    assert.equal(statuses.filter((s) => s === 400).length, 19);
    for (const response of responses.filter((r) => r.status === 400)) assert.equal(((await response.json()) as { error: string }).error, 'invalid_grant');
    // The losers were replays, so the grant is gone: the one token issued is revoked too.
    const winner = (await responses.find((r) => r.status === 200)!.json()) as { access_token: string; refresh_token: string };
    await assert.rejects(oidc.refreshTokenGrant(config, winner.refresh_token), (error) => oauthError(error) === 'invalid_grant');
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: winner.access_token })).status, 401);
  });

  /** Whether the grant's refresh token and access token are both dead. */
  async function assertRevoked(tokens: { access_token: string; refresh_token: string }) {
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token), (error) => oauthError(error) === 'invalid_grant');
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 401);
  }

  // The library checks a code's consumed flag when it reads it; a redemption that read the code
  // before another consumed it gets past that check, and only the adapter's conditional consume
  // stands between it and a second token set. Interleaved by hand here, on both engines.
  test('a redemption that read the code before another consumed it gets nothing, and revokes the grant', async () => {
    const { code, request } = await freshCode();
    const codes = new (adapterClass(service.ctx.db, 0))('AuthorizationCode');
    const read = await codes.find(code);
    assert.ok(read && read.consumed === undefined, 'the late redemption read a code not yet consumed');
    const first = await redeem(code, request.verifier);
    assert.equal(first.status, 200);
    await assert.rejects(codes.consume(code), (error) => error instanceof errors.InvalidGrant, 'the late redemption loses');
    await assertRevoked((await first.json()) as { access_token: string; refresh_token: string });
  });

  if (engine === 'postgres') {
    // The same race through the token endpoint: a lock on the code's row holds both redemptions at
    // their consume, after both have read the code; released, exactly one consume wins.
    test('two redemptions held at the consume of one code: one token, and the grant revoked', async () => {
      const { code, request } = await freshCode();
      const sql = postgres(service.ctx.config.databaseUrl!, { max: 2, onnotice: () => {} });
      try {
        // An object, not the array itself: postgres.js awaits an array a transaction returns before
        // committing, and these requests wait for the commit.
        const { racing } = await sql.begin(async (tx) => {
          await tx`select 1 from oauth_provider_models where model = 'AuthorizationCode' and id = ${code} for update`;
          const [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
          const racing = [redeem(code, request.verifier), redeem(code, request.verifier)];
          const deadline = Date.now() + 10_000;
          for (;;) {
            // The second waiter queues behind the first (PostgreSQL's tuple lock), not behind us.
            const [{ waiting }] = await sql<{ waiting: number }[]>`
              with blocked as (select pid, pg_blocking_pids(pid) as by from pg_stat_activity)
              select count(*)::int as waiting from blocked a
              where ${pid}::int = any(a.by) or exists (select 1 from blocked b where b.pid = any(a.by) and ${pid}::int = any(b.by))`;
            if (waiting === 2) break;
            assert.ok(Date.now() < deadline, `both redemptions reach the consume (${waiting} waiting)`);
            await new Promise((r) => setTimeout(r, 20));
          }
          return { racing };
        });
        const answered = await Promise.all(racing);
        assert.deepEqual(answered.map((r) => r.status).sort(), [200, 400]);
        const loser = answered.find((r) => r.status === 400)!;
        assert.equal(((await loser.json()) as { error: string }).error, 'invalid_grant');
        await assertRevoked((await answered.find((r) => r.status === 200)!.json()) as { access_token: string; refresh_token: string });
      } finally {
        await sql.end();
      }
    });
  }

  test('reusing a rotated refresh token kills the whole family', async () => {
    const { code, request } = await freshCode();
    const tokens = (await (await redeem(code, request.verifier)).json()) as { refresh_token: string };
    const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token);
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: rotated.access_token })).status, 200);
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token), (error) => oauthError(error) === 'invalid_grant');
    await assert.rejects(oidc.refreshTokenGrant(config, rotated.refresh_token!), (error) => oauthError(error) === 'invalid_grant');
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: rotated.access_token })).status, 401);
  });

  test('parallel refreshes with one refresh token yield one new token', async () => {
    const { code, request } = await freshCode();
    const tokens = (await (await redeem(code, request.verifier)).json()) as { refresh_token: string };
    const responses = await Promise.all(Array.from({ length: 10 }, () => fetch(`${service.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
    })));
    assert.equal(responses.filter((r) => r.status === 200).length, 1, responses.map((r) => r.status).join(','));
  });

  test('an unconfirmed email cannot sign in or authorize', async () => {
    const email = uniqueEmail('unconfirmed');
    const password = 'unconfirmed password';
    const user = await createUser(service.ctx.db, { email, password, emailVerified: false });
    const browser = new FormBrowser(service.url);
    const request = await authorizationRequest(config, client.redirectUri, SCOPE);
    const login = await browser.go('GET', request.url, undefined, client.redirectUri);
    const refused = await browser.submit(login, '/password', { email, password }, client.redirectUri);
    assert.equal(refused.redirectedTo, undefined);
    assert.equal(refused.status, 403);
    assert.match(refused.html, /Confirm your email first/);

    // Confirmed, signed in and tokens issued; then the address becomes unconfirmed again: the
    // browser session no longer authorizes, and the grant's tokens stop working.
    await updateUser(service.ctx.db, user.id, { emailVerifiedAt: new Date() });
    const signedIn = new FormBrowser(service.url);
    const first = await authorizationRequest(config, client.redirectUri, SCOPE);
    const callback = await signInAndConsent(signedIn, first, client.redirectUri, email, password);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: first.verifier, expectedState: first.state, expectedNonce: first.nonce });
    await updateUser(service.ctx.db, user.id, { emailVerifiedAt: null });
    const again = await signedIn.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url, undefined, client.redirectUri);
    assert.equal(again.redirectedTo, undefined, 'no code for an unconfirmed account');
    assert.match(again.html, /id="password-form"/, 'back to the sign-in form');
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token!), (error) => oauthError(error) === 'invalid_grant');
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: tokens.access_token })).status, 401);
  });

  test('a client gets only the scopes it was registered with', async () => {
    const narrow = await insertClient(service, tenant.projectId, { scope: 'openid profile:read' });
    const narrowConfig = await discover(service, narrow);
    for (const scope of ['openid rooms:connect', 'openid llm:invoke', 'openid email']) {
      const response = await fetch((await authorizationRequest(narrowConfig, narrow.redirectUri, scope)).url, { redirect: 'manual' });
      assert.equal(response.status, 303, scope);
      const back = new URL(response.headers.get('location')!);
      assert.equal(back.searchParams.get('error'), 'invalid_scope', scope);
    }
    const machine = await insertClient(service, tenant.projectId, { grantTypes: ['client_credentials'], redirectUris: [], scope: 'profile:read' });
    await assert.rejects(oidc.clientCredentialsGrant(await discover(service, machine), { scope: 'rooms:connect' }), (error) => oauthError(error) === 'invalid_scope');
  });

  test('form posts without the CSRF token, with a wrong one, or cross-site are refused', async () => {
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const form = findForm(login.html, '/password');
    const action = new URL(form.action, login.url);
    const attempts: [Record<string, string>, Record<string, string>][] = [
      [{ email: tenant.email, password: tenant.password }, {}],
      [{ email: tenant.email, password: tenant.password, _csrf: 'forged' }, {}],
      [{ ...form.hidden, email: tenant.email, password: tenant.password }, { 'sec-fetch-site': 'cross-site' }],
      [{ ...form.hidden, email: tenant.email, password: tenant.password }, { origin: 'http://evil.example' }],
    ];
    for (const [fields, headers] of attempts) {
      const response = await browser.request('POST', action, fields, headers);
      assert.equal(response.status, 403, JSON.stringify({ fields: Object.keys(fields), headers }));
      assert.equal(response.location, undefined);
    }
    // Without the browser's CSRF cookie, the token from the page is worthless.
    const stranger = new FormBrowser(service.url);
    assert.equal((await stranger.request('POST', action, { ...form.hidden, email: tenant.email, password: tenant.password })).status, 403);
    // The consent form is protected the same way.
    const consent = await browser.submit(login, '/password', { email: tenant.email, password: tenant.password }, client.redirectUri);
    const consentForm = findForm(consent.html, '/consent');
    const forged = await browser.request('POST', new URL(consentForm.action, consent.url), { decision: 'allow' });
    assert.equal(forged.status, 403);
    assert.equal(forged.location, undefined);
  });

  test('the emailed-link forms (confirm, reset) refuse posts without this browser\'s CSRF token, and change nothing', async () => {
    const forged = (form: { hidden: Record<string, string> }): [Record<string, string>, Record<string, string>][] => [
      [{ token: form.hidden.token! }, {}],
      [{ ...form.hidden, _csrf: 'forged' }, {}],
      [form.hidden, { 'sec-fetch-site': 'cross-site' }],
      [form.hidden, { origin: 'http://evil.example' }],
    ];
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;

    const email = uniqueEmail('csrf-confirm');
    await browser.submit(await browser.go('GET', `/interaction/${uid}/signup`), '/signup', { email, password: 'confirm me please' });
    const confirmPage = await browser.go('GET', linkIn((await waitForMail(service, email, /Confirm your email/)).text));
    const confirmForm = findForm(confirmPage.html, '/confirm');
    const confirmAction = new URL(confirmForm.action, confirmPage.url);
    for (const [fields, headers] of forged(confirmForm)) {
      assert.equal((await browser.request('POST', confirmAction, fields, headers)).status, 403, JSON.stringify({ fields: Object.keys(fields), headers }));
    }
    assert.equal((await new FormBrowser(service.url).request('POST', confirmAction, confirmForm.hidden)).status, 403, 'a browser without the CSRF cookie');
    assert.equal((await findUserByEmail(service.ctx.db, email))!.emailVerifiedAt, null, 'still unconfirmed');

    const owner = await createUser(service.ctx.db, { email: uniqueEmail('csrf-reset'), password: 'the old password', emailVerified: true });
    const since = new Date();
    await browser.submit(await browser.go('GET', `/interaction/${uid}/forgot`), '/forgot', { email: owner.email });
    const resetPage = await browser.go('GET', linkIn((await waitForMail(service, owner.email, /Reset your password/, since)).text));
    const resetForm = findForm(resetPage.html, '/reset');
    const resetAction = new URL(resetForm.action, resetPage.url);
    for (const [fields, headers] of forged(resetForm)) {
      assert.equal((await browser.request('POST', resetAction, { ...fields, password: 'the attacker password' }, headers)).status, 403, JSON.stringify({ fields: Object.keys(fields), headers }));
    }
    assert.equal((await new FormBrowser(service.url).request('POST', resetAction, { ...resetForm.hidden, password: 'the attacker password' })).status, 403, 'a browser without the CSRF cookie');
    assert.equal((await findUserByEmail(service.ctx.db, owner.email))!.passwordHash, owner.passwordHash, 'the password is unchanged');

    // The links themselves were good: from this browser's own forms they work.
    assert.match((await browser.submit(confirmPage, '/confirm', {}, client.redirectUri)).html, /Email confirmed|\/consent"|Sign in/);
    assert.ok((await findUserByEmail(service.ctx.db, email))!.emailVerifiedAt);
    assert.match((await browser.submit(resetPage, '/reset', { password: 'the new password' })).html, /Your password was changed|password-form/);
    assert.notEqual((await findUserByEmail(service.ctx.db, owner.email))!.passwordHash, owner.passwordHash);
  });

  test('sign-in, code and reset pages do not reveal whether an account exists', async () => {
    const unknown = uniqueEmail('nobody');
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;

    const wrongPassword = await browser.submit(login, '/password', { email: tenant.email, password: 'not the password' });
    const noAccount = await browser.submit(login, '/password', { email: unknown, password: 'not the password' });
    assert.equal(wrongPassword.status, noAccount.status);
    assert.equal(pageError(wrongPassword.html), pageError(noAccount.html));

    const codePage = await browser.go('GET', `/interaction/${uid}/code`);
    const codeExisting = await browser.submit(codePage, '/code', { email: tenant.email });
    const codeUnknown = await browser.submit(codePage, '/code', { email: unknown });
    assert.equal(codeExisting.status, codeUnknown.status);
    assert.equal(codeExisting.html.replaceAll(tenant.email, 'X').replace(/value="[^"]*"/g, ''), codeUnknown.html.replaceAll(unknown, 'X').replace(/value="[^"]*"/g, ''));
    const badCodeExisting = await browser.submit(codeExisting, '/code/verify', { code: '000000' });
    const badCodeUnknown = await browser.submit(codeUnknown, '/code/verify', { code: '000000' });
    assert.equal(badCodeExisting.status, badCodeUnknown.status);
    assert.equal(pageError(badCodeExisting.html), pageError(badCodeUnknown.html));

    const forgotPage = await browser.go('GET', `/interaction/${uid}/forgot`);
    const resetExisting = await browser.submit(forgotPage, '/forgot', { email: tenant.email });
    const resetUnknown = await browser.submit(forgotPage, '/forgot', { email: unknown });
    assert.equal(resetExisting.status, resetUnknown.status);
    assert.equal(resetExisting.html.replaceAll(tenant.email, 'X'), resetUnknown.html.replaceAll(unknown, 'X'));

    const signupPage = await browser.go('GET', `/interaction/${uid}/signup`);
    const signupExisting = await browser.submit(signupPage, '/signup', { email: tenant.email, password: 'some new password' });
    const signupNew = await browser.submit(signupPage, '/signup', { email: unknown, password: 'some new password' });
    assert.equal(signupExisting.status, signupNew.status);
    assert.equal(signupExisting.html.replaceAll(tenant.email, 'X'), signupNew.html.replaceAll(unknown, 'X'));
    // Mail went only where an account exists (or is being created), and the unknown address got
    // nothing from the code and reset requests. Mail is sent after the response, so wait for the
    // last mail these requests cause: the sign-up's confirmation. It was asked for after the code and
    // reset requests, and is sent after more steps than either (look up, create the account, store
    // the link), so a mail either of them sent to the address would be in by then.
    await waitForMail(service, unknown, /^Confirm your email address/);
    assert.equal(await mailCount(service, unknown), 1, 'only the sign-up confirmation');
  });

  test('redirects after sign-in go only to our own authorization endpoint', async () => {
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const form = findForm(login.html, '/password');
    const response = await browser.request('POST', new URL(`${form.action}?next=https://evil.example/`, login.url), {
      ...form.hidden, email: tenant.email, password: tenant.password, next: 'https://evil.example/', returnTo: 'https://evil.example/', redirect_uri: 'https://evil.example/',
    });
    assert.equal(response.status, 303);
    assert.ok(response.location!.startsWith(`${service.url}/oauth/authorize/`), response.location);
    // The notice parameter is looked up, never echoed.
    const page = await browser.go('GET', `${new URL(form.action, login.url).pathname.replace(/\/password$/, '')}?notice=<script>alert(1)</script>`);
    assert.doesNotMatch(page.html, /<script>/);
  });

  test('pages carry clickjacking and content-type protections', async () => {
    const response = await fetch((await authorizationRequest(config, client.redirectUri, SCOPE)).url, { redirect: 'manual' });
    const page = await fetch(new URL(response.headers.get('location')!, service.url));
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.match(page.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    assert.match(page.headers.get('content-security-policy')!, /default-src 'none'/);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('cache-control'), 'no-store');
  });
});

forEachEngine('oauth attempt limits', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    ({ service, tenant, client, config } = await startOAuthService(engine, {
      env: { ...EMAIL_LOGIN_ENV, ATRIUM_SIGNIN_LIMIT_PER_ACCOUNT: '3', ATRIUM_SIGNIN_LIMIT_PER_IP: '8' },
      tenant: 'limits',
    }));
  });
  after(() => service?.stop());

  test('wrong passwords are limited per account, the same for unknown accounts, then per IP', async () => {
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const unknown = uniqueEmail('nobody');
    const statuses = async (email: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await browser.submit(login, '/password', { email, password: `wrong ${i}` })).status);
      return out;
    };
    assert.deepEqual(await statuses(tenant.email, 4), [401, 401, 401, 429]);
    assert.deepEqual(await statuses(unknown, 4), [401, 401, 401, 429]);
    // The right password does not get through a spent account budget either.
    const blocked = await browser.submit(login, '/password', { email: tenant.email, password: tenant.password });
    assert.equal(blocked.status, 429);
    assert.match(pageError(blocked.html)!, /Too many attempts/);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    // 6 failures so far from this IP; two more spend the IP budget for every address.
    assert.deepEqual(await statuses(uniqueEmail('a'), 2), [401, 401]);
    assert.deepEqual(await statuses(uniqueEmail('b'), 1), [429]);
  });
});

forEachEngine('oauth mail request limits', (engine) => {
  let service: TestService;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    ({ service, client, config } = await startOAuthService(engine, {
      env: { ...EMAIL_LOGIN_ENV, ATRIUM_SIGNIN_LIMIT_PER_ACCOUNT: '3' },
      tenant: 'mail-limits',
    }));
  });
  after(() => service?.stop());

  // Each of these sends mail (or would, for an address with an account) and answers the same
  // either way: only the attempt budget stops them being used to flood a mailbox.
  test('every request that sends mail spends the address\'s budget: codes, resets, sign-ups, confirmation links', async () => {
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;
    const csrf = findForm(login.html, '/password').hidden._csrf!;
    const confirmed = async () => (await createUser(service.ctx.db, { email: uniqueEmail('limited'), password: 'a good password', emailVerified: true })).email;
    const unconfirmed = async () => (await createUser(service.ctx.db, { email: uniqueEmail('waiting'), emailVerified: false })).email;
    const forms: [string, () => Promise<string>, Record<string, string>][] = [
      ['/code', confirmed, {}],
      ['/forgot', confirmed, {}],
      ['/signup', async () => uniqueEmail('signup'), { password: 'a good password' }],
      ['/confirm/resend', unconfirmed, {}],
    ];
    for (const [path, address, extra] of forms) {
      const email = await address();
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 4; i++) {
        last = await browser.request('POST', `/interaction/${uid}${path}`, { _csrf: csrf, email, ...extra });
        statuses.push(last.status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 429], path);
      assert.match(pageError(last!.html)!, /Too many attempts/, path);
      assert.ok(Number(last!.headers.get('retry-after')) > 0, path);
    }
  });
});

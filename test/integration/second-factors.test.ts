// Second factors on both engines, through the real sign-in pages and openid-client: enrolling an
// authenticator app (codes computed here from RFC 6238, not by the server's library), the sign-in
// asking for it after the password, codes accepted once, wrong codes locking the factor (counted in
// the database, so on every instance), recovery codes, `amr`/`acr` in the ID token, a client asking
// for two factors, and the policies requiring a second factor of admins. Passkeys: oauth-passkeys.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import * as oidc from 'openid-client';
import { operatorActor } from '../../src/cli/operator.ts';
import { createSecondFactors, createUser, issuePersonalAccessToken } from '../../src/modules/users/service.ts';
import { MFA_ACR } from '../../src/modules/oauth/amr.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { freshUserToken, totpCode } from '../support/factors.ts';
import {
  EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, codeIn, discover, findForm, jwtClaims, oauthError, pageError, startOAuthService, uniqueEmail, waitForMail,
  type AuthorizationRequest, type Page, type TestClient,
} from '../support/oauth.ts';
import { call, createTenant, forEachEngine, startTestService, type TestService } from '../support/service.ts';

const SCOPE = 'openid email profile';
const STEP_MS = 30_000;

interface Account {
  email: string;
  password: string;
  userId: string;
}

forEachEngine('second factors', (engine) => {
  let service: TestService;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    ({ service, client, config } = await startOAuthService(engine, {
      env: { ...EMAIL_LOGIN_ENV, ATRIUM_AUTH_CACHE_SECONDS: '0' },
      tenant: 'factors',
      client: { name: 'Factor App', scope: 'openid email profile' },
    }));
  });
  after(() => service?.stop());

  async function newAccount(label: string): Promise<Account> {
    const email = uniqueEmail(label);
    const password = 'a long enough password';
    const user = await createUser(service.ctx.db, { email, password, emailVerified: true });
    return { email, password, userId: user.id };
  }

  /** Adds an authenticator app through the account routes; the confirming code is of the current step. */
  async function enrolTotp(account: Account, token?: string): Promise<{ secret: string; recoveryCodes: string[] | null; token: string }> {
    const fresh = token ?? await freshUserToken(service, account.email, account.password);
    const started = await call(service, 'POST', '/accounts/factors/totp', { token: fresh, json: {} });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const confirmed = await call(service, 'POST', '/accounts/factors/totp/confirm', { token: fresh, json: { code: totpCode(started.body.secret) } });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    return { secret: started.body.secret, recoveryCodes: confirmed.body.recovery_codes, token: fresh };
  }

  /** The client app's sign-in up to the page the password leads to. */
  async function passwordStep(account: Account, extra: Record<string, string> = {}, browser = new FormBrowser(service.url)) {
    const request = await authorizationRequest(config, client.redirectUri, SCOPE, extra);
    const login = await browser.go('GET', request.url, undefined, client.redirectUri);
    const next = await browser.submit(login, '/password', { email: account.email, password: account.password }, client.redirectUri);
    return { request, browser, next };
  }

  /** Consents if asked, redeems the code with openid-client (which verifies the ID token), returns the tokens. */
  async function finishAtClient(browser: FormBrowser, page: Page & { redirectedTo?: string }, request: AuthorizationRequest) {
    let last = page;
    if (!last.redirectedTo && last.html.includes('/consent"')) last = await browser.submit(last, '/consent', { decision: 'allow' }, client.redirectUri);
    assert.ok(last.redirectedTo, `expected the client's redirect, got ${last.status}: ${pageError(last.html) ?? last.html.slice(0, 300)}`);
    return oidc.authorizationCodeGrant(config, new URL(last.redirectedTo), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
  }

  test('adding an authenticator app needs a fresh sign-in; an RFC 6238 code confirms it; recovery codes come once; the owner is mailed', async () => {
    const account = await newAccount('enrol');
    const pat = await issuePersonalAccessToken(service.ctx.db, account.userId, 'script');
    const stale = await call(service, 'POST', '/accounts/factors/totp', { token: pat, json: {} });
    assert.equal(stale.status, 403);
    assert.equal(stale.body.error.code, 'reauthentication_required');

    const token = await freshUserToken(service, account.email, account.password);
    const started = await call(service, 'POST', '/accounts/factors/totp', { token, json: {} });
    assert.equal(started.status, 200);
    assert.match(started.body.secret, /^[A-Z2-7]{32}$/);
    const uri = new URL(started.body.otpauth_uri);
    assert.equal(uri.protocol, 'otpauth:');
    assert.equal(uri.searchParams.get('secret'), started.body.secret);
    assert.match(uri.searchParams.get('issuer')!, /^Atrium \(127\.0\.0\.1:\d+\)$/);

    const wrong = await call(service, 'POST', '/accounts/factors/totp/confirm', { token, json: { code: totpCode(started.body.secret, Date.now() + 10 * STEP_MS) } });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.code, 'invalid_code');
    assert.equal((await call(service, 'GET', '/accounts/factors', { token: pat })).body.second_factor, false, 'an unconfirmed app is no factor');

    const confirmed = await call(service, 'POST', '/accounts/factors/totp/confirm', { token, json: { code: totpCode(started.body.secret) } });
    assert.equal(confirmed.status, 200);
    const codes: string[] = confirmed.body.recovery_codes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const code of codes) assert.match(code, /^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);

    const factors = await call(service, 'GET', '/accounts/factors', { token: pat });
    assert.equal(factors.status, 200);
    assert.equal(factors.body.second_factor, true);
    assert.ok(factors.body.totp.enabled_at);
    assert.deepEqual({ remaining: factors.body.recovery_codes.remaining, total: factors.body.recovery_codes.total }, { remaining: 10, total: 10 });
    assert.doesNotMatch(JSON.stringify(factors.body), new RegExp(codes[0]!), 'codes are never shown again');
    const mail = await waitForMail(service, account.email, /second factors of your Atrium account changed/);
    assert.match(mail.text, /An authenticator app was added/);

    // Replacing the app: the old one keeps working until the new one is confirmed; no new codes.
    const again = await call(service, 'POST', '/accounts/factors/totp', { token, json: {} });
    const replaced = await call(service, 'POST', '/accounts/factors/totp/confirm', { token, json: { code: totpCode(again.body.secret) } });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.recovery_codes, null);
  });

  test('the sign-in asks for the code after the password; the ID token says pwd, otp, mfa and the two-factor acr', async () => {
    const account = await newAccount('signin');
    const { secret } = await enrolTotp(account);
    const { request, browser, next } = await passwordStep(account);
    assert.equal(next.redirectedTo, undefined, 'the password alone does not sign in');
    assert.equal(next.status, 200);
    assert.match(next.html, /id="totp-form"/);
    assert.match(next.html, /Use a recovery code/);
    assert.equal(next.headers.get('x-frame-options'), 'DENY');
    assert.match(next.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
    assert.equal(next.headers.get('cache-control'), 'no-store');

    const form = findForm(next.html, '/factor/totp');
    const forged = await browser.request('POST', new URL(form.action, next.url), { code: totpCode(secret, Date.now() + STEP_MS) });
    assert.equal(forged.status, 403, 'no CSRF token, no check');
    const crossSite = await browser.request('POST', new URL(form.action, next.url), { ...form.hidden, code: totpCode(secret, Date.now() + STEP_MS) }, { 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);
    const wrong = await browser.submit(next, '/factor/totp', { code: '000000' === totpCode(secret) ? '111111' : '000000' });
    assert.equal(wrong.status, 401);
    assert.match(pageError(wrong.html)!, /not valid/);

    // The confirming code's step is used up, so the sign-in gives the next step's code.
    const done = await browser.submit(next, '/factor/totp', { code: totpCode(secret, Date.now() + STEP_MS) }, client.redirectUri);
    const tokens = await finishAtClient(browser, done, request);
    const claims = tokens.claims()!;
    assert.equal(claims.sub, account.userId);
    assert.deepEqual(claims.amr, ['pwd', 'otp', 'mfa']);
    assert.equal(claims.acr, MFA_ACR);
    assert.deepEqual(jwtClaims(tokens.access_token).amr, ['pwd', 'otp', 'mfa'], 'the access token says it too');
    assert.equal(typeof jwtClaims(tokens.access_token).auth_time, 'number');
  });

  test('nothing tells an address with a second factor apart before the password is right', async () => {
    const account = await newAccount('quiet');
    await enrolTotp(account);
    const wrong = await passwordStep({ ...account, password: 'not the password at all' });
    const unknown = await passwordStep({ ...account, email: uniqueEmail('nobody'), password: 'not the password at all' });
    assert.deepEqual([wrong.next.status, unknown.next.status], [401, 401]);
    assert.equal(pageError(wrong.next.html), pageError(unknown.next.html));
    assert.doesNotMatch(wrong.next.html, /totp-form|second factor/i);
    // The passkey button's options name no account: any discoverable passkey, verified by its user.
    const login = await new FormBrowser(service.url).go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    assert.match(login.headers.get('content-security-policy')!, /script-src 'self'; connect-src 'self'/);
    const form = findForm(login.html, '/passkey');
    const browser = new FormBrowser(service.url);
    const page = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const own = findForm(page.html, '/passkey');
    const options = await browser.request('POST', new URL(`${own.action}/options`, page.url), { _csrf: own.hidden._csrf! }, { accept: 'application/json' });
    assert.equal(options.status, 200);
    assert.equal(options.headers.get('cache-control'), 'no-store');
    const parsed = JSON.parse(options.html) as { allowCredentials?: unknown[]; userVerification: string; rpId: string };
    assert.deepEqual([parsed.allowCredentials ?? [], parsed.userVerification, parsed.rpId], [[], 'required', '127.0.0.1']);
    assert.equal((await browser.request('POST', new URL(`${own.action}/options`, page.url), { _csrf: form.hidden._csrf! })).status, 403, 'another browser\'s token');
    // Answers no browser would send are refused as answers, never as server errors.
    for (const response of ['{}', 'not json', JSON.stringify({ id: '\u0000', response: {} }), JSON.stringify({ id: 'AAAA', response: { userHandle: 5 } }), JSON.stringify({ id: 'A'.repeat(40), response: { clientDataJSON: 5 } })]) {
      const answered = await browser.request('POST', new URL(own.action, page.url), { _csrf: own.hidden._csrf!, response });
      assert.ok([400, 401].includes(answered.status), `${response}: ${answered.status}`);
    }
  });

  test('a code is accepted once: the same code in another sign-in, or an older one, is refused', async () => {
    const account = await newAccount('replay');
    const { secret } = await enrolTotp(account);
    const next = totpCode(secret, Date.now() + STEP_MS);
    const first = await passwordStep(account);
    await finishAtClient(first.browser, await first.browser.submit(first.next, '/factor/totp', { code: next }, client.redirectUri), first.request);

    const second = await passwordStep(account);
    const replayed = await second.browser.submit(second.next, '/factor/totp', { code: next }, client.redirectUri);
    assert.equal(replayed.status, 401, 'the same code twice');
    const older = await second.browser.submit(second.next, '/factor/totp', { code: totpCode(secret) }, client.redirectUri);
    assert.equal(older.status, 401, 'a code of a step before the last one used');
    assert.equal(older.redirectedTo, undefined);
  });

  test('five wrong codes lock the second factor for the window, the right code too; the count is in the database', async () => {
    const account = await newAccount('lockout');
    const { secret } = await enrolTotp(account);
    const { browser, next } = await passwordStep(account);
    const right = totpCode(secret, Date.now() + STEP_MS);
    const wrongCode = right === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) assert.equal((await browser.submit(next, '/factor/totp', { code: wrongCode })).status, 401);
    const locked = await browser.submit(next, '/factor/totp', { code: right }, client.redirectUri);
    assert.equal(locked.status, 429);
    assert.equal(locked.redirectedTo, undefined);
    const wait = Number(locked.headers.get('retry-after'));
    assert.ok(wait > 0 && wait <= 15 * 60, `retry-after ${wait}`);
    assert.match(pageError(locked.html)!, /Too many wrong codes/);
    // Recovery codes are guesses too: the same lock.
    const recovery = await browser.go('GET', new URL('recovery', `${next.url}/`));
    assert.equal((await browser.submit(recovery, '/factor/recovery', { code: 'aaaaa-aaaaa' })).status, 429);

    const rows = rowsOf<{ count: number }>(await service.ctx.db.execute(sql`select count from rate_limits where key = ${`factor:${account.userId}`}`));
    assert.equal(Number(rows[0]?.count), 5);

    if (engine === 'postgres') {
      // A second instance on the same database sees the same lock.
      const other = await startTestService(engine, { ...EMAIL_LOGIN_ENV, DATABASE_URL: service.ctx.config.databaseUrl! });
      try {
        const request = await authorizationRequest(await discover(other, client), client.redirectUri, SCOPE);
        const elsewhere = new FormBrowser(other.url);
        const login = await elsewhere.go('GET', request.url);
        const factorPage = await elsewhere.submit(login, '/password', { email: account.email, password: account.password });
        assert.equal((await elsewhere.submit(factorPage, '/factor/totp', { code: right })).status, 429);
      } finally {
        await other.stop();
      }
    }
  });

  test('codes two steps away are refused; the lock ends with its window (clocks moved by hand)', async () => {
    const account = await newAccount('clock');
    const { secret } = await enrolTotp(account);
    let now = Date.now() + 3 * STEP_MS;
    const factors = createSecondFactors(service.ctx, () => now);
    assert.equal(await factors.verifyTotp(account.userId, totpCode(secret, now + 2 * STEP_MS)), false, 'two steps ahead');
    assert.equal(await factors.verifyTotp(account.userId, totpCode(secret, now - 2 * STEP_MS)), false, 'two steps behind');
    assert.equal(await factors.verifyTotp(account.userId, totpCode(secret, now - STEP_MS)), true, 'one step behind (clock drift)');
    for (let i = 0; i < 3; i++) await factors.verifyTotp(account.userId, '000000');
    const locked = await factors.lockState(account.userId);
    assert.equal(locked.allowed, false);
    assert.ok(locked.retryAfter > 14 * 60 && locked.retryAfter <= 15 * 60, `retry after ${locked.retryAfter} s`);
    now += 15 * 60_000 + 1000;
    assert.deepEqual(await factors.lockState(account.userId), { allowed: true, retryAfter: 0 });
    assert.equal(await factors.verifyTotp(account.userId, totpCode(secret, now)), true, 'after the window, the right code works');
  });

  test('recovery codes: each signs in once in place of the code, in any case and spacing; renewing them retires the old ones', async () => {
    const account = await newAccount('recovery');
    const { secret, recoveryCodes } = await enrolTotp(account);
    const codes = recoveryCodes!;

    const first = await passwordStep(account);
    const recoveryPage = await first.browser.go('GET', new URL('recovery', `${first.next.url}/`));
    assert.equal(recoveryPage.status, 200);
    const since = new Date();
    const tokens = await finishAtClient(first.browser, await first.browser.submit(recoveryPage, '/factor/recovery', { code: codes[0]! }, client.redirectUri), first.request);
    assert.deepEqual(tokens.claims()!.amr, ['pwd', 'otp', 'mfa']);
    const mail = await waitForMail(service, account.email, /second factors/, since);
    assert.match(mail.text, /A recovery code was used to sign in to your account; 9 of them remain/);

    const second = await passwordStep(account);
    const page = await second.browser.go('GET', new URL('recovery', `${second.next.url}/`));
    const reused = await second.browser.submit(page, '/factor/recovery', { code: codes[0]! });
    assert.equal(reused.status, 401);
    assert.match(pageError(reused.html)!, /not valid or was used already/);
    const typed = ` ${codes[1]!.replace('-', '').toUpperCase()} `;
    await finishAtClient(second.browser, await second.browser.submit(page, '/factor/recovery', { code: typed }, client.redirectUri), second.request);

    const pat = await issuePersonalAccessToken(service.ctx.db, account.userId, 'script');
    assert.equal((await call(service, 'POST', '/accounts/factors/recovery-codes', { token: pat, json: {} })).body.error.code, 'reauthentication_required');
    const fresh = await freshUserToken(service, account.email, account.password, { totp: totpCode(secret, Date.now() + STEP_MS) });
    const renewed = await call(service, 'POST', '/accounts/factors/recovery-codes', { token: fresh, json: {} });
    assert.equal(renewed.status, 200);
    assert.equal(renewed.body.recovery_codes.length, 10);
    assert.equal((await call(service, 'GET', '/accounts/factors', { token: pat })).body.recovery_codes.remaining, 10);

    const third = await passwordStep(account);
    const thirdPage = await third.browser.go('GET', new URL('recovery', `${third.next.url}/`));
    assert.equal((await third.browser.submit(thirdPage, '/factor/recovery', { code: codes[2]! })).status, 401, 'an old code no longer works');
    await finishAtClient(third.browser, await third.browser.submit(thirdPage, '/factor/recovery', { code: renewed.body.recovery_codes[0] }, client.redirectUri), third.request);
  });

  test('one factor: a password gives pwd, an emailed code otp, and no acr', async () => {
    const account = await newAccount('single');
    const { request, browser, next } = await passwordStep(account);
    const claims = (await finishAtClient(browser, next, request)).claims()!;
    assert.deepEqual(claims.amr, ['pwd']);
    assert.equal(claims.acr, undefined);

    const codeRequest = await authorizationRequest(config, client.redirectUri, SCOPE);
    const codeBrowser = new FormBrowser(service.url);
    const login = await codeBrowser.go('GET', codeRequest.url);
    const since = new Date();
    const entry = await codeBrowser.submit(await codeBrowser.go('GET', new URL('code', `${login.url}/`)), '/code', { email: account.email });
    const code = codeIn((await waitForMail(service, account.email, /sign-in code/, since)).text);
    const viaCode = await finishAtClient(codeBrowser, await codeBrowser.submit(entry, '/code/verify', { code }, client.redirectUri), codeRequest);
    assert.deepEqual(viaCode.claims()!.amr, ['otp']);
  });

  test('a client asking for two factors (acr_values): a one-factor session signs in again; an account without a second factor goes back with unmet_authentication_requirements', async () => {
    const account = await newAccount('acr');
    // A browser session made with the password alone, before the account had a second factor.
    const first = await passwordStep(account);
    await finishAtClient(first.browser, first.next, first.request);

    const without = await authorizationRequest(config, client.redirectUri, SCOPE, { acr_values: MFA_ACR });
    const missing = await first.browser.go('GET', without.url, undefined, client.redirectUri);
    assert.match(missing.html, /id="password-form"/, 'the session is not enough: sign in again');
    const asked = await first.browser.submit(missing, '/password', { email: account.email, password: account.password }, client.redirectUri);
    assert.equal(asked.status, 403);
    assert.match(asked.html, /A second factor is needed/);
    const back = await first.browser.submit(asked, '/factor/abort', {}, client.redirectUri);
    const callback = new URL(back.redirectedTo!);
    assert.equal(callback.searchParams.get('error'), 'unmet_authentication_requirements');
    await assert.rejects(
      oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: without.verifier, expectedState: without.state, expectedNonce: without.nonce }),
      (error) => oauthError(error) === 'unmet_authentication_requirements',
    );

    const { secret } = await enrolTotp(account);
    const request = await authorizationRequest(config, client.redirectUri, SCOPE, { acr_values: MFA_ACR });
    const login = await first.browser.go('GET', request.url, undefined, client.redirectUri);
    assert.match(login.html, /id="password-form"/);
    const factor = await first.browser.submit(login, '/password', { email: account.email, password: account.password }, client.redirectUri);
    const tokens = await finishAtClient(first.browser, await first.browser.submit(factor, '/factor/totp', { code: totpCode(secret, Date.now() + STEP_MS) }, client.redirectUri), request);
    assert.equal(tokens.claims()!.acr, MFA_ACR);
    // Now the session has two factors: asking again signs in without a prompt.
    const again = await authorizationRequest(config, client.redirectUri, SCOPE, { acr_values: MFA_ACR });
    const silent = await first.browser.go('GET', again.url, undefined, client.redirectUri);
    assert.equal((await finishAtClient(first.browser, silent, again)).claims()!.acr, MFA_ACR);
  });

  test('removing the app needs a fresh sign-in, drops the recovery codes with the last factor, and mails the owner', async () => {
    const account = await newAccount('remove');
    const { secret } = await enrolTotp(account);
    const pat = await issuePersonalAccessToken(service.ctx.db, account.userId, 'script');
    assert.equal((await call(service, 'DELETE', '/accounts/factors/totp', { token: pat })).status, 403);
    const fresh = await freshUserToken(service, account.email, account.password, { totp: totpCode(secret, Date.now() + STEP_MS) });
    const since = new Date();
    assert.equal((await call(service, 'DELETE', '/accounts/factors/totp', { token: fresh })).status, 200);
    assert.match((await waitForMail(service, account.email, /second factors/, since)).text, /The authenticator app was removed/);
    const factors = await call(service, 'GET', '/accounts/factors', { token: pat });
    assert.deepEqual([factors.body.second_factor, factors.body.totp, factors.body.recovery_codes], [false, null, null]);
    assert.equal((await call(service, 'DELETE', '/accounts/factors/totp', { token: fresh })).status, 404);
    const { request, browser, next } = await passwordStep(account);
    assert.deepEqual((await finishAtClient(browser, next, request)).claims()!.amr, ['pwd']);
  });

  test('the operator removes every second factor of an account whose owner lost them (atrium factors reset), recorded in the audit log', async () => {
    const account = await newAccount('lost');
    await enrolTotp(account);
    const factors = createSecondFactors(service.ctx);
    const since = new Date();
    const reset = await factors.resetAll(account.email.toUpperCase(), operatorActor());
    assert.deepEqual(reset, { user_id: account.userId, removed: { totp: true, passkeys: 0, recovery_codes: 10 } });
    const entries = rowsOf<{ project_id: string | null; actor_type: string; credential_kind: string }>(await service.ctx.db.execute(sql`
      select project_id, actor_type, credential_kind from audit_log where action = 'second_factor.reset' and target_type = 'account' and target_id = ${account.userId}`));
    assert.deepEqual([...entries], [{ project_id: null, actor_type: 'operator', credential_kind: 'server_host' }], 'the reset is in the deployment\'s audit log');
    assert.match((await waitForMail(service, account.email, /second factors/, since)).text, /removed by the operator/);
    const { request, browser, next } = await passwordStep(account);
    assert.deepEqual((await finishAtClient(browser, next, request)).claims()!.amr, ['pwd']);
    assert.equal(await factors.resetAll(uniqueEmail('nobody'), operatorActor()), undefined);
  });

  test('a project requiring a second factor of its admins refuses an admin action to an admin without one, and says why', async () => {
    const owner = await createTenant(service, 'policy');
    const colleague = await newAccount('colleague');
    const colleagueToken = await issuePersonalAccessToken(service.ctx.db, colleague.userId, 'script');
    const project = `/accounts/projects/${owner.projectId}`;
    assert.equal((await call(service, 'POST', `${project}/users`, { token: owner.apiKey, json: { user_id: colleague.userId, roles: ['admin'] } })).status, 200);

    const early = await call(service, 'PUT', `${project}/sign-in-policy`, { token: owner.userToken, json: { admins_need_second_factor: true } });
    assert.equal(early.status, 409, 'turning it on without a factor of one\'s own would lock oneself out');
    await enrolTotp({ email: owner.email, password: owner.password, userId: owner.userId });
    const on = await call(service, 'PUT', `${project}/sign-in-policy`, { token: owner.userToken, json: { admins_need_second_factor: true } });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    assert.equal(on.body.admins_need_second_factor, true);

    const refused = await call(service, 'PUT', `${project}/settings`, { token: colleagueToken, json: { theme: 'x' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'second_factor_required');
    assert.equal((await call(service, 'POST', `${project}/api-keys`, { token: colleagueToken, json: { name: 'k' } })).body.error?.code, 'second_factor_required');
    assert.equal((await call(service, 'GET', project, { token: colleagueToken })).status, 200, 'still a member');
    assert.equal((await call(service, 'PUT', `${project}/settings`, { token: owner.userToken, json: { theme: 'owner' } })).status, 200, 'an admin with a factor');
    assert.equal((await call(service, 'PUT', `${project}/settings`, { token: owner.apiKey, json: { theme: 'key' } })).status, 200, 'API keys are not members');

    const members = await call(service, 'GET', `${project}/users`, { token: owner.userToken });
    const byId = new Map(members.body.users.map((u: { user_id: string; second_factor: boolean }) => [u.user_id, u.second_factor]));
    assert.deepEqual([byId.get(owner.userId), byId.get(colleague.userId)], [true, false]);

    await enrolTotp(colleague);
    assert.equal((await call(service, 'PUT', `${project}/settings`, { token: colleagueToken, json: { theme: 'colleague' } })).status, 200, 'with a factor, the admin role counts again');
  });
});

forEachEngine('second factors required by the deployment', (engine) => {
  let service: TestService;
  before(async () => {
    service = await startTestService(engine, { ATRIUM_ADMINS_NEED_SECOND_FACTOR: 'true', ATRIUM_AUTH_CACHE_SECONDS: '0' });
  });
  after(() => service?.stop());

  test('every project\'s admins need a second factor to act as admins; API keys do not', async () => {
    const tenant = await createTenant(service, 'deployment');
    const refused = await call(service, 'PUT', `/accounts/projects/${tenant.projectId}/settings`, { token: tenant.userToken, json: { a: 1 } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'second_factor_required');
    assert.equal((await call(service, 'GET', `/accounts/projects/${tenant.projectId}`, { token: tenant.userToken })).status, 200);
    assert.equal((await call(service, 'PUT', `/accounts/projects/${tenant.projectId}/settings`, { token: tenant.apiKey, json: { a: 2 } })).status, 200);
  });
});

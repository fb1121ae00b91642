// End-user sign-in on the authorization server's own pages, on both engines: sign-up with
// mandatory email confirmation, password reset, one-time codes, the development outbox, mail over
// a real (local) SMTP server, upstream OpenID Connect providers, and email sign-in switched off.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as oidc from 'openid-client';
import { SMTPServer } from 'smtp-server';
import { findUserByEmail } from '../../src/modules/users/store.ts';
import { devMailboxLink } from '../../src/modules/oauth/service.ts';
import { call, createTenant, forEachEngine, freePort, startTestService, type Tenant, type TestService } from '../support/service.ts';
import {
  EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, codeIn, discover, findForm, insertClient, jwtClaims, linkIn, oauthError, pageError,
  signInAndConsent, startOAuthService, startUpstreamProvider, uniqueEmail, waitForMail, type TestClient, type UpstreamProviderFixture,
} from '../support/oauth.ts';

const SCOPE = 'openid email profile offline_access profile:read';

forEachEngine('oauth sign-in with email', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    ({ service, tenant, client, config } = await startOAuthService(engine, {
      env: { ...EMAIL_LOGIN_ENV, ATRIUM_AUTH_CACHE_SECONDS: '0' },
      tenant: 'signin',
      client: { name: 'Mail App' },
    }));
  });
  after(() => service?.stop());

  async function startFlow(browser = new FormBrowser(service.url)) {
    const request = await authorizationRequest(config, client.redirectUri, SCOPE);
    const login = await browser.go('GET', request.url);
    assert.equal(login.status, 200);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;
    return { browser, request, login, uid };
  }

  async function exchange(request: Awaited<ReturnType<typeof startFlow>>['request'], callback: string) {
    return oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
  }

  test('sign up, confirm from the mail in the same browser, consent, tokens', async () => {
    const email = uniqueEmail('new');
    const { browser, request, uid, login } = await startFlow();
    const form = await browser.go('GET', `/interaction/${uid}/signup`);
    const sent = await browser.submit(form, '/signup', { email, password: 'a fine password', first_name: 'Ada', last_name: 'Lovelace' });
    assert.match(sent.html, /Check your email/);
    const mail = await waitForMail(service, email, /Confirm your email address for Mail App/);
    const user = await findUserByEmail(service.ctx.db, email);
    assert.ok(user, 'account created');
    assert.equal(user.emailVerifiedAt, null, 'not confirmed yet');
    assert.equal(user.firstName, 'Ada');

    // Signing in before confirming is refused with a clear message, not a wrong-password error.
    const early = await browser.submit(login, '/password', { email, password: 'a fine password' });
    assert.equal(early.status, 403);
    assert.match(early.html, /Confirm your email first/);
    assert.equal(early.redirectedTo, undefined);

    const confirmPage = await browser.go('GET', linkIn(mail.text));
    assert.match(confirmPage.html, new RegExp(email.replace(/[.]/g, '\\.')));
    const consent = await browser.submit(confirmPage, '/confirm', {}, client.redirectUri);
    assert.match(consent.html, /Allow Mail App to access your account\?/);
    const done = await browser.submit(consent, '/consent', { decision: 'allow' }, client.redirectUri);
    const tokens = await exchange(request, done.redirectedTo!);
    assert.equal(jwtClaims(tokens.access_token).sub, user.id);
    assert.equal(tokens.claims()!.given_name, 'Ada');
    assert.ok((await findUserByEmail(service.ctx.db, email))!.emailVerifiedAt, 'confirmed');
    // The link is single-use.
    const reused = await browser.go('GET', linkIn(mail.text));
    assert.equal(reused.status, 400);
    // And the password chosen at sign-up now works on its own.
    const again = await startFlow(new FormBrowser(service.url));
    const callback = await signInAndConsent(again.browser, again.request, client.redirectUri, email, 'a fine password');
    assert.ok(callback.searchParams.get('code'));
  });

  test('a confirmation opened in another browser confirms, without signing that browser in', async () => {
    const email = uniqueEmail('elsewhere');
    const { browser, uid } = await startFlow();
    await browser.submit(await browser.go('GET', `/interaction/${uid}/signup`), '/signup', { email, password: 'another password' });
    const mail = await waitForMail(service, email, /Confirm your email/);
    const phone = new FormBrowser(service.url);
    const page = await phone.go('GET', linkIn(mail.text));
    const confirmed = await phone.submit(page, '/confirm', {});
    assert.equal(confirmed.status, 200);
    assert.match(confirmed.html, /Email confirmed/);
    // Back in the first browser the password now signs in.
    const login = await browser.go('GET', `/interaction/${uid}`);
    const consent = await browser.submit(login, '/password', { email, password: 'another password' }, client.redirectUri);
    assert.match(consent.html, /\/consent"/);
  });

  test('signing up with a confirmed address mails its owner instead, and changes nothing', async () => {
    const { browser, uid } = await startFlow();
    const since = new Date();
    await browser.submit(await browser.go('GET', `/interaction/${uid}/signup`), '/signup', { email: tenant.email, password: 'attacker password' });
    const mail = await waitForMail(service, tenant.email, /You already have an account/, since);
    assert.doesNotMatch(mail.text, /https?:\/\//, 'no confirmation link');
    const callback = await signInAndConsent(new FormBrowser(service.url), (await startFlow()).request, client.redirectUri, tenant.email, tenant.password);
    assert.ok(callback.searchParams.get('code'), 'the owner\'s password is unchanged');
  });

  test('someone else\'s sign-up cannot set the password of the account the owner confirms', async () => {
    const email = uniqueEmail('contested');
    const attacker = await startFlow();
    await attacker.browser.submit(await attacker.browser.go('GET', `/interaction/${attacker.uid}/signup`), '/signup', { email, password: 'attacker password' });
    const attackerMail = await waitForMail(service, email, /Confirm your email/);
    const owner = await startFlow();
    const since = new Date();
    await owner.browser.submit(await owner.browser.go('GET', `/interaction/${owner.uid}/signup`), '/signup', { email, password: 'owner password' });
    const ownerMail = await waitForMail(service, email, /Confirm your email/, since);
    assert.notEqual(linkIn(ownerMail.text), linkIn(attackerMail.text));
    const page = await owner.browser.go('GET', linkIn(ownerMail.text));
    await owner.browser.submit(page, '/confirm', {}, client.redirectUri);
    const attempt = await startFlow();
    const refused = await attempt.browser.submit(attempt.login, '/password', { email, password: 'attacker password' });
    assert.equal(refused.status, 401);
  });

  test('forgot password: reset link, new password works, old one and old tokens do not', async () => {
    const email = uniqueEmail('forgetful');
    const { createUser } = await import('../../src/modules/users/service.ts');
    await createUser(service.ctx.db, { email, password: 'old password 1', emailVerified: true });
    const before = await startFlow();
    const oldTokens = await exchange(before.request, (await signInAndConsent(before.browser, before.request, client.redirectUri, email, 'old password 1')).href);

    const { browser, uid } = await startFlow();
    const forgot = await browser.go('GET', `/interaction/${uid}/forgot`);
    const sent = await browser.submit(forgot, '/forgot', { email });
    assert.match(sent.html, /If an account exists/);
    const mail = await waitForMail(service, email, /Reset your password/);
    const resetPage = await browser.go('GET', linkIn(mail.text));
    assert.equal(resetPage.status, 200);
    const tooShort = await browser.submit(resetPage, '/reset', { password: 'short' });
    assert.equal(tooShort.status, 400);
    const afterReset = await browser.submit(resetPage, '/reset', { password: 'new password 2' });
    assert.match(afterReset.html, /Your password was changed/);
    assert.equal((await browser.go('GET', linkIn(mail.text))).status, 400, 'the link is single-use');

    const wrong = await browser.submit(afterReset, '/password', { email, password: 'old password 1' });
    assert.equal(wrong.status, 401);
    const consent = await browser.submit(afterReset, '/password', { email, password: 'new password 2' }, client.redirectUri);
    assert.match(consent.html, /\/consent"/);
    // Changing the password signed the account out everywhere.
    await assert.rejects(oidc.refreshTokenGrant(config, oldTokens.refresh_token!), (error) => oauthError(error) === 'invalid_grant');
    assert.equal((await call(service, 'GET', '/accounts/profiles/me', { token: oldTokens.access_token })).status, 401);
  });

  /** A confirmed user of its own, so attempt budgets of other tests do not interfere. */
  async function freshUser(label: string) {
    const { createUser } = await import('../../src/modules/users/service.ts');
    const email = uniqueEmail(label);
    const user = await createUser(service.ctx.db, { email, password: 'fresh password', emailVerified: true });
    return { email, userId: user.id };
  }

  test('sign in with a one-time code; wrong codes use it up', async () => {
    const person = await freshUser('coder');
    const { browser, request, uid } = await startFlow();
    const ask = await browser.go('GET', `/interaction/${uid}/code`);
    const entry = await browser.submit(ask, '/code', { email: person.email });
    assert.match(entry.html, /Enter your code/);
    const mail = await waitForMail(service, person.email, /Your sign-in code for Mail App/);
    const code = codeIn(mail.text);
    const wrongCode = code === '000000' ? '111111' : '000000';
    const wrong = await browser.submit(entry, '/code/verify', { code: wrongCode });
    assert.equal(wrong.status, 401);
    assert.match(pageError(wrong.html)!, /not valid/);
    const consent = await browser.submit(entry, '/code/verify', { code }, client.redirectUri);
    const done = await browser.submit(consent, '/consent', { decision: 'allow' }, client.redirectUri);
    const tokens = await exchange(request, done.redirectedTo!);
    assert.equal(jwtClaims(tokens.access_token).sub, person.userId);

    // Five wrong guesses and even the right code is dead.
    const second = await startFlow();
    const since = new Date();
    const entry2 = await second.browser.submit(await second.browser.go('GET', `/interaction/${second.uid}/code`), '/code', { email: person.email });
    const code2 = codeIn((await waitForMail(service, person.email, /sign-in code/, since)).text);
    const other = code2 === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) assert.equal((await second.browser.submit(entry2, '/code/verify', { code: other })).status, 401);
    assert.equal((await second.browser.submit(entry2, '/code/verify', { code: code2 })).status, 401);
  });

  test('a code is bound to the sign-in flow that asked for it', async () => {
    const person = await freshUser('bound');
    const first = await startFlow();
    const firstEntry = await first.browser.submit(await first.browser.go('GET', `/interaction/${first.uid}/code`), '/code', { email: person.email });
    const code = codeIn((await waitForMail(service, person.email, /sign-in code/)).text);
    const second = await startFlow();
    const entry = await second.browser.submit(await second.browser.go('GET', `/interaction/${second.uid}/code`), '/code', { email: uniqueEmail('decoy') });
    const form = findForm(entry.html, '/code/verify');
    const response = await second.browser.request('POST', new URL(form.action, entry.url), { ...form.hidden, email: person.email, code });
    assert.equal(response.status, 401);
    // In its own flow the same code works.
    const accepted = await first.browser.submit(firstEntry, '/code/verify', { code }, client.redirectUri);
    assert.match(accepted.html, /\/consent"/);
  });

  test('the development outbox lists mail and shows it with working links', async () => {
    const email = uniqueEmail('outbox');
    const { browser, uid } = await startFlow();
    await browser.submit(await browser.go('GET', `/interaction/${uid}/signup`), '/signup', { email, password: 'outbox password' });
    await waitForMail(service, email, /Confirm/);
    // The mailbox opens with the key of the link the server prints; its pages link on with it.
    const link = new URL(devMailboxLink(service.ctx.config));
    const list = await browser.go('GET', `/dev/mail${link.search}`);
    assert.equal(list.status, 200);
    const id = new RegExp(`<td>${email.replace(/[.]/g, '\\.')}</td><td><a href="/dev/mail/([0-9a-f-]+)\\?key=`).exec(list.html)?.[1];
    assert.ok(id, 'mail listed');
    const mail = await browser.go('GET', `/dev/mail/${id}${link.search}`);
    assert.match(mail.html, /<a href="http:\/\/127\.0\.0\.1:\d+\/interaction\/[^"]+\/confirm\?token=[^"]+">/);
    assert.ok(mail.html.includes(`<a href="/dev/mail${link.search}">All mail</a>`));
    assert.equal((await browser.go('GET', `/dev/mail/00000000-0000-4000-8000-000000000000${link.search}`)).status, 404);
  });
});

forEachEngine('oauth sign-in with upstream providers', (engine) => {
  let service: TestService;
  let upstream: UpstreamProviderFixture;
  let tenant: Tenant;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    upstream = await startUpstreamProvider(await freePort(), `${publicUrl}/signin/upstream/test-idp/callback`);
    ({ service, tenant, client, config } = await startOAuthService(engine, {
      env: {
        PORT: String(port),
        ATRIUM_PUBLIC_URL: publicUrl,
        // Upstream sign-in alone.
        ATRIUM_PASSWORD_LOGIN: 'false',
        ATRIUM_EMAIL_LOGIN: 'false',
        ATRIUM_DEV_MAILBOX: 'false',
        ATRIUM_OIDC_PROVIDERS: JSON.stringify([{ id: 'test-idp', issuer: upstream.issuer, client_id: upstream.clientId, client_secret: upstream.clientSecret, label: 'Test IdP' }]),
      },
      tenant: 'upstream',
      client: { name: 'Federated App' },
    }));
  });
  after(async () => {
    await service?.stop();
    await upstream?.stop();
  });

  /** Authorize → "Continue with Test IdP" → upstream → back → consent → code. */
  async function federatedSignIn() {
    const browser = new FormBrowser(service.url);
    const request = await authorizationRequest(config, client.redirectUri, SCOPE);
    const login = await browser.go('GET', request.url);
    assert.doesNotMatch(login.html, /id="password-form"/, 'no password sign-in');
    assert.match(login.html, /Continue with Test IdP/);
    const consent = await browser.submit(login, '/upstream/test-idp', {}, client.redirectUri);
    if (consent.redirectedTo) return { consent, browser, request };
    assert.match(consent.html, /\/consent"/, pageError(consent.html) ?? consent.html.slice(0, 300));
    const done = await browser.submit(consent, '/consent', { decision: 'allow' }, client.redirectUri);
    return { consent, browser, request, done };
  }

  test('a new upstream account becomes a confirmed local user, linked for next time', async () => {
    upstream.nextAccount = { sub: `sub-${Date.now()}`, email: uniqueEmail('fed'), email_verified: true, given_name: 'Grace', family_name: 'Hopper' };
    const { request, done } = await federatedSignIn();
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done!.redirectedTo!), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
    const user = await findUserByEmail(service.ctx.db, upstream.nextAccount.email!);
    assert.ok(user?.emailVerifiedAt);
    assert.equal(user.firstName, 'Grace');
    assert.equal(jwtClaims(tokens.access_token).sub, user.id);
    // The link is by subject: a changed upstream address still signs in the same user.
    upstream.nextAccount = { ...upstream.nextAccount, email: uniqueEmail('changed') };
    const second = await federatedSignIn();
    const tokens2 = await oidc.authorizationCodeGrant(config, new URL(second.done!.redirectedTo!), { pkceCodeVerifier: second.request.verifier, expectedState: second.request.state, expectedNonce: second.request.nonce });
    assert.equal(jwtClaims(tokens2.access_token).sub, user.id);
  });

  test('a verified upstream address signs in the existing local account with that address', async () => {
    upstream.nextAccount = { sub: `sub-tenant-${Date.now()}`, email: tenant.email, email_verified: true };
    const { request, done } = await federatedSignIn();
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done!.redirectedTo!), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
    assert.equal(jwtClaims(tokens.access_token).sub, tenant.userId);
  });

  test('an unverified upstream address is refused', async () => {
    upstream.nextAccount = { sub: `sub-unverified-${Date.now()}`, email: uniqueEmail('unverified'), email_verified: false };
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const back = await browser.submit(login, '/upstream/test-idp', {}, client.redirectUri);
    assert.equal(back.redirectedTo, undefined);
    assert.match(back.html, /did not complete/);
    assert.equal(await findUserByEmail(service.ctx.db, upstream.nextAccount.email!), undefined);
  });

  test('the callback without this browser\'s state is refused', async () => {
    const stranger = new FormBrowser(service.url);
    const response = await stranger.request('GET', '/signin/upstream/test-idp/callback?code=abc&state=def');
    assert.equal(response.status, 400);
    assert.equal(response.location, undefined);
  });

  test('with password and email sign-in off, their endpoints do not exist', async () => {
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;
    for (const path of ['/password', '/signup', '/forgot', '/code']) {
      assert.equal((await browser.request('POST', `/interaction/${uid}${path}`, { email: tenant.email })).status, 404, path);
    }
    assert.equal((await call(service, 'GET', '/dev/mail')).status, 404, 'no dev outbox on this configuration');
  });
});

forEachEngine('oauth sign-in mail over SMTP', (engine) => {
  let service: TestService;
  let smtp: SMTPServer;
  const received: { to: string[]; raw: string }[] = [];

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push({ to: (session.envelope.rcptTo as { address: string }[]).map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      },
    });
    const port = await freePort();
    await new Promise<void>((resolve) => smtp.listen(port, '127.0.0.1', resolve));
    service = await startTestService(engine, { ...EMAIL_LOGIN_ENV, ATRIUM_SMTP_URL: `smtp://127.0.0.1:${port}`, ATRIUM_MAIL_FROM: 'Atrium Test <signin@example.test>' });
  });
  after(async () => {
    await service?.stop();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  test('password reset mail goes through SMTP, and its link works', async () => {
    const tenant = await createTenant(service, 'smtp');
    const client = await insertClient(service, tenant.projectId);
    const config = await discover(service, client);
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, SCOPE)).url);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;
    await browser.submit(await browser.go('GET', `/interaction/${uid}/forgot`), '/forgot', { email: tenant.email });
    const deadline = Date.now() + 10_000;
    let message: { to: string[]; raw: string } | undefined;
    while (!message && Date.now() < deadline) {
      message = received.find((m) => m.to.includes(tenant.email));
      if (!message) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(message, 'mail received by the SMTP server');
    assert.match(message.raw, /^From: Atrium Test <signin@example\.test>/m);
    // Decode quoted-printable soft breaks and escapes to read the link.
    const body = message.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const reset = await browser.go('GET', linkIn(body.slice(body.indexOf('http'))));
    assert.equal(reset.status, 200);
    const done = await browser.submit(reset, '/reset', { password: 'smtp new password' });
    assert.match(done.html, /Your password was changed/);
    assert.equal((await call(service, 'GET', '/dev/mail')).status, 404, 'no dev outbox when SMTP is configured');
  });
});

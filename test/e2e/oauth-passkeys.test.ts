// Passkeys end to end in headless Chromium, on both engines, with the DevTools protocol's virtual
// authenticator (WebAuthn.addVirtualAuthenticator): registered from the console's account page after
// signing in (with an authenticator app beside it, from its QR code page), then used through a client app's OAuth sign-in — alone (passwordless, a discoverable
// credential with user verification) and as the second factor after the password — with the `amr`
// of each ID token checked by openid-client. Refused: an answer made on another origin and relayed
// into a real sign-in (phishing), and a cloned authenticator whose signature counter went back.
// Atrium runs on http://localhost:<port>: WebAuthn takes a host name, not an IP address, as RP ID.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import * as oidc from 'openid-client';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { chromiumLaunchArgs } from '../support/chromium.ts';
import { totpCode } from '../support/factors.ts';
import { chromiumPath, requireOrSkip } from '../support/env.ts';
import { EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, findForm, insertClient, pageError, type AuthorizationRequest, type TestClient } from '../support/oauth.ts';
import { createTenant, forEachEngine, freePort, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { screenshot } from '../support/screenshots.ts';

const SCOPE = 'openid email profile';

/** The client app: records where the browser comes back to, and serves a page of its own origin. */
function startApp(): Promise<{ server: Server; port: number; callbacks: string[] }> {
  const callbacks: string[] = [];
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/callback')) callbacks.push(`http://${req.headers.host}${req.url}`);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>App</title><p>Back in the app</p>');
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ server, port: (server.address() as AddressInfo).port, callbacks })));
}

// Runs in a page: a WebAuthn assertion for a challenge, as the JSON a relying party receives.
const ASSERT_SCRIPT = `async ({ challenge, rpId }) => {
  const b64u = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  const fromB64u = (text) => Uint8Array.from(atob(text.replaceAll('-', '+').replaceAll('_', '/')), (c) => c.charCodeAt(0));
  const credential = await navigator.credentials.get({ publicKey: { challenge: fromB64u(challenge), rpId, userVerification: 'required', allowCredentials: [] } });
  return {
    id: credential.id, rawId: b64u(credential.rawId), type: credential.type, clientExtensionResults: {},
    response: {
      clientDataJSON: b64u(credential.response.clientDataJSON), authenticatorData: b64u(credential.response.authenticatorData),
      signature: b64u(credential.response.signature), userHandle: credential.response.userHandle ? b64u(credential.response.userHandle) : undefined,
    },
  };
}`;

forEachEngine('passkeys in Chromium', (engine) => {
  let service: TestService | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  let app: Awaited<ReturnType<typeof startApp>>;
  let tenant: Tenant;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    if (!chromiumPath) return;
    app = await startApp();
    const port = await freePort();
    service = await startTestService(engine, { ...EMAIL_LOGIN_ENV, PORT: String(port), ATRIUM_PUBLIC_URL: `http://localhost:${port}` });
    tenant = await createTenant(service, 'passkeys');
    client = await insertClient(service, tenant.projectId, { name: 'Passkey App', redirectUris: [`http://localhost:${app.port}/callback`], scope: SCOPE });
    config = await discover({ url: service.ctx.config.publicUrl }, client);
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumLaunchArgs });
    context = await browser.newContext();
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    // A platform authenticator with resident keys and user verification (a PIN or biometrics that always pass).
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    app?.server.close();
  });

  const ready = (t: Parameters<typeof requireOrSkip>[0]) => requireOrSkip(t, chromiumPath !== undefined, 'Chromium');

  /** Starts the client app's sign-in in a browser without a session at Atrium. */
  async function startSignIn() {
    await context.clearCookies();
    const request = await authorizationRequest(config, client.redirectUri, SCOPE);
    await page.goto(request.url.href);
    await page.locator('#password-form').waitFor();
    return request;
  }

  /** Consents, waits for the app's callback, and redeems it with openid-client. */
  async function backInTheApp(request: AuthorizationRequest) {
    const before = app.callbacks.length;
    const allow = page.getByRole('button', { name: 'Allow' });
    await Promise.race([allow.waitFor().then(() => allow.click()), page.getByText('Back in the app').waitFor()]);
    await page.getByText('Back in the app').waitFor();
    assert.equal(app.callbacks.length, before + 1);
    return oidc.authorizationCodeGrant(config, new URL(app.callbacks.at(-1)!), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
  }

  test('registered on the console\'s account page after signing in; the recovery codes are shown once; an authenticator app beside it', async (t) => {
    if (!ready(t)) return;
    await page.goto(`${service!.ctx.config.publicUrl}/console/profile`);
    await page.locator('#password-form').waitFor();
    await page.getByLabel('Email').fill(tenant.email);
    await page.getByLabel('Password').fill(tenant.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    // The console is Atrium's own app: no consent page.
    await page.getByRole('heading', { name: 'Second factors' }).waitFor();
    await page.getByLabel('Name of the new passkey').fill('Virtual key');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('dialog', { name: 'Your recovery codes' }).waitFor();
    const codes = await page.locator('#recovery-codes td').allTextContents();
    assert.equal(codes.length, 10);
    await screenshot(page, `console-recovery-codes-${engine}`);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.locator('#passkeys').getByText('Virtual key').waitFor();

    // An authenticator app too: the QR code and the secret, confirmed with a code computed here.
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    await page.locator('#totp-qr').waitFor();
    const secret = await page.getByRole('textbox', { name: 'Secret' }).inputValue();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await screenshot(page, `console-authenticator-app-${engine}`);
    await page.getByLabel('Code from the app').fill(totpCode(secret));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByText(/^In use since/).waitFor();
    await screenshot(page, `console-second-factors-${engine}`);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    assert.equal(credentials.length, 1);
    assert.equal(credentials[0]!.isResidentCredential, true, 'discoverable, so it can sign in alone');
    assert.equal(credentials[0]!.rpId, 'localhost');
  });

  test('passwordless: the passkey alone signs in to the app; amr hwk, mfa', async (t) => {
    if (!ready(t)) return;
    const request = await startSignIn();
    await page.getByRole('button', { name: 'Continue with a passkey' }).click();
    const tokens = await backInTheApp(request);
    const claims = tokens.claims()!;
    assert.equal(claims.sub, tenant.userId);
    assert.deepEqual(claims.amr, ['hwk', 'mfa']);
  });

  test('second factor: after the password the page asks for the passkey; amr pwd, hwk, mfa', async (t) => {
    if (!ready(t)) return;
    const request = await startSignIn();
    await page.getByLabel('Email').fill(tenant.email);
    await page.getByLabel('Password').fill(tenant.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    assert.equal(app.callbacks.some((c) => c.includes(request.state)), false, 'the password alone did not sign in');
    await screenshot(page, `oauth-second-factor-${engine}`);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    const tokens = await backInTheApp(request);
    assert.deepEqual(tokens.claims()!.amr, ['pwd', 'hwk', 'mfa']);
  });

  test('an answer made on another origin and relayed into a real sign-in is refused', async (t) => {
    if (!ready(t)) return;
    // The attacker starts a sign-in of their own and gets a real challenge for it.
    const attacker = new FormBrowser(service!.ctx.config.publicUrl);
    const request = await authorizationRequest(config, client.redirectUri, SCOPE);
    const login = await attacker.go('GET', request.url);
    const form = findForm(login.html, '/passkey');
    const options = await attacker.request('POST', new URL(`${form.action}/options`, login.url), { _csrf: form.hidden._csrf! }, { accept: 'application/json' });
    assert.equal(options.status, 200);
    const { challenge } = JSON.parse(options.html) as { challenge: string };
    // The victim's browser answers it on the attacker's page: another origin, the same host name.
    await page.goto(`http://localhost:${app.port}/phish`);
    const answer = await page.evaluate(`(${ASSERT_SCRIPT})(${JSON.stringify({ challenge, rpId: 'localhost' })})`);
    const relayed = await attacker.request('POST', new URL(form.action, login.url), { ...form.hidden, response: JSON.stringify(answer) });
    assert.equal(relayed.status, 401);
    assert.match(pageError(relayed.html)!, /could not sign you in/);
    assert.equal(relayed.location, undefined);
  });

  test('a cloned authenticator whose signature counter went back is refused', async (t) => {
    if (!ready(t)) return;
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    const original = credentials[0]!;
    assert.ok(original.signCount > 0, 'the authenticator counts its signatures');
    await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId });
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...original, signCount: 0 } });
    await startSignIn();
    await page.getByRole('button', { name: 'Continue with a passkey' }).click();
    await page.getByText('That passkey could not sign you in').waitFor();
  });
});

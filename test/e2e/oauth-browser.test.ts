// The sign-in pages in headless Chromium, on the embedded quick start (PGlite, defaults: email
// sign-in and the development outbox on): sign up → confirm from the outbox → consent → back to
// the application's redirect server, with the client's logo and theme on every page. Screenshots
// go to test-artifacts/.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { chromium, type Browser, type Page } from 'playwright-core';
import { devMailboxLink } from '../../src/modules/oauth/service.ts';
import { chromiumLaunchArgs } from '../support/chromium.ts';
import { chromiumPath, requireOrSkip } from '../support/env.ts';
import { authorizationRequest, discover, insertClient, jwtClaims, uniqueEmail, type TestClient } from '../support/oauth.ts';
import { createTenant, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { screenshot } from '../support/screenshots.ts';

const SCOPE = 'openid email profile:read rooms:connect';
const LOGO_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#e8590c"/></svg>';

// Colours of the sign-in stylesheet (src/modules/oauth/signin/assets.ts).
const LIGHT_BG = 'rgb(244, 245, 247)';
const DARK_BG = 'rgb(15, 17, 21)';

/** The application's side: serves its logo and records where the browser is sent back to. */
function startAppServer(): Promise<{ server: Server; url: string; callbacks: string[] }> {
  const callbacks: string[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(LOGO_SVG);
      return;
    }
    if (req.url?.startsWith('/callback/')) callbacks.push(`http://${req.headers.host}${req.url}`);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Signed in</title><p>Back in the app</p>');
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, callbacks })));
}

interface PageLook {
  background: string;
  logoSrc: string;
  logoLoaded: boolean;
  name: string;
}

// Evaluated in the page (a string: this project type-checks without DOM types).
const LOOK_SCRIPT = `(() => {
  const logo = document.querySelector('#client-logo');
  return {
    background: getComputedStyle(document.body).backgroundColor,
    logoSrc: logo.src,
    logoLoaded: logo.complete && logo.naturalWidth > 0,
    name: document.querySelector('#client-name').textContent,
  };
})()`;

function styles(page: Page): Promise<PageLook> {
  return page.evaluate(LOOK_SCRIPT) as Promise<PageLook>;
}

describe('OAuth sign-in pages in Chromium', () => {
  let service: TestService | undefined;
  let browser: Browser | undefined;
  let app: Awaited<ReturnType<typeof startAppServer>>;
  let tenant: Tenant;

  before(async () => {
    if (!chromiumPath) return;
    app = await startAppServer();
    // No settings: the embedded quick start's defaults must give email sign-in and the outbox.
    service = await startTestService('pglite');
    tenant = await createTenant(service, 'browser');
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumLaunchArgs });
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    app?.server.close();
  });

  async function clientWith(theme: string, logo: boolean): Promise<{ client: TestClient; config: oidc.Configuration }> {
    const client = await insertClient(service!, tenant.projectId, {
      name: `Branded ${theme}`,
      redirectUris: [`${app.url}/callback/${theme}`],
      scope: SCOPE,
      metadata: { theme, ...(logo ? { logo_url: `${app.url}/logo.svg` } : {}) },
    });
    return { client, config: await discover(service!, client) };
  }

  test('sign up, confirm from the outbox, consent, back to the app; dark theme and the client logo', async (t) => {
    if (!requireOrSkip(t, chromiumPath !== undefined, 'Chromium')) return;
    const { client, config } = await clientWith('dark', true);
    const request = await authorizationRequest(config, client.redirectUri, SCOPE);
    const context = await browser!.newContext();
    const page = await context.newPage();

    await page.goto(request.url.href);
    await page.waitForSelector('#password-form');
    const login = await styles(page);
    assert.equal(login.background, DARK_BG, 'theme dark is forced');
    assert.equal(login.logoSrc, `${app.url}/logo.svg`);
    assert.ok(login.logoLoaded, 'the client logo loads under the page CSP');
    assert.equal(login.name, 'Branded dark');
    await screenshot(page, 'oauth-login-dark');

    // Sign up.
    const email = uniqueEmail('chromium');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('First name (optional)').fill('Chrome');
    await page.getByLabel('Password (at least 8 characters)').fill('browser password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();

    // The confirmation mail, from the development outbox, opened in a second tab.
    const outbox = await context.newPage();
    for (let i = 0; i < 50; i++) {
      await outbox.goto(devMailboxLink(service!.ctx.config));
      if (await outbox.getByText(email).count() > 0) break;
      await outbox.waitForTimeout(100);
    }
    await outbox.locator('tr', { hasText: email }).getByRole('link', { name: /Confirm your email address/ }).click();
    await outbox.locator('#mail-body a').click();
    await outbox.getByRole('button', { name: 'Confirm my email' }).click();
    // Confirmed in the same browser: the sign-in carries on to consent.
    await outbox.getByRole('heading', { name: 'Allow Branded dark to access your account?' }).waitFor();
    const consent = await styles(outbox);
    assert.equal(consent.background, DARK_BG);
    assert.ok(consent.logoLoaded);
    const scopes = await outbox.locator('#scopes li').allTextContents();
    assert.deepEqual(scopes, ['Know who you are (your Atrium account id)', 'See your email address', 'Read your Atrium profile and your role in the project', 'Join rooms you have access to, on your behalf']);
    await screenshot(outbox, 'oauth-consent-dark');

    await outbox.getByRole('button', { name: 'Allow' }).click();
    await outbox.getByText('Back in the app').waitFor();
    const callback = new URL(app.callbacks.at(-1)!);
    assert.equal(callback.origin + callback.pathname, client.redirectUri);
    assert.equal(callback.searchParams.get('iss'), service!.url);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
    assert.equal(tokens.claims()!.email, email);
    assert.equal(jwtClaims(tokens.access_token).project_id, tenant.projectId);

    // The browser session is an HttpOnly, SameSite=Lax cookie.
    const session = (await context.cookies()).find((c) => c.name === 'atrium_session');
    assert.ok(session, 'session cookie set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Lax');
    await context.close();
  });

  test('theme light is forced, auto follows the colour scheme, no logo shows Atrium\'s', async (t) => {
    if (!requireOrSkip(t, chromiumPath !== undefined, 'Chromium')) return;
    const light = await clientWith('light', false);
    const auto = await clientWith('auto', false);
    for (const colorScheme of ['dark', 'light'] as const) {
      const context = await browser!.newContext({ colorScheme });
      const page = await context.newPage();
      await page.goto((await authorizationRequest(light.config, light.client.redirectUri, SCOPE)).url.href);
      const forced = await styles(page);
      assert.equal(forced.background, LIGHT_BG, `light stays light under ${colorScheme}`);
      assert.equal(forced.logoSrc, `${service!.url}/signin/assets/logo.svg`);
      assert.ok(forced.logoLoaded, 'default logo served');
      await page.goto((await authorizationRequest(auto.config, auto.client.redirectUri, SCOPE)).url.href);
      const following = await styles(page);
      assert.equal(following.background, colorScheme === 'dark' ? DARK_BG : LIGHT_BG, `auto under ${colorScheme}`);
      await screenshot(page, `oauth-login-auto-${colorScheme}`);
      await context.close();
    }
  });
});

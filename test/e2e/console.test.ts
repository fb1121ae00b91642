// The web console in headless Chromium, as a project owner uses it, on the embedded quick start:
// first-run setup from an empty database, then rooms, API keys, OAuth clients with their branded
// consent page, webhooks with deliveries, storage, every resource family's pages (feeds delivering
// into a room's storage, LLM loggers, external OAuth, a room's policy, billing through the local
// checkout, usage charts…), what a member without rights sees, and sign-out. With
// ATRIUM_TEST_SCREENSHOTS=1 it leaves screenshots of every main page, light and dark, in
// test-artifacts/. The steps share one server and one signed-in browser, in order, as a person would
// go. The console's budgets (how fast, how much JavaScript) are timed apart, alone:
// test/budgets/console.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test, type TestContext } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { priceUsage } from '../../src/modules/billing/service.ts';
import { setupLink } from '../../src/modules/setup/service.ts';
import { chromiumLaunchArgs, until } from '../support/chromium.ts';
import { startFakeRoomServer, type FakeRoomServer } from '../support/room-server.ts';
import { chromiumPath, requireOrSkip } from '../support/env.ts';
import { authorizationRequest, discover } from '../support/oauth.ts';
import { call, createUserWithToken, startTestService, type TestService } from '../support/service.ts';
import { screenshot, screenshotsWanted } from '../support/screenshots.ts';

const ADMIN = { email: 'owner@example.test', password: 'a long admin password', firstName: 'Olive' };
const LOGO_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#e8590c"/></svg>';
// The sign-in pages' dark background (src/modules/oauth/assets.ts).
const DARK_BG = 'rgb(15, 17, 21)';

/** The application side of an OAuth client, and a webhook receiver: records what arrives. */
function startPeer(): Promise<{ server: Server; url: string; webhooks: { headers: IncomingMessage['headers']; body: string }[] }> {
  const webhooks: { headers: IncomingMessage['headers']; body: string }[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/logo.svg') {
      res.writeHead(200, { 'content-type': 'image/svg+xml' }).end(LOGO_SVG);
      return;
    }
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => {
      if (req.url === '/webhook') webhooks.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('received');
    });
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, webhooks })));
}

describe('the web console in Chromium', () => {
  let service: TestService;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  let peer: Awaited<ReturnType<typeof startPeer>>;
  let roomServer: FakeRoomServer;
  let projectId = '';
  let apiKey = '';
  const console$ = (path: string) => `${service.url}/console${path}`;

  before(async () => {
    if (!chromiumPath) return;
    peer = await startPeer();
    // Reports sessions and their telemetry, and ends a session Atrium asks it to terminate.
    roomServer = await startFakeRoomServer();
    // The embedded quick start's defaults: email sign-in, the development mailbox, private webhooks.
    service = await startTestService('pglite', { ATRIUM_ROOM_SERVER_URL: roomServer.url, ATRIUM_JOBS_POLL_MS: '100', ATRIUM_SCHEDULED_TASKS_MIN_PERIOD_SECONDS: '1', ATRIUM_MAIL_DOMAINS: 'mail.example.test', ATRIUM_FEEDS_FLUSH_SECONDS: '1' });
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumLaunchArgs });
    admin = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await admin.newPage();
    page.setDefaultTimeout(20_000);
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    peer?.server.close();
    await roomServer?.close();
  });

  const ready = (t: TestContext) => requireOrSkip(t, chromiumPath !== undefined, 'Chromium');

  /** A screenshot of the page as it is, in the light and the dark scheme (the console follows the system's), when wanted. */
  async function shoot(target: Page, name: string) {
    if (!screenshotsWanted) return;
    for (const scheme of ['light', 'dark'] as const) {
      await target.emulateMedia({ colorScheme: scheme });
      await target.waitForTimeout(150);
      await screenshot(target, `console-${name}-${scheme}`);
    }
    await target.emulateMedia({ colorScheme: 'light' });
  }

  const nav = (target: Page, name: string) => target.getByRole('navigation', { name: 'Project' }).getByRole('link', { name, exact: true });

  /** The sign-in page, then straight into the console: it is Atrium's own app, with no consent page. */
  async function signIn(target: Page, email: string, password: string) {
    await target.locator('#password-form').waitFor();
    await target.getByLabel('Email').fill(email);
    await target.getByLabel('Password').fill(password);
    await target.getByRole('button', { name: 'Sign in' }).click();
  }

  test('first run: the setup link creates the first admin and project, and the console opens signed in: no second password, no consent page', async (t) => {
    if (!ready(t)) return;
    const link = await setupLink(service.ctx);
    assert.ok(link, 'an empty database offers the setup link');

    await page.goto(console$('/setup'));
    await page.getByText('This setup link is not valid').waitFor();

    await page.goto(link);
    await page.getByRole('heading', { name: 'Set up Atrium' }).waitFor();
    assert.ok(!page.url().includes('token='), 'the token leaves the address bar');
    await shoot(page, 'setup');
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password (at least 8 characters)').fill(ADMIN.password);
    await page.getByLabel('First name').fill(ADMIN.firstName);
    await page.getByLabel('Project name').fill('Launch');
    // Every page the browser shows from here: a sign-in or consent page would be one under /interaction.
    const shown: string[] = [];
    const record = (frame: { url(): string; parentFrame(): unknown }) => { if (!frame.parentFrame()) shown.push(frame.url()); };
    page.on('framenavigated', record);
    await page.getByRole('button', { name: 'Create and sign in' }).click();
    await page.getByRole('heading', { name: 'Launch', exact: true }).waitFor();
    page.off('framenavigated', record);
    assert.deepEqual(shown.filter((url) => !url.startsWith(console$(''))), [], 'only console pages were shown');
    assert.equal(await page.locator('#password-form').count(), 0);
    projectId = /\/console\/p\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    await shoot(page, 'project');

    // The setup is gone now that an account exists.
    const closed = await admin.newPage();
    await closed.goto(link);
    await closed.getByText('Atrium is already set up').waitFor();
    await closed.close();
  });

  test('a room: create it, connect, and the participant token validates', async (t) => {
    if (!ready(t)) return;
    await nav(page, 'Rooms').click();
    await page.getByRole('button', { name: 'New room' }).click();
    await page.getByLabel(/^Name/).fill('lobby');
    await page.getByLabel('Metadata (JSON object, optional)').fill('{"topic": "launch"}');
    await page.getByRole('button', { name: 'Create room' }).click();
    await page.getByRole('heading', { name: 'lobby' }).waitFor();
    await page.getByRole('button', { name: 'Connect' }).click();
    const token = await page.getByLabel('Participant token', { exact: true }).inputValue();
    assert.match(await page.getByLabel('Room URL', { exact: true }).inputValue(), /\/rooms\/lobby$/);
    await shoot(page, 'room-connect');
    await page.getByRole('button', { name: 'Done' }).click();
    const validated = await call(service, 'POST', '/api/participant-token/validate', { json: { token } });
    assert.equal(validated.status, 200, JSON.stringify(validated.body));
    await nav(page, 'Rooms').click();
    await page.getByRole('link', { name: 'lobby' }).waitFor();
    await shoot(page, 'rooms');
  });

  test('an API key: shown once, and it works from outside the browser', async (t) => {
    if (!ready(t)) return;
    await nav(page, 'API keys').click();
    await page.getByRole('button', { name: 'New API key' }).click();
    await page.getByLabel(/^Name/).fill('deploy');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('You will not see this again').waitFor();
    apiKey = await page.getByLabel('API key', { exact: true }).inputValue();
    assert.match(apiKey, /^ma-/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const rooms = await call(service, 'GET', `/accounts/projects/${projectId}/rooms`, { token: apiKey });
    assert.equal(rooms.status, 200);
    assert.deepEqual(rooms.body.rooms.map((r: { name: string }) => r.name), ['lobby']);
    await page.getByRole('cell', { name: 'deploy' }).waitFor();
    await shoot(page, 'api-keys');
  });

  test('the audit log: the key just made, found by its action, and its entry whole', async (t) => {
    if (!ready(t)) return;
    await nav(page, 'Audit log').click();
    await page.getByLabel('Action').fill('api_key.*');
    const row = page.getByRole('row', { name: /Entry api_key\.create/ });
    await row.first().waitFor();
    await row.first().click();
    const drawer = page.getByRole('dialog', { name: 'Audit entry' });
    await drawer.getByText('api_key.create').waitFor();
    await drawer.getByText('Request id').waitFor();
    await drawer.getByText('127.0.0.1').waitFor();
    await shoot(page, 'audit-log');
    await page.keyboard.press('Escape');
    await page.getByRole('combobox', { name: 'Outcome' }).click();
    await page.getByRole('option', { name: 'refused' }).click();
    await page.getByText('No entries match.').waitFor();
  });

  test('an OAuth client with a logo and the dark theme: the preview, then the real consent page', async (t) => {
    if (!ready(t)) return;
    const redirectUri = `${peer.url}/callback`;
    await nav(page, 'OAuth clients').click();
    await page.getByRole('button', { name: 'New OAuth client' }).click();
    await page.getByLabel(/^Name/).fill('Launch app');
    await page.getByRole('combobox', { name: 'Redirect URIs' }).fill(redirectUri);
    await page.getByRole('combobox', { name: 'Redirect URIs' }).press('Enter');
    await page.getByLabel('Logo URL').fill(`${peer.url}/logo.svg`);
    await page.getByRole('combobox', { name: 'Theme of the sign-in pages' }).click();
    await page.getByRole('option', { name: 'dark' }).click();
    const preview = page.getByTestId('consent-preview');
    await preview.getByText('Allow Launch app to access your account?').waitFor();
    assert.equal(await preview.getAttribute('data-theme'), 'dark');
    await shoot(page, 'oauth-client-form');
    await page.getByRole('button', { name: 'Register client' }).click();
    await page.getByText('You will not see this again').waitFor();
    const clientId = await page.getByLabel('Client id', { exact: true }).inputValue();
    const clientSecret = await page.getByLabel('Client secret', { exact: true }).inputValue();
    assert.ok(clientSecret.length > 20);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('heading', { name: 'Launch app', exact: true }).waitFor();
    await shoot(page, 'oauth-client');

    // The application sends the signed-in owner to Atrium: the consent page wears its brand.
    const config = await discover(service, { clientId, clientSecret });
    const request = await authorizationRequest(config, redirectUri, 'openid email profile:read');
    const consent = await admin.newPage();
    await consent.goto(request.url.href);
    await consent.getByRole('heading', { name: 'Allow Launch app to access your account?' }).waitFor();
    const look = await consent.evaluate(`(() => {
      const logo = document.querySelector('#client-logo');
      return { background: getComputedStyle(document.body).backgroundColor, logo: logo.src, loaded: logo.complete && logo.naturalWidth > 0 };
    })()`) as { background: string; logo: string; loaded: boolean };
    assert.equal(look.background, DARK_BG);
    assert.equal(look.logo, `${peer.url}/logo.svg`);
    assert.ok(look.loaded, 'the logo loads');
    await screenshot(consent, 'console-oauth-consent-dark');
    await consent.close();
  });

  test('a webhook to a local receiver: a storage upload is delivered, seen in the history, and redelivered; the file downloads', async (t) => {
    if (!ready(t)) return;
    await nav(page, 'Webhooks').click();
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByLabel(/^Name/).fill('receiver');
    await page.getByLabel(/^URL/).fill(`${peer.url}/webhook`);
    await page.getByRole('button', { name: 'Register webhook' }).click();
    await page.getByText('You will not see this again').waitFor();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('heading', { name: 'receiver' }).waitFor();

    // Upload through the console: a progress bar, then the file; the upload is the event.
    await nav(page, 'Storage').click();
    const content = `hello from the console ${Date.now()}\n`.repeat(2000);
    await page.locator('input[type=file]').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(content) });
    await page.getByRole('cell', { name: 'notes.txt' }).waitFor();
    await shoot(page, 'storage');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    assert.equal(download.suggestedFilename(), 'notes.txt');
    assert.equal(readFileSync(await download.path(), 'utf8'), content);

    // Subscribed to every event: the upload's, and the audit entries of the changes made here.
    const uploads = () => peer.webhooks.filter((w) => /"event": ?"storage\.file\.updated"/.test(w.body));
    const upload = () => uploads()[0];
    await until('the receiver got the delivery', () => upload() !== undefined);
    assert.ok(upload()!.headers['service-signature'], 'signed');

    await nav(page, 'Webhooks').click();
    await page.getByRole('link', { name: 'receiver' }).click();
    const delivery = page.getByTestId('delivery').filter({ has: page.getByRole('button', { name: /storage\.file\.updated/ }) }).first();
    await delivery.getByText('succeeded').waitFor();
    await delivery.getByText('storage.file.updated').click();
    await delivery.getByText('HTTP 200').first().waitFor();
    await delivery.getByText('received').first().waitFor();
    await shoot(page, 'webhook');
    await delivery.getByRole('button', { name: 'Redeliver' }).click();
    await until('the receiver got the redelivery', () => uploads().length >= 2);
    await delivery.getByText('manual').waitFor();
    await nav(page, 'Webhooks').click();
    await shoot(page, 'webhooks');
  });

  /** A step that failed may leave a dialog open: close it, so the next test starts from the page. */
  async function settle(target: Page) {
    for (let i = 0; i < 3 && (await target.getByRole('dialog').count()) > 0; i++) {
      await target.keyboard.press('Escape');
      await target.waitForTimeout(300);
    }
  }

  /** Replaces a form field's text (a textarea or an input) by its label, then leaves it, as a person tabbing on would. */
  const typeInto = async (target: Page, label: string | RegExp, text: string) => {
    const field = target.getByLabel(label);
    await field.fill(text);
    await field.blur();
  };

  /** An API error the form showed under the named field (Mantine marks the input invalid and describes it by the error). */
  async function fieldError(target: Page, label: string | RegExp, text: string | RegExp) {
    const input = target.getByLabel(label);
    await until(`${String(label)} shows an error`, async () => (await input.getAttribute('aria-invalid')) === 'true');
    const described = await input.getAttribute('aria-describedby');
    assert.ok(described, 'the input is described by its error');
    const message = await target.locator(`[id="${described.split(' ').find((id) => id.endsWith('-error'))}"]`).textContent();
    assert.match(message ?? '', text instanceof RegExp ? text : new RegExp(text));
  }

  /** Chooses a room in a form's room picker (it searches the project's rooms as one types). */
  async function pickRoom(target: Page, name: string) {
    await target.getByRole('combobox', { name: /^Room/ }).fill(name);
    await target.getByRole('option', { name, exact: true }).click();
  }

  /** Closes a select's open list of options without closing its dialog (Escape would close both). */
  async function closeDropdown(target: Page) {
    await target.getByRole('dialog').locator('h2').first().click();
  }

  test('services: a project service from a YAML spec, the API\'s error under the editor, edit, a room service from a template, delete', async (t) => {
    if (!ready(t)) return;
    const api = (path: string) => call(service, 'GET', `/accounts/projects/${projectId}${path}`, { token: apiKey });
    await nav(page, 'Services').click();
    await page.getByText('No services yet.').waitFor();
    await page.getByRole('button', { name: 'New service' }).click();
    // A misspelt field: the API refuses it and the message shows under the spec editor.
    await typeInto(page, /^Spec/, 'version: v1\nkind: Service\nmetadata:\n  name: echo\ncontainer:\n  image: ghcr.io/example/echo:1\n  comand: [serve]\n');
    await page.getByRole('button', { name: 'Create service' }).click();
    await fieldError(page, /^Spec/, /unknown property "comand"/);
    await shoot(page, 'service-form');
    await typeInto(page, /^Spec/, 'version: v1\nkind: Service\nmetadata:\n  name: echo\ncontainer:\n  image: ghcr.io/example/echo:1\nports:\n  - num: 8080\n    type: http\n');
    await page.getByRole('button', { name: 'Create service' }).click();
    await page.getByRole('heading', { name: 'echo' }).waitFor();
    const listed = await api('/services');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.total, 1);
    const serviceId = listed.body.services[0].id as string;
    assert.equal(listed.body.services[0].container.image, 'ghcr.io/example/echo:1');
    assert.ok(page.url().endsWith(`/services/${serviceId}`));
    await shoot(page, 'service');

    // Edit: the editor opens on the stored spec as YAML; JSON is accepted too.
    await page.getByRole('button', { name: 'Edit' }).click();
    assert.match(await page.getByLabel(/^Spec/).inputValue(), /image: ghcr.io\/example\/echo:1/);
    await typeInto(page, /^Spec/, JSON.stringify({ version: 'v1', kind: 'Service', metadata: { name: 'echo' }, container: { image: 'ghcr.io/example/echo:2' } }));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('service-spec').getByText(/echo:2/).waitFor();
    assert.equal((await api(`/services/${serviceId}`)).body.container.image, 'ghcr.io/example/echo:2');

    // A room's own service, from a template with values; a missing value is named under the values.
    await nav(page, 'Rooms').click();
    await page.getByRole('link', { name: 'lobby' }).click();
    await page.getByRole('navigation', { name: 'In this room' }).getByRole('link', { name: 'Services' }).click();
    await page.getByRole('heading', { name: 'Services of room lobby' }).waitFor();
    await page.getByRole('button', { name: 'New service' }).click();
    await typeInto(page, /^Spec/, 'version: v1\nkind: ServiceTemplate\nmetadata:\n  name: "{{ name }}"\nvariables:\n  - name: name\n  - name: token\n    obscure: true\ncontainer:\n  image: ghcr.io/example/helper:1\n  environment:\n    - name: TOKEN\n      value: "{{ token }}"\n');
    await typeInto(page, /^Template values/, '{"name": "helper"}');
    await page.getByRole('button', { name: 'Create service' }).click();
    await fieldError(page, /^Template values/, /values\.token is required/);
    await typeInto(page, /^Template values/, '{"name": "helper", "token": "s3cret-value"}');
    await page.getByRole('button', { name: 'Create service' }).click();
    await page.getByRole('heading', { name: 'helper' }).waitFor();
    const roomServices = await api('/rooms/lobby/services');
    assert.equal(roomServices.body.total, 1);
    assert.equal(roomServices.body.services[0].metadata.name, 'helper');
    assert.equal(roomServices.body.services[0].container.environment[0].value, '********');
    assert.equal((await api('/services')).body.total, 1, 'the room service is not a project service');
    await shoot(page, 'room-service');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No services yet.').waitFor();
    assert.equal((await api('/rooms/lobby/services')).body.total, 0);

    // The project service: delete it from its page.
    await nav(page, 'Services').click();
    await page.getByRole('link', { name: 'echo' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No services yet.').waitFor();
    assert.equal((await api(`/services/${serviceId}`)).status, 404);
  });

  test('secrets: values are write-only; a taken name under its field; replace, a room secret for one participant, delete', async (t) => {
    if (!ready(t)) return;
    const api = (path: string) => call(service, 'GET', `/accounts/projects/${projectId}${path}`, { token: apiKey });
    const valueOf = async (path: string) => Buffer.from((await api(path)).body.data_base64 as string, 'base64').toString('utf8');
    await nav(page, 'Secrets').click();
    await page.getByText('No secrets yet.').waitFor();
    await page.getByRole('button', { name: 'New secret' }).click();
    await typeInto(page, /^Name/, 'openai');
    await typeInto(page, /^Value/, '{"OPENAI_API_KEY":"sk-first-value"}');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.getByRole('heading', { name: 'openai' }).waitFor();
    const secretId = /\/secrets\/([^/?]+)$/.exec(page.url())![1]!;
    assert.equal(await valueOf(`/secrets/${secretId}`), '{"OPENAI_API_KEY":"sk-first-value"}');
    await page.getByText('Write-only: set, never shown').waitFor();
    assert.ok(!(await page.content()).includes('sk-first-value'), 'the value is not on the page');
    await shoot(page, 'secret');

    // Replace the value (and the type); the page still shows none.
    await page.getByRole('button', { name: 'Replace value' }).click();
    assert.equal(await page.getByLabel(/^Value/).inputValue(), '', 'the form does not hold the old value');
    await typeInto(page, /^Type/, 'opaque');
    await typeInto(page, /^Value/, 'sk-second-value');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'opaque' }).waitFor();
    assert.equal(await valueOf(`/secrets/${secretId}`), 'sk-second-value');
    assert.ok(!(await page.content()).includes('sk-second-value'));

    // A taken name: the API's 409 under the name.
    await nav(page, 'Secrets').click();
    await page.getByRole('link', { name: 'openai' }).waitFor();
    await page.getByRole('button', { name: 'New secret' }).click();
    await typeInto(page, /^Name/, 'openai');
    await typeInto(page, /^Value/, '{"OPENAI_API_KEY": "x"}');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await fieldError(page, /^Name/, /already exists/);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await shoot(page, 'secrets');

    // A room secret for one participant.
    await nav(page, 'Rooms').click();
    await page.getByRole('link', { name: 'lobby' }).click();
    await page.getByRole('navigation', { name: 'In this room' }).getByRole('link', { name: 'Secrets' }).click();
    await page.getByRole('heading', { name: 'Secrets of room lobby' }).waitFor();
    await page.getByRole('button', { name: 'New secret' }).click();
    await typeInto(page, /^Id/, 'github-token');
    await typeInto(page, /^For participant/, 'alice');
    await typeInto(page, /^Value/, 'ghp_room_value');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.getByRole('heading', { name: 'github-token' }).waitFor();
    assert.equal(await valueOf('/rooms/lobby/secrets/github-token?for_identity=alice'), 'ghp_room_value');
    assert.equal((await api('/rooms/lobby/secrets/github-token')).status, 404, 'not a room-wide value');
    await page.getByRole('cell', { name: 'alice' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No secrets yet.').waitFor();
    assert.equal((await api('/rooms/lobby/secrets/github-token?for_identity=alice')).status, 404);

    await nav(page, 'Secrets').click();
    await page.getByRole('link', { name: 'openai' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No secrets yet.').waitFor();
    assert.equal((await api(`/secrets/${secretId}`)).status, 404);
  });

  test('sessions: the live list, a session\'s events, span waterfall and metric charts, and terminate', async (t) => {
    if (!ready(t)) return;
    roomServer.connect({ url: service.url, projectId, apiKey });
    const done = await roomServer.startSession('lobby');
    await roomServer.endSession(done.id);
    const live = await roomServer.startSession('lobby');
    await roomServer.reportParticipants(live.id, [{ type: 'joined', participant_id: 'u1', role: 'user', name: 'Uma' }]);
    const resource = { 'atrium.session.id': live.id };
    await roomServer.exportSpans(resource, [{ name: 'turn' }, { name: 'tool call', parent: 'turn' }], 'json');
    await roomServer.exportLogs(resource, [{ body: 'hello from the room' }], 'json');
    await roomServer.exportMetrics(resource, (meter) => meter.createCounter('messages').add(2), 'json');

    await nav(page, 'Sessions').click();
    await page.getByText('1 in all').waitFor();
    await page.locator('label', { hasText: /^Recent$/ }).click();
    await page.getByText('2 in all').waitFor();
    await page.getByText('ended (reported)').waitFor();
    await shoot(page, 'sessions');
    await page.locator('label', { hasText: /^Active$/ }).click();
    await page.getByText('1 in all').waitFor();
    await page.getByRole('link', { name: 'lobby' }).click();
    await page.getByRole('heading', { name: 'Session of lobby' }).waitFor();
    await page.getByText('1 user').waitFor();
    await page.getByText('hello from the room').waitFor();
    await page.getByText('Uma (user)').waitFor();
    await page.getByRole('tab', { name: 'Spans' }).click();
    await until('both spans are drawn', async () => (await page.getByTestId('span').count()) === 2);
    await page.getByRole('img', { name: /^tool call / }).waitFor();
    await shoot(page, 'session-spans');
    await page.getByRole('tab', { name: 'Metrics' }).click();
    await page.getByTestId('metric-chart').getByText('messages').waitFor();
    await page.getByRole('img', { name: 'messages over time' }).waitFor();
    await shoot(page, 'session-metrics');

    // Terminate: the room server is asked, ends it, and the page follows.
    await page.getByRole('button', { name: 'Terminate' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Terminate' }).click();
    await page.getByText('ended (terminated)').waitFor();
    assert.ok(roomServer.calls.some((c) => c.path === '/atrium/v1/session-terminations' && c.json.session_id === live.id));
    const ended = await call(service, 'GET', `/accounts/projects/${projectId}/sessions/${live.id}`, { token: apiKey });
    assert.equal(ended.body.status, 'ended');
    assert.equal(ended.body.ended_reason, 'terminated');
    assert.equal(await page.getByRole('button', { name: 'Terminate' }).count(), 0);
  });

  test('scheduled tasks: the API\'s schedule error under its field, create, a run delivered to the room server, edit, delete', async (t) => {
    if (!ready(t)) return;
    const tasks = async () => (await call(service, 'GET', `/accounts/projects/${projectId}/scheduled-tasks`, { token: apiKey })).body.tasks;
    await nav(page, 'Scheduled tasks').click();
    await page.getByText('No scheduled tasks yet.').waitFor();
    await page.getByRole('button', { name: 'New scheduled task' }).click();
    await pickRoom(page, 'lobby');
    await typeInto(page, /^Name/, 'digest');
    await typeInto(page, /^Schedule/, 'now and then');
    await typeInto(page, /^Queue/, 'digests');
    await typeInto(page, /^Payload/, '{"kind": "digest"}');
    await page.getByRole('button', { name: 'Create task' }).click();
    await fieldError(page, /^Schedule/, /neither a 5-field cron expression nor an interval/);
    // Once, two seconds from now: one run, delivered to the room server's queue.
    await typeInto(page, /^Schedule/, '2 seconds');
    await page.getByRole('switch', { name: 'Once (then inactive)' }).click();
    assert.ok(await page.getByRole('switch', { name: 'Once (then inactive)' }).isChecked());
    await page.getByRole('button', { name: 'Create task' }).click();
    await page.getByRole('heading', { name: 'digest' }).waitFor();
    const [created] = await tasks();
    assert.equal(created.room_name, 'lobby');
    assert.equal(created.queue_name, 'digests');
    assert.deepEqual(created.payload, { kind: 'digest' });
    assert.equal(created.once, true);
    await page.getByRole('cell', { name: 'submitted', exact: true }).waitFor({ timeout: 30_000 });
    await shoot(page, 'scheduled-task');

    await page.getByRole('button', { name: 'Edit' }).click();
    await typeInto(page, /^Schedule/, '0 9 * * 1-5');
    await typeInto(page, /^Time zone/, 'Europe/Berlin');
    await page.getByRole('switch', { name: 'Once (then inactive)' }).click();
    // A task that ran once is inactive: make it active again.
    if (!(await page.getByRole('switch', { name: 'Active', exact: true }).isChecked())) await page.getByRole('switch', { name: 'Active', exact: true }).click();
    assert.ok(await page.getByRole('switch', { name: 'Active', exact: true }).isChecked());
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'Europe/Berlin' }).waitFor();
    const [edited] = await tasks();
    assert.equal(edited.schedule, '0 9 * * 1-5');
    assert.equal(edited.time_zone, 'Europe/Berlin');
    assert.equal(edited.active, true);
    assert.equal(edited.once, false);
    assert.ok(edited.next_run_at);
    await nav(page, 'Scheduled tasks').click();
    await page.getByRole('link', { name: 'digest' }).waitFor();
    await shoot(page, 'scheduled-tasks');
    await page.getByRole('link', { name: 'digest' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No scheduled tasks yet.').waitFor();
    assert.deepEqual(await tasks(), []);
  });

  test('routes and mailboxes: the API\'s errors under their fields, create, edit, delete', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    const api = (path: string) => call(service, 'GET', `/accounts/projects/${projectId}${path}`, { token: apiKey });
    await nav(page, 'Routes').click();
    await page.getByText('No routes yet.').waitFor();
    await page.getByRole('button', { name: 'New route' }).click();
    const spec = (room: string, port: number) => `version: v1\nkind: Route\ndomain: app.example.test\nbackend:\n  room:\n    name: ${room}\npaths:\n  - path: /\n    pathType: prefix\n    targetPort: ${port}\n`;
    await typeInto(page, /^Spec/, spec('nowhere', 8080));
    await page.getByRole('button', { name: 'Create route' }).click();
    await fieldError(page, /^Spec/, /no room named "nowhere"/);
    await typeInto(page, /^Spec/, spec('lobby', 8080));
    await page.getByRole('button', { name: 'Create route' }).click();
    await page.getByRole('heading', { name: 'app.example.test' }).waitFor();
    assert.equal((await api('/routes/app.example.test')).body.route.room_name, 'lobby');
    await page.getByRole('button', { name: 'Edit' }).click();
    await typeInto(page, /^Spec/, spec('lobby', 9000));
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('route-spec').getByText(/targetPort: 9000/).waitFor();
    assert.equal((await api('/routes/app.example.test')).body.route.port, 9000);
    await shoot(page, 'route');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No routes yet.').waitFor();
    assert.equal((await api('/routes/app.example.test')).status, 404);

    await nav(page, 'Mailboxes').click();
    await page.getByText('No mailboxes yet.').waitFor();
    await page.getByRole('button', { name: 'New mailbox' }).click();
    await typeInto(page, /^Address/, 'support@elsewhere.test');
    await typeInto(page, /^Room/, 'lobby');
    await page.getByRole('button', { name: 'Create mailbox' }).click();
    await fieldError(page, /^Address/, /must be under a mail domain this deployment allows/);
    await typeInto(page, /^Address/, 'support@mail.example.test');
    await typeInto(page, /^Room/, 'nowhere');
    await page.getByRole('button', { name: 'Create mailbox' }).click();
    await fieldError(page, /^Room/, /no room named "nowhere"/);
    await typeInto(page, /^Room/, 'lobby');
    await page.getByRole('button', { name: 'Create mailbox' }).click();
    await page.getByRole('heading', { name: 'support@mail.example.test' }).waitFor();
    assert.equal((await api('/mailboxes/support@mail.example.test')).body.mailbox.queue, 'inbox');
    await page.getByRole('button', { name: 'Edit' }).click();
    await typeInto(page, /^Queue/, 'support');
    await page.getByRole('dialog').getByRole('switch').click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'anyone' }).waitFor();
    const edited = (await api('/mailboxes/support@mail.example.test')).body.mailbox;
    assert.equal(edited.queue, 'support');
    assert.equal(edited.public, true);
    await shoot(page, 'mailbox');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No mailboxes yet.').waitFor();
    assert.equal((await api('/mailboxes/support@mail.example.test')).status, 404);
  });

  test('image repositories: a bad name under its field, create, a registry token, edit, delete', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    const api = (path: string) => call(service, 'GET', `/accounts/projects/${projectId}${path}`, { token: apiKey });
    await nav(page, 'Image repositories').click();
    await page.getByText('No repositories yet.').waitFor();
    await page.getByRole('button', { name: 'New repository' }).click();
    await typeInto(page, /^Name/, 'Team/Web App');
    await page.getByRole('button', { name: 'Create repository' }).click();
    await fieldError(page, /^Name/, /must be an OCI repository name/);
    await typeInto(page, /^Name/, 'team/web-app');
    await page.getByRole('button', { name: 'Create repository' }).click();
    await page.getByRole('heading', { name: 'team/web-app' }).waitFor();
    const [repository] = (await api('/repositories')).body.repositories;
    assert.equal(repository.registry_name, `${projectId}/team/web-app`);
    await page.getByRole('button', { name: 'Registry token' }).click();
    await page.getByRole('button', { name: 'Get token' }).click();
    assert.match(await page.getByLabel('Token', { exact: true }).inputValue(), /^ey[\w-]+\.[\w-]+\.[\w-]+$/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Edit' }).click();
    await typeInto(page, /^Description/, 'The web front end');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'The web front end' }).waitFor();
    assert.equal((await api(`/repositories/${repository.id}`)).body.description, 'The web front end');
    await shoot(page, 'repository');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No repositories yet.').waitFor();
    assert.equal((await api(`/repositories/${repository.id}`)).status, 404);
  });

  test('shares: the token shown once connects to the room; edit, delete', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    await nav(page, 'Shares').click();
    await page.getByText('No shares yet.').waitFor();
    await page.getByRole('button', { name: 'New share' }).click();
    await typeInto(page, /^Room/, 'lobby');
    await typeInto(page, /^Label/, 'Town hall');
    await typeInto(page, /^Expires at/, '2001-01-01T00:00:00Z');
    await page.getByRole('button', { name: 'Create share' }).click();
    await fieldError(page, /^Expires at/, /expires_at/);
    await typeInto(page, /^Expires at/, '');
    await page.getByRole('button', { name: 'Create share' }).click();
    await page.getByText('You will not see this again').waitFor();
    const token = await page.getByLabel('Share token', { exact: true }).inputValue();
    const shareId = await page.getByLabel('Share id', { exact: true }).inputValue();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const connected = await call(service, 'POST', `/shares/${shareId}/connect`, { token });
    assert.equal(connected.status, 200, JSON.stringify(connected.body));
    assert.equal(connected.body.room_name, 'lobby');
    await page.getByRole('cell', { name: 'Town hall' }).waitFor();
    await page.getByRole('row', { name: /Town hall/ }).getByRole('button', { name: 'Edit' }).click();
    await typeInto(page, /^Label/, 'Open day');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'Open day' }).waitFor();
    const listed = (await call(service, 'GET', `/accounts/projects/${projectId}/shares`, { token: apiKey })).body.shares;
    assert.deepEqual(listed.map((s: { settings: { label: string; room: string } }) => [s.settings.label, s.settings.room]), [['Open day', 'lobby']]);
    await shoot(page, 'shares');
    await page.getByRole('row', { name: /Open day/ }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No shares yet.').waitFor();
    assert.equal((await call(service, 'POST', `/shares/${shareId}/connect`, { token })).status >= 400, true);
  });

  test('feeds: create one, a subscription into a room, a message refused by the schema then published, its file in the room\'s storage, and its access policy', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    const api = (path: string) => call(service, 'GET', `/accounts/projects/${projectId}${path}`, { token: apiKey });
    await nav(page, 'Feeds').click();
    await page.getByText('No feeds yet.').waitFor();
    await page.getByRole('button', { name: 'New feed' }).click();
    await typeInto(page, /^Name/, 'orders');
    await page.getByRole('combobox', { name: /^Visibility/ }).click();
    await page.getByRole('option', { name: 'project' }).click();
    await typeInto(page, /^Message schema/, '{"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}');
    await typeInto(page, /^Annotations/, '{"team": "ops"}');
    await page.getByRole('button', { name: 'Create feed' }).click();
    await page.getByRole('heading', { name: 'orders' }).waitFor();
    const feedId = /\/feeds\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    const created = (await api(`/feeds/${feedId}`)).body.feed;
    assert.deepEqual([created.visibility, created.annotations, created.message_schema.required], ['project', { team: 'ops' }, ['id']]);

    // A subscription: lobby's feeds/orders, the room chosen from the project's rooms.
    await page.getByText('No subscriptions yet.').waitFor();
    await page.getByRole('button', { name: 'New subscription' }).click();
    await pickRoom(page, 'lobby');
    await typeInto(page, /^Path/, 'feeds/orders');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.getByRole('cell', { name: 'lobby', exact: true }).waitFor();
    await page.getByRole('row', { name: /lobby/ }).getByRole('button', { name: 'Edit' }).click();
    await typeInto(page, /^File name format/, 'YYYY-MM-DD_hh_mm_ss');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'YYYY-MM-DD_hh_mm_ss' }).waitFor();
    const [subscription] = (await api(`/feeds/${feedId}/subscriptions`)).body.subscriptions;
    assert.deepEqual([subscription.room, subscription.path, subscription.filename_datetime_format], ['lobby', 'feeds/orders', 'YYYY-MM-DD_hh_mm_ss']);

    // Publish: the schema's refusal under the message, then a message that matches.
    await page.getByRole('button', { name: 'Publish a message' }).click();
    await typeInto(page, /^Message/, '{"id": "not a number"}');
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await fieldError(page, /^Message/, /does not match the feed's message_schema/);
    await typeInto(page, /^Message/, '{"id": 42, "status": "paid"}');
    await page.getByRole('button', { name: 'Publish', exact: true }).click();
    await page.getByRole('status').getByText(/Published as message \d+/).waitFor();
    await shoot(page, 'feed');

    // Delivery goes through the outbox (a file a second after the first message): wait for the file
    // to exist, then see it on the storage page the subscription's path links to.
    const folder = 'rooms/lobby/feeds/orders';
    let file = '';
    await until('the subscription wrote its file', async () => {
      const listed = await call(service, 'GET', `/projects/${projectId}/storage?path=${encodeURIComponent(folder)}`, { token: apiKey });
      file = (listed.body?.files as { name: string; path: string }[] | undefined)?.find((f) => f.name.endsWith('.jsonl'))?.path ?? '';
      return file !== '';
    }, 30_000);
    assert.match(file, /^rooms\/lobby\/feeds\/orders\/\d{4}-\d{2}-\d{2}_\d{2}_\d{2}_\d{2}_[0-9a-f]{8}_\d{12}\.jsonl$/);
    const content = await fetch(`${service.url}/projects/${projectId}/storage/download?path=${encodeURIComponent(file)}`, { headers: { authorization: `Bearer ${apiKey}` } });
    assert.equal((await content.text()).trim(), '{"id":42,"status":"paid"}');
    await page.getByRole('link', { name: folder }).click();
    await page.getByRole('cell', { name: file.split('/').at(-1)! }).waitFor();

    // Pause it (edit), see it paused, resume; delete the subscription.
    await page.goBack();
    await page.getByRole('heading', { name: 'orders' }).waitFor();
    await page.getByRole('button', { name: 'Edit' }).first().click();
    await page.getByRole('switch', { name: 'Paused' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: /^paused/ }).waitFor();
    assert.equal((await api(`/feeds/${feedId}`)).body.feed.paused, true);
    assert.ok(await page.getByRole('button', { name: 'Publish a message' }).isDisabled());
    await page.getByRole('button', { name: 'Edit' }).first().click();
    await page.getByRole('switch', { name: 'Paused' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'active', exact: true }).waitFor();
    await page.getByRole('row', { name: /lobby/ }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No subscriptions yet.').waitFor();
    assert.equal((await api(`/feeds/${feedId}/subscriptions`)).body.total, 0);

    // Its access policy (the page rooms use too): every member may publish, then no longer.
    await page.getByRole('navigation', { name: 'Of this feed' }).getByRole('link', { name: 'Access policy' }).click();
    await page.getByRole('heading', { name: 'Access policy of feed orders' }).waitFor();
    await page.getByText('No one holds a role on this feed').waitFor();
    await page.getByRole('button', { name: 'Grant roles' }).click();
    await page.getByRole('combobox', { name: /^Subject/ }).click();
    await page.getByRole('option', { name: 'Every project member' }).click();
    await page.getByRole('button', { name: 'Grant', exact: true }).click();
    await page.getByRole('row', { name: /every project member/ }).getByRole('cell', { name: 'reader', exact: true }).waitFor();
    await page.getByRole('row', { name: /every project member/ }).getByRole('button', { name: 'Change roles' }).click();
    await page.getByRole('combobox', { name: /^Roles/ }).click();
    await page.getByRole('option', { name: 'publisher', exact: true }).click();
    await page.getByRole('option', { name: 'reader', exact: true }).click();
    await closeDropdown(page);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row', { name: /every project member/ }).getByRole('cell', { name: 'publisher', exact: true }).waitFor();
    assert.deepEqual((await api(`/policies/resources/feed/${feedId}`)).body.access_grants.map((g: { subject: { relation: string }; direct_roles: string[] }) => [g.subject.relation, g.direct_roles]), [['member', ['publisher']]]);
    await page.getByRole('row', { name: /every project member/ }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No one holds a role on this feed').waitFor();
    await page.getByRole('link', { name: 'Back to the feed' }).click();
    await page.getByRole('heading', { name: 'orders' }).waitFor();

    await nav(page, 'Feeds').click();
    await page.getByRole('link', { name: 'orders' }).waitFor();
    await shoot(page, 'feeds');
  });

  test('LLM loggers: the parser\'s error under the filter, create into a feed, edit, delete', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    const loggers = async () => (await call(service, 'GET', `/accounts/projects/${projectId}/llm-loggers`, { token: apiKey })).body.loggers;
    await nav(page, 'LLM loggers').click();
    await page.getByText('No LLM loggers yet.').waitFor();
    await page.getByRole('button', { name: 'New LLM logger' }).click();
    assert.equal(await page.getByRole('combobox', { name: /^Destination feed/ }).inputValue(), 'orders');
    await typeInto(page, /^Filter expression/, "provider == 'openai' &&");
    await page.getByRole('button', { name: 'Create logger' }).click();
    await fieldError(page, /^Filter expression/, /filter_expression is not valid JMESPath: ./);
    await shoot(page, 'llm-logger-form');
    await typeInto(page, /^Filter expression/, "provider == 'openai' && usage.output_tokens > `1000`");
    await page.getByRole('button', { name: 'Create logger' }).click();
    await page.getByRole('heading', { name: 'Logger to orders' }).waitFor();
    const [logger] = await loggers();
    assert.equal(logger.filter_expression, "provider == 'openai' && usage.output_tokens > `1000`");
    assert.equal(logger.paused, false);
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('switch', { name: 'Paused' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'paused', exact: true }).waitFor();
    assert.equal((await loggers())[0].paused, true);
    await shoot(page, 'llm-logger');
    await nav(page, 'LLM loggers').click();
    await page.getByRole('cell', { name: 'orders' }).waitFor();
    await shoot(page, 'llm-loggers');
    await page.getByRole('link', { name: /provider == 'openai'/ }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No LLM loggers yet.').waitFor();
    assert.deepEqual(await loggers(), []);
  });

  test('external OAuth: a bad endpoint under its field, register with a write-only secret, edit, delete; a room\'s own registration', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    const registrations = async () => (await call(service, 'GET', `/accounts/projects/${projectId}/external-oauth`, { token: apiKey })).body.registrations;
    await nav(page, 'External OAuth').click();
    await page.getByText('No external OAuth registrations yet.').waitFor();
    await page.getByRole('button', { name: 'New registration' }).click();
    await typeInto(page, /^Client id/, 'Iv1.console');
    await typeInto(page, /^Client secret/, 'gh-secret-value');
    await typeInto(page, /^Authorization endpoint/, 'github.com/login/oauth/authorize');
    await typeInto(page, /^Token endpoint/, 'https://github.com/login/oauth/access_token');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await fieldError(page, /^Authorization endpoint/, /must be an absolute http\(s\) URL/);
    await typeInto(page, /^Authorization endpoint/, 'https://github.com/login/oauth/authorize');
    await page.getByRole('combobox', { name: 'Scopes' }).fill('read:user');
    await page.getByRole('combobox', { name: 'Scopes' }).press('Enter');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await page.getByRole('cell', { name: 'Iv1.console' }).waitFor();
    const [registration] = await registrations();
    assert.deepEqual([registration.has_client_secret, registration.oauth.scopes, registration.room_name], [true, ['read:user'], null]);
    assert.ok(!(await page.content()).includes('gh-secret-value'), 'the secret is not on the page');
    await page.getByRole('row', { name: /Iv1.console/ }).getByRole('button', { name: 'Edit' }).click();
    assert.equal(await page.getByLabel(/^New client secret/).inputValue(), '');
    await typeInto(page, /^Delegated to/, 'support-agent');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'support-agent' }).waitFor();
    const [edited] = await registrations();
    assert.deepEqual([edited.delegated_to, edited.has_client_secret], ['support-agent', true], 'an empty secret keeps the stored one');
    await shoot(page, 'external-oauth');
    await page.getByRole('row', { name: /Iv1.console/ }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No external OAuth registrations yet.').waitFor();
    assert.deepEqual(await registrations(), []);

    // A room's own registration, from the room's page: listed under the room only.
    await nav(page, 'Rooms').click();
    await page.getByRole('link', { name: 'lobby' }).click();
    await page.getByRole('navigation', { name: 'In this room' }).getByRole('link', { name: 'External OAuth' }).click();
    await page.getByRole('heading', { name: 'External OAuth of room lobby' }).waitFor();
    await page.getByRole('button', { name: 'New registration' }).click();
    await typeInto(page, /^Client id/, 'room-client');
    await typeInto(page, /^Authorization endpoint/, 'https://accounts.example.test/authorize');
    await typeInto(page, /^Token endpoint/, 'https://accounts.example.test/token');
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    await page.getByRole('cell', { name: 'room-client' }).waitFor();
    const inRoom = (await call(service, 'GET', `/accounts/projects/${projectId}/rooms/lobby/external-oauth`, { token: apiKey })).body.registrations;
    assert.deepEqual(inRoom.map((r: { client_id: string; room_name: string; has_client_secret: boolean }) => [r.client_id, r.room_name, r.has_client_secret]), [['room-client', 'lobby', false]]);
    assert.deepEqual(await registrations(), [], 'not a project registration');
    await page.getByRole('row', { name: /room-client/ }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No external OAuth registrations yet.').waitFor();
  });

  test('a room\'s access policy: an unknown user under the subject, grant to every member and a user, change roles, revoke', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    const roomId = (await call(service, 'GET', `/accounts/projects/${projectId}/rooms/lobby`, { token: apiKey })).body.id as string;
    const grants = async () => (await call(service, 'GET', `/accounts/projects/${projectId}/policies/resources/room/${roomId}`, { token: apiKey })).body.access_grants as { subject: { type: string; email?: string; relation?: string }; direct_roles: string[] }[];
    await nav(page, 'Rooms').click();
    await page.getByRole('link', { name: 'lobby' }).click();
    await page.getByRole('navigation', { name: 'In this room' }).getByRole('link', { name: 'Access policy' }).click();
    await page.getByRole('heading', { name: 'Access policy of room lobby' }).waitFor();
    await page.getByText('No one holds a role on this room').waitFor();

    await page.getByRole('button', { name: 'Grant roles' }).click();
    await typeInto(page, /^Email or id/, 'stranger@example.test');
    await page.getByRole('button', { name: 'Grant', exact: true }).click();
    await fieldError(page, /^Email or id/, /Project user/);
    await typeInto(page, /^Email or id/, ADMIN.email);
    await page.getByRole('combobox', { name: /^Roles/ }).click();
    await page.getByRole('option', { name: 'operator', exact: true }).click();
    await closeDropdown(page);
    await page.getByRole('button', { name: 'Grant', exact: true }).click();
    await page.getByRole('cell', { name: new RegExp(ADMIN.email) }).waitFor();

    await page.getByRole('button', { name: 'Grant roles' }).click();
    await page.getByRole('combobox', { name: /^Subject/ }).click();
    await page.getByRole('option', { name: 'Every project member' }).click();
    await page.getByRole('button', { name: 'Grant', exact: true }).click();
    await page.getByRole('cell', { name: 'every project member' }).waitFor();
    const granted = await grants();
    assert.deepEqual(granted.map((g) => [g.subject.type, [...g.direct_roles].sort()]).sort(), [['user', ['operator', 'viewer']], ['userset', ['viewer']]]);
    await shoot(page, 'room-policy');

    // Change the members' roles to list only; revoke the user's.
    await page.getByRole('row', { name: /every project member/ }).getByRole('button', { name: 'Change roles' }).click();
    await page.getByRole('combobox', { name: /^Roles/ }).click();
    await page.getByRole('option', { name: 'list', exact: true }).click();
    await page.getByRole('option', { name: 'viewer', exact: true }).click();
    await closeDropdown(page);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row', { name: /every project member/ }).getByRole('cell', { name: 'list', exact: true }).waitFor();
    await page.getByRole('row', { name: new RegExp(ADMIN.email) }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await until('the user\'s binding is gone', async () => (await page.getByRole('cell', { name: new RegExp(ADMIN.email) }).count()) === 0);
    assert.deepEqual((await grants()).map((g) => [g.subject.type, g.direct_roles]), [['userset', ['list']]]);
    await page.getByRole('row', { name: /every project member/ }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No one holds a role on this room').waitFor();
    assert.deepEqual(await grants(), []);
  });

  test('billing: the balance, buy credits through the checkout and back, auto-recharge settings with the API\'s error under the budget, a cancelled subscription checkout', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    const balance = async () => (await call(service, 'GET', `/accounts/projects/${projectId}/balance`, { token: apiKey })).body;
    await nav(page, 'Billing').click();
    await page.getByRole('main').getByRole('heading', { name: 'Billing' }).waitFor();
    await page.getByTestId('balance').getByText('$0.00').waitFor();
    await page.getByText('No transactions yet.').waitFor();

    // Buy credits: the browser goes to the checkout URL (the local provider's page), pays, and comes back.
    await page.getByRole('button', { name: 'Buy credits' }).click();
    await typeInto(page, /^Credits/, '5');
    await page.getByRole('button', { name: 'Go to checkout' }).click();
    await page.waitForURL(/\/billing\/checkout\/[0-9a-f-]{36}$/);
    assert.equal(await page.textContent('#amount'), 'Total: 5 USD');
    await page.getByLabel(/ending 4242/).check();
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(/\/console\/p\/[0-9a-f-]{36}\/billing\?checkout=done$/);
    await page.getByText('Checkout complete').waitFor();
    await page.getByTestId('balance').getByText('$5.00').waitFor();
    await page.getByRole('cell', { name: 'credit purchase' }).waitFor();
    assert.equal((await balance()).balance, 5);

    // Auto-recharge: a budget below the amount is the API's 400, under the budget.
    await page.getByRole('button', { name: 'Auto-recharge settings' }).click();
    await page.getByRole('switch', { name: 'Recharge automatically' }).click();
    await typeInto(page, /^Amount/, '10');
    await typeInto(page, /^Threshold/, '1');
    await typeInto(page, /^Monthly budget/, '5');
    await page.getByRole('button', { name: 'Save' }).click();
    await fieldError(page, /^Monthly budget/, /monthly_budget must be at least amount/);
    await typeInto(page, /^Monthly budget/, '50');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/\$10\.00 when below \$1\.00, at most \$50\.00 a month/).waitFor();
    const set = await balance();
    assert.deepEqual([set.auto_recharge_enabled, set.auto_recharge_amount, set.auto_recharge_threshold, set.monthly_budget], [true, 10, 1, 50]);
    await page.getByText('Test card ending 4242').waitFor();
    await shoot(page, 'billing');

    // The subscription's checkout, cancelled: back on the page, nothing bought.
    await page.getByRole('button', { name: 'Subscribe' }).click();
    await page.waitForURL(/\/billing\/checkout\/[0-9a-f-]{36}$/);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL(/\/console\/p\/[0-9a-f-]{36}\/billing\?checkout=cancelled$/);
    await page.getByText('Checkout cancelled').waitFor();
    assert.equal((await call(service, 'GET', `/accounts/projects/${projectId}/subscription`, { token: apiKey })).body.subscription, null);
    assert.equal((await balance()).balance, 5);
  });

  test('usage: charts by day and by model for seeded usage, by provider and room, a narrower range; the debits are the newest transactions', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    // Three priced calls: two models, today and two days ago, one made in a room.
    const seed: { id: number; model: string; provider: string; daysAgo: number; input: number; output: number; annotations: Record<string, string> }[] = [
      { id: 1, model: 'gpt-4o-mini', provider: 'openai', daysAgo: 0, input: 1000, output: 500, annotations: {} },
      { id: 2, model: 'gpt-4o-mini', provider: 'openai', daysAgo: 2, input: 20000, output: 4000, annotations: {} },
      { id: 3, model: 'gpt-4.1', provider: 'openai', daysAgo: 2, input: 3000, output: 1000, annotations: { room: 'lab' } },
    ];
    for (const call of seed) {
      await service.ctx.db.transaction((tx) => priceUsage(service.ctx, tx, projectId, {
        request_id: `20000000-0000-4000-8000-00000000000${call.id}`, provider: call.provider, endpoint: '/v1/chat/completions', model: call.model, usage_source: 'provider', requested_model: null, request_bytes: 0, max_output_tokens: null, choices: 1,
        usage: { input_tokens: call.input, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: call.output, reasoning_tokens: 0 }, user: null, annotations: call.annotations,
        started_at: new Date(Date.now() - call.daysAgo * 86_400_000).toISOString(),
      }));
    }
    await nav(page, 'Usage').click();
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    const byDay = page.getByTestId('usage-by-day');
    const byModel = page.getByTestId('usage-by-model');
    await byModel.waitFor();
    assert.equal(await byDay.getByTestId('column').count(), 30, 'a column per day of the last 30');
    assert.equal(await byModel.getByTestId('bar').first().locator('p').first().textContent(), 'gpt-4.1', 'the costliest model first');
    assert.equal(await byModel.getByTestId('bar').count(), 2);
    await page.getByText(/in 3 requests$/).waitFor();
    await page.getByRole('cell', { name: '21,000' }).waitFor();
    await shoot(page, 'usage');

    // One room: its one call. Another provider: none. Back to OpenAI: all three.
    await page.getByLabel('Room').fill('lab');
    await page.getByText(/in 1 request$/).waitFor();
    assert.equal(await byModel.getByTestId('bar').first().locator('p').first().textContent(), 'gpt-4.1');
    await page.getByLabel('Room').fill('');
    await page.getByRole('combobox', { name: 'Provider' }).click();
    await page.getByRole('option', { name: 'Anthropic' }).click();
    await page.getByText('No usage in this range for this provider and room.').waitFor();
    await page.getByRole('combobox', { name: 'Provider' }).click();
    await page.getByRole('option', { name: 'OpenAI' }).click();
    await page.getByText(/in 3 requests$/).waitFor();

    // Today only: one model, one column.
    const today = new Date().toISOString().slice(0, 10);
    await page.getByLabel('From').fill(today);
    await page.getByText(/in 1 request$/).waitFor();
    assert.equal(await byDay.getByTestId('column').count(), 1);
    assert.equal(await byModel.getByTestId('bar').count(), 1);

    // The debits show on the billing page, newest first.
    await nav(page, 'Billing').click();
    await page.getByRole('cell', { name: 'usage debit' }).first().waitFor();
    await page.getByTestId('balance').getByText(/^\$4\.98/).waitFor();
    const types = await page.getByTestId('list-scroller').locator('tbody tr td:nth-child(2)').allTextContents();
    assert.equal(types.length, 4);
    assert.equal(types.at(-1), 'credit purchase', 'the purchase is the oldest');
    await shoot(page, 'transactions');
    // The server's price list is on the same page.
    await page.getByTestId('price-list').getByRole('cell', { name: 'gpt-4o-mini', exact: true }).waitFor();

    // A call to a model the price list does not name stands out on the usage page.
    await service.ctx.db.transaction((tx) => priceUsage(service.ctx, tx, projectId, {
      request_id: '20000000-0000-4000-8000-000000000009', provider: 'openai', endpoint: '/v1/chat/completions', model: 'gpt-unlisted', usage_source: 'provider', requested_model: 'gpt-unlisted',
      request_bytes: 0, max_output_tokens: null, choices: 1, usage: { input_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 5, reasoning_tokens: 0 },
      user: null, annotations: {}, started_at: new Date().toISOString(),
    }));
    await nav(page, 'Usage').click();
    await page.getByTestId('usage-unpriced').getByText(/openai\/gpt-unlisted \(1 call\)/).waitFor();
  });

  test('the remaining pages: managed agents, members, OAuth clients, profile', async (t) => {
    if (!ready(t)) return;
    await settle(page);
    const agent = await call(service, 'POST', `/accounts/projects/${projectId}/agents`, { token: apiKey, json: { configuration: { version: 'v1', kind: 'ManagedAgent', metadata: { name: 'support-bot' } } } });
    assert.equal(agent.status, 201);
    await nav(page, 'Managed agents').click();
    await page.getByRole('link', { name: 'support-bot' }).waitFor();
    await shoot(page, 'agents');
    await page.getByRole('link', { name: 'support-bot' }).click();
    await page.getByRole('heading', { name: 'support-bot' }).waitFor();
    await shoot(page, 'agent');
    await nav(page, 'Members').click();
    await page.getByRole('cell', { name: ADMIN.email }).waitFor();
    await shoot(page, 'members');
    await nav(page, 'OAuth clients').click();
    await page.getByRole('link', { name: 'Launch app' }).waitFor();
    await shoot(page, 'oauth-clients');
    await page.getByRole('button', { name: 'Account menu' }).click();
    await page.getByRole('menuitem', { name: 'Profile' }).click();
    await page.getByRole('heading', { name: 'Profile' }).waitFor();
    await shoot(page, 'profile');
  });

  test('a member without rights does not see admin actions', async (t) => {
    if (!ready(t)) return;
    const member = await createUserWithToken(service, 'member');
    const added = await call(service, 'POST', `/accounts/projects/${projectId}/users`, { token: apiKey, json: { user_id: member.userId, roles: ['member'] } });
    assert.equal(added.status, 200);
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const view = await context.newPage();
    view.setDefaultTimeout(20_000);
    await view.goto(console$(`/p/${projectId}/rooms`));
    await signIn(view, member.email, 'correct horse battery staple');
    await view.getByRole('link', { name: 'lobby' }).waitFor();
    const entries = await view.getByRole('navigation', { name: 'Project' }).getByRole('link').allTextContents();
    assert.deepEqual(entries, ['Project', 'Rooms', 'Managed agents', 'Storage', 'Feeds']);
    // Sections with nothing to open for this member have no heading either.
    const projectNav = view.getByRole('navigation', { name: 'Project' });
    for (const [section, shown] of [['Rooms', 1], ['Integrations', 1], ['Access', 0], ['Billing', 0]] as const) {
      assert.equal(await projectNav.getByRole('heading', { name: section, exact: true }).count(), shown, section);
    }
    assert.equal(await view.getByRole('button', { name: 'New room' }).count(), 0);
    // The room's buttons come from what the API answers for it: a member with no role on its policy may not join it.
    const rights = view.waitForResponse((r) => r.url().includes('/rights/room/'));
    await view.getByRole('link', { name: 'lobby' }).click();
    assert.equal((await rights).status(), 200);
    await view.getByRole('heading', { name: 'lobby' }).waitFor();
    for (const name of ['Connect', 'Edit', 'Delete']) assert.equal(await view.getByRole('button', { name }).count(), 0, name);
    const lobby = (await call(service, 'GET', `/accounts/projects/${projectId}/rooms/lobby`, { token: apiKey })).body.id as string;
    const viewers = { subject: { type: 'userset', relation: 'member' }, roles: ['viewer'] };
    assert.equal((await call(service, 'POST', `/accounts/projects/${projectId}/policies/resources/room/${lobby}`, { token: apiKey, json: viewers })).status, 200);
    await view.reload();
    await view.getByRole('button', { name: 'Connect' }).waitFor();
    assert.equal(await view.getByRole('button', { name: 'Delete' }).count(), 0);
    assert.equal(await view.getByRole('button', { name: 'Edit' }).count(), 0);
    assert.equal((await call(service, 'DELETE', `/accounts/projects/${projectId}/policies/resources/room/${lobby}`, { token: apiKey, json: { subject: viewers.subject } })).status, 200);
    await nav(view, 'Storage').click();
    await view.getByRole('cell', { name: 'notes.txt' }).waitFor();
    assert.equal(await view.getByRole('button', { name: 'Upload a file' }).count(), 0);
    assert.equal(await view.getByRole('button', { name: 'Delete' }).count(), 0);
    await shoot(view, 'member-storage');
    // Feeds: a project-visible feed to read, nothing to change, publish or subscribe (until its policy says so).
    await nav(view, 'Feeds').click();
    await view.getByRole('link', { name: 'orders' }).waitFor();
    assert.equal(await view.getByRole('button', { name: 'New feed' }).count(), 0);
    await view.getByRole('link', { name: 'orders' }).click();
    await view.getByRole('heading', { name: 'Message schema' }).waitFor();
    for (const name of ['Publish a message', 'Edit', 'Delete']) assert.equal(await view.getByRole('button', { name }).count(), 0, name);
    assert.equal(await view.getByRole('heading', { name: 'Subscriptions' }).count(), 0);
    // The feed's policy makes every member a publisher: the page offers publishing, and still no more.
    const orders = (await call(service, 'GET', `/accounts/projects/${projectId}/feeds?filter=orders`, { token: apiKey })).body.feeds[0].id as string;
    const policy = `/accounts/projects/${projectId}/policies/resources/feed/${orders}`;
    const everyMember = { type: 'userset', relation: 'member' };
    assert.equal((await call(service, 'POST', policy, { token: apiKey, json: { subject: everyMember, roles: ['publisher'] } })).status, 200);
    await view.reload();
    await view.getByRole('button', { name: 'Publish a message' }).waitFor();
    await view.getByRole('heading', { name: 'Subscriptions' }).waitFor();
    for (const name of ['Edit', 'Delete', 'New subscription']) assert.equal(await view.getByRole('button', { name }).count(), 0, name);
    assert.equal((await call(service, 'DELETE', policy, { token: apiKey, json: { subject: everyMember } })).status, 200);
    await context.close();
  });

  test('sign-out ends the session: the next visit asks to sign in', async (t) => {
    if (!ready(t)) return;
    await page.getByRole('button', { name: 'Account menu' }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    await page.goto(console$(`/p/${projectId}`));
    await page.locator('#password-form').waitFor();
  });
});

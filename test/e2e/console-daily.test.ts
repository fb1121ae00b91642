// The console for daily work, in headless Chromium, as a project admin uses it: a colleague invited
// by email who joins through the development mailbox, then an invitation sent again and one
// revoked; a search that finds a room on another page; roles picked by what they allow; rooms picked
// from a list; the API's refusals in words under their fields; the project's next steps; a webhook
// test event; and the bugs a first user met (a click that did nothing, a glyph shown as a box, a
// blank page on reload, no favicon). The first run without a second password or consent page is in
// test/e2e/console.test.ts, which starts from an empty database.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test, type TestContext } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { devMailboxLink } from '../../src/modules/oauth/service.ts';
import { listOutbox } from '../../src/platform/mail/mailer.ts';
import { chromiumLaunchArgs, until } from '../support/chromium.ts';
import { chromiumPath, requireOrSkip } from '../support/env.ts';
import { linkIn } from '../support/oauth.ts';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../support/service.ts';

const ROOMS = 32;

describe('the console for daily work in Chromium', () => {
  let service: TestService;
  let tenant: Tenant;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  let receiver: { server: Server; url: string; bodies: string[] };
  const console$ = (path: string) => `${service.url}/console${path}`;
  const api = (method: string, path: string, json?: unknown) => call(service, method, `/accounts/projects/${tenant.projectId}${path}`, { token: tenant.apiKey, json });

  before(async () => {
    if (!chromiumPath) return;
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => {
        bodies.push(body);
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    receiver = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
    service = await startTestService('pglite', { ATRIUM_JOBS_POLL_MS: '100', ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    tenant = await createTenant(service, 'daily');
    for (let i = 0; i < ROOMS; i++) assert.equal((await api('POST', '/rooms', { name: `room-${String(i).padStart(2, '0')}` })).status, 201);
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumLaunchArgs });
    admin = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await admin.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(console$(`/p/${tenant.projectId}`));
    await signIn(page, tenant.email, tenant.password);
    await page.getByRole('heading', { name: 'Next steps' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    receiver?.server.close();
  });

  /** Chromium present, and no dialog left open by a step that failed before. */
  const ready = async (t: TestContext) => {
    if (!requireOrSkip(t, chromiumPath !== undefined, 'Chromium')) return false;
    for (let i = 0; i < 3 && (await page.getByRole('dialog').count()) > 0; i++) {
      await page.keyboard.press('Escape');
      await page.waitForTimeout(300);
    }
    return true;
  };
  const nav = (target: Page, name: string) => target.getByRole('navigation', { name: 'Project' }).getByRole('link', { name, exact: true });

  /** The sign-in page, then straight into the console: it is Atrium's own app, with no consent page. */
  async function signIn(target: Page, email: string, password: string) {
    await target.locator('#password-form').waitFor();
    await target.getByLabel('Email').fill(email);
    await target.getByLabel('Password').fill(password);
    await target.getByRole('button', { name: 'Sign in' }).click();
  }

  /** The message the form shows under a field: the error the input is described by (Mantine's). */
  async function fieldError(target: Page, label: string | RegExp): Promise<string> {
    const input = target.getByLabel(label);
    let message: string | null = null;
    await until(`${String(label)} shows an error`, async () => {
      const errorId = ((await input.getAttribute('aria-describedby')) ?? '').split(' ').find((id) => id.endsWith('-error'));
      const error = errorId ? target.locator(`[id="${errorId}"]`) : undefined;
      message = error && (await error.count()) > 0 ? await error.textContent() : null;
      return message !== null;
    });
    return message ?? '';
  }

  test('the project page says what to do next, and ticks off what is done', async (t) => {
    if (!(await ready(t))) return;
    const steps = page.getByTestId('next-step');
    await until('the steps know what is done', async () => (await steps.filter({ hasText: 'Create a room' }).getAttribute('data-done')) === 'true');
    for (const title of ['Create a room', 'Connect to a room', 'Create an API key', 'Register an OAuth client', 'Invite your team']) await steps.filter({ hasText: title }).waitFor();
    // The tenant has an API key and rooms, but no OAuth client and no colleague yet.
    assert.equal(await steps.filter({ hasText: 'Create an API key' }).getAttribute('data-done'), 'true');
    assert.equal(await steps.filter({ hasText: 'Register an OAuth client' }).getAttribute('data-done'), 'false');
    assert.equal(await steps.filter({ hasText: 'Invite your team' }).getAttribute('data-done'), 'false');
    assert.equal(await page.getByText('Settings {}').count(), 0);
    await page.getByText('No settings: a free-form JSON document').waitFor();
    await steps.filter({ hasText: 'Register an OAuth client' }).getByRole('link', { name: 'New OAuth client' }).click();
    await page.getByRole('heading', { name: 'OAuth clients' }).waitFor();
  });

  test('a search finds a room on another page: the filter goes to the server', async (t) => {
    if (!(await ready(t))) return;
    await nav(page, 'Rooms').click();
    await page.getByText(`${ROOMS} in all`).waitFor();
    assert.equal(await page.getByRole('link', { name: 'room-30' }).count(), 0, 'room-30 is not on the first page of 25');
    const searched = page.waitForRequest((request) => new URL(request.url()).searchParams.get('filter') === 'room-30');
    await page.getByLabel('Filter by name').fill('room-30');
    await searched;
    await page.getByRole('link', { name: 'room-30' }).waitFor();
    await page.getByText('1 in all').waitFor();
    assert.equal(await page.getByText('Nothing matches this filter.').count(), 0);
  });

  test('a colleague invited by email joins through the development mailbox and sees the project', async (t) => {
    if (!(await ready(t))) return;
    await nav(page, 'Members').click();
    await page.getByRole('button', { name: 'Add a member' }).click();
    await page.getByLabel(/^Email/).fill('ada@example.test');
    // Roles are chosen by what they allow, grouped by the part of the project they are about.
    await page.getByRole('combobox', { name: /^Roles/ }).click();
    const listbox = page.getByRole('listbox');
    for (const group of ['Project', 'Rooms', 'Access', 'Integrations', 'Billing']) await listbox.getByText(group, { exact: true }).waitFor();
    await page.getByRole('combobox', { name: /^Roles/ }).fill('room cr');
    const option = page.getByRole('option', { name: /room creator/ });
    await option.getByText('Creates rooms.').waitFor();
    await option.click();
    await page.getByRole('dialog').locator('h2').first().click();
    await page.getByRole('button', { name: 'Add or invite' }).click();
    await page.getByText('ada@example.test has no account yet: an invitation is on its way.').waitFor();
    const invitations = page.getByRole('row', { name: /ada@example\.test/ });
    await invitations.getByText('pending').waitFor();

    // Ada's browser: the development mailbox, the mail, its link, the invitation page.
    const ada = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const inbox = await ada.newPage();
    inbox.setDefaultTimeout(20_000);
    await inbox.goto(devMailboxLink(service.ctx.config));
    await inbox.getByRole('link', { name: 'Join daily project on Atrium' }).click();
    await inbox.locator('#mail-body').getByRole('link', { name: /\/invitation/ }).click();
    await inbox.getByRole('heading', { name: 'Join daily project' }).waitFor();
    await inbox.getByLabel('First name (optional)').fill('Ada');
    await inbox.getByLabel(/^Choose a password/).fill('a password for ada');
    await inbox.getByRole('button', { name: 'Join the project' }).click();
    await inbox.getByRole('heading', { name: 'You have joined' }).waitFor();
    await inbox.getByRole('link', { name: 'Open the Atrium console' }).click();
    await signIn(inbox, 'ada@example.test', 'a password for ada');
    await inbox.getByRole('heading', { name: 'daily project' }).waitFor();
    await ada.close();

    // Back in the admin's console: Ada is a member with the chosen roles; the invitation is gone.
    await page.reload();
    const row = page.getByRole('row', { name: /ada@example\.test/ });
    await row.getByText('room_creator').waitFor();
    await page.getByText('No invitations waiting.').waitFor();
    const member = (await api('GET', '/users?filter=ada')).body.users[0];
    assert.deepEqual([...member.roles].sort(), ['member', 'room_creator']);
  });

  test('an invitation sent again gets a new link (the old one stops working); a revoked one is gone', async (t) => {
    if (!(await ready(t))) return;
    await nav(page, 'Members').click();
    for (const email of ['grace@example.test', 'alan@example.test']) {
      await page.getByRole('button', { name: 'Add a member' }).click();
      await page.getByLabel(/^Email/).fill(email);
      await page.getByRole('button', { name: 'Add or invite' }).click();
      await page.getByRole('row', { name: new RegExp(email) }).getByText('pending').waitFor();
    }
    const firstLink = await linkMailedTo('grace@example.test');
    await page.getByRole('row', { name: /grace@example\.test/ }).getByRole('button', { name: 'Send again' }).click();
    await page.getByText('Sent again to grace@example.test').waitFor();
    await until('the second mail is in the outbox', async () => (await linkMailedTo('grace@example.test')) !== firstLink);
    const old = await admin.newPage();
    await old.goto(firstLink);
    await old.getByRole('heading', { name: 'This invitation cannot be used' }).waitFor();
    await old.goto(await linkMailedTo('grace@example.test'));
    await old.getByRole('heading', { name: 'Join daily project' }).waitFor();
    await old.close();

    await page.getByRole('row', { name: /alan@example\.test/ }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await until('the revoked invitation leaves the list', async () => (await page.getByRole('row', { name: /alan@example\.test/ }).count()) === 0);
    assert.deepEqual((await api('GET', '/invitations')).body.invitations.map((i: { email: string }) => i.email), ['grace@example.test']);
  });

  /** The link of the newest mail to `email` in the development outbox. */
  async function linkMailedTo(email: string): Promise<string> {
    const mail = (await listOutbox(service.ctx.db, 500)).find((m) => m.recipient === email);
    return mail ? linkIn(mail.textBody) : '';
  }

  test('rooms are chosen from a list that searches the server; a refusal shows under its field, in words', async (t) => {
    if (!(await ready(t))) return;
    await nav(page, 'Scheduled tasks').click();
    await page.getByRole('button', { name: 'New scheduled task' }).click();
    const room = page.getByRole('combobox', { name: /^Room/ });
    await room.click();
    await page.getByRole('option', { name: 'room-00', exact: true }).waitFor();
    await room.fill('31');
    await page.getByRole('option', { name: 'room-31', exact: true }).click();
    assert.equal(await room.inputValue(), 'room-31');
    await page.getByLabel(/^Schedule/).fill('0 6 * * *');
    await page.getByLabel(/^Queue/).fill('reports');
    await page.getByRole('button', { name: 'Create task' }).click();
    await page.getByRole('heading', { name: 'reports' }).waitFor();
    assert.equal((await api('GET', '/scheduled-tasks')).body.tasks[0].room_name, 'room-31');

    // A name the API refuses: its rule in words, under the field, no regular expression.
    await nav(page, 'Rooms').click();
    await page.getByRole('button', { name: 'New room' }).click();
    await page.getByLabel(/^Name/).fill('north/south');
    await page.getByRole('button', { name: 'Create room' }).click();
    assert.equal(await fieldError(page, /^Name/), 'name must not contain "/", "\\" or control characters');
    await page.keyboard.press('Escape');
  });

  test('a keys secret must be a JSON object of strings: said under the value, nothing stored', async (t) => {
    if (!(await ready(t))) return;
    await nav(page, 'Secrets').click();
    await page.getByRole('button', { name: 'New secret' }).click();
    await page.getByLabel(/^Name/).fill('openai');
    await page.getByLabel(/^Type/).fill('keys');
    await page.getByLabel(/^Value/).fill('sk-not-json');
    await page.getByRole('button', { name: 'Create secret' }).click();
    assert.match(await fieldError(page, /^Value/), /^A keys secret is a JSON object of strings/);
    assert.equal((await api('GET', '/secrets')).body.total, 0);
    await page.getByLabel(/^Value/).fill('{"OPENAI_API_KEY": "sk-1"}');
    await page.getByRole('button', { name: 'Create secret' }).click();
    await page.getByRole('heading', { name: 'openai' }).waitFor();
  });

  test('one click on "Create feed" right after editing the schema creates the feed', async (t) => {
    if (!(await ready(t))) return;
    await nav(page, 'Feeds').click();
    await page.getByRole('button', { name: 'New feed' }).click();
    await page.getByLabel(/^Name/).fill('orders');
    // Typed on one line and left by clicking the button: nothing may move under the pointer.
    await page.getByLabel(/^Message schema/).fill('{"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}, "status": {"type": "string"}}}');
    await page.getByRole('button', { name: 'Create feed' }).click();
    await page.getByRole('heading', { name: 'orders' }).waitFor({ timeout: 5_000 });
  });

  test('a webhook: the secret dialog says it is kept encrypted, its copy button draws an icon; "Send test event" delivers', async (t) => {
    if (!(await ready(t))) return;
    await nav(page, 'Webhooks').click();
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByLabel(/^Name/).fill('tester');
    await page.getByLabel(/^URL/).fill(`${receiver.url}/hook`);
    await page.getByRole('button', { name: 'Register webhook' }).click();
    const dialog = page.getByRole('dialog', { name: 'The webhook\'s signing secret' });
    await dialog.getByText('You will not see this again').waitFor();
    assert.match(await dialog.textContent() ?? '', /keeps it encrypted/);
    assert.doesNotMatch(await dialog.textContent() ?? '', /hash/);
    const copy = dialog.getByRole('button', { name: 'Copy Signing secret' });
    assert.equal(await copy.locator('svg').count(), 1, 'the copy button draws its icon');
    assert.equal((await copy.textContent())?.trim(), '', 'and holds no glyph of a font');
    await dialog.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('heading', { name: 'tester' }).waitFor();

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('A webhook.test event is on its way').waitFor();
    await until('the receiver got the test event', () => receiver.bodies.some((b) => b.includes('webhook.test')));
    // The test event's own row (the audit entry of sending it names webhook.test too, in its body).
    await page.getByTestId('delivery').getByRole('button', { name: /^succeeded webhook\.test / }).waitFor();
  });

  test('a reload shows the console opening, not a blank page; the tab has an icon', async (t) => {
    if (!(await ready(t))) return;
    const fresh = await admin.newPage();
    // The console's code held back: what the page shows meanwhile is the HTML's own.
    let release = () => {};
    const held = new Promise<void>((resolve) => { release = resolve; });
    await fresh.route(/\/console\/assets\/index-[^/]+\.js$/, async (route) => {
      await held;
      await route.continue();
    });
    // Not until DOMContentLoaded: that waits for the held module script.
    await fresh.goto(console$(`/p/${tenant.projectId}/rooms`), { waitUntil: 'commit' });
    await fresh.getByRole('status').getByText('Opening the Atrium console').waitFor({ timeout: 5_000 });
    assert.ok(await fresh.getByText('Opening the Atrium console').isVisible());
    const icon = await fresh.evaluate('document.querySelector("link[rel=icon]")?.href') as string | undefined;
    assert.ok(icon?.startsWith(`${service.url}/console/assets/`), `the icon is a file of the console: ${icon}`);
    const served = await fetch(icon!);
    assert.equal(served.status, 200);
    assert.match(served.headers.get('content-type') ?? '', /^image\/svg\+xml/);
    release();
    await fresh.getByRole('link', { name: 'room-00' }).waitFor();
    await fresh.close();
  });
});

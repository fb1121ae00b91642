// The web console's budgets (docs/benchmarks.md#web-console-budgets), in headless Chromium against
// the embedded quick start: how soon the first page is interactive, how many bytes its first load
// takes over the wire (counted by the browser, compressed as sent), and whether a page of 1,000 rooms
// renders and scrolls without a long task. The page is bound by
// the browser's main thread, so `npm test` runs this file alone, after the rest (test/run.ts): a
// test file beside it on the two cores would time that file, not the console. The figures are
// written to test-artifacts/console-budgets.json.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { chromiumLaunchArgs } from '../support/chromium.ts';
import { chromiumPath, requireOrSkip } from '../support/env.ts';
import { call, createUserWithToken, startTestService, type TestService } from '../support/service.ts';

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');
const BUDGET = { firstPageMs: 1500, firstPageWireBytes: 300 * 1024, longTaskMs: 200 };
const LOADS = 8;

describe('the web console\'s budgets in Chromium', () => {
  let service: TestService;
  let browser: Browser;
  let signedIn: BrowserContext;
  let owner: Awaited<ReturnType<typeof createUserWithToken>>;
  let projectId = '';
  const budgets: Record<string, number> = {};
  const roomsPage = () => `${service.url}/console/p/${projectId}/rooms`;

  before(async () => {
    if (!chromiumPath) return;
    mkdirSync(ARTIFACTS, { recursive: true });
    service = await startTestService('pglite');
    owner = await createUserWithToken(service, 'owner');
    const project = await call(service, 'POST', '/accounts/projects', { token: owner.token, json: { name: 'Budgets' } });
    assert.equal(project.status, 201, JSON.stringify(project.body));
    projectId = project.body.id;
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumLaunchArgs });
    // Signed in once, through the sign-in page (the console asks no consent); every later tab signs in silently.
    // This first tab stays open, as the console would be for someone who opens another: the new
    // tabs then share its renderer process. (With no tab of the console open, each new tab also
    // starts a renderer process, which here keeps both cores busy, mostly in the kernel: best of
    // eight 1.3–1.5 s instead of 0.9, docs/benchmarks.md.)
    signedIn = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const first = await signedIn.newPage();
    first.setDefaultTimeout(20_000);
    await first.goto(roomsPage());
    await first.locator('#password-form').waitFor();
    await first.getByLabel('Email').fill(owner.email);
    await first.getByLabel('Password').fill('correct horse battery staple');
    await first.getByRole('button', { name: 'Sign in' }).click();
    await first.getByText('No rooms yet.').waitFor();
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    if (Object.keys(budgets).length > 0) writeFileSync(join(ARTIFACTS, 'console-budgets.json'), `${JSON.stringify(budgets, null, 2)}\n`);
  });

  const ready = (t: TestContext) => requireOrSkip(t, chromiumPath !== undefined, 'Chromium');

  test('the first page is interactive within 1.5 s', async (t) => {
    if (!ready(t)) return;
    // A new tab each time: tokens are in memory only, so it signs in again, silently through the
    // browser's session, before the page shows. The budget holds the best load (the page's own
    // cost; the host's other tenants still vary it), and the median is recorded beside it.
    const times: number[] = [];
    for (let run = 0; run < LOADS; run++) {
      const fresh = await signedIn.newPage();
      const started = Date.now();
      await fresh.goto(roomsPage());
      await fresh.getByRole('main').getByRole('heading', { name: 'Rooms' }).waitFor();
      await fresh.getByText('No rooms yet.').waitFor();
      await fresh.getByLabel('Filter by name').fill('x');
      times.push(Date.now() - started);
      await fresh.close();
    }
    budgets.firstPageInteractiveMs = Math.min(...times);
    budgets.firstPageInteractiveMedianMs = times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
    assert.ok(budgets.firstPageInteractiveMs <= BUDGET.firstPageMs, `first page interactive in ${budgets.firstPageInteractiveMs} ms`);
  });

  test('the first page, from an empty cache, takes at most 300 KB over the wire', async (t) => {
    if (!ready(t)) return;
    // What the browser received, as sent (compressed, headers included), for every request of the
    // load: the page, its scripts and styles, the silent sign-in and the API calls. The cache is
    // off, as on a first visit.
    const fresh = await signedIn.newPage();
    const cdp = await signedIn.newCDPSession(fresh);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    const received = new Map<string, number>();
    const kinds = new Map<string, string>();
    cdp.on('Network.responseReceived', (event: { requestId: string; type: string; response: { headers: Record<string, string> } }) => {
      kinds.set(event.requestId, `${event.type}${event.response.headers['content-encoding'] ? ` (${event.response.headers['content-encoding']})` : ''}`);
    });
    cdp.on('Network.loadingFinished', (event: { requestId: string; encodedDataLength: number }) => {
      received.set(event.requestId, event.encodedDataLength);
    });
    await fresh.goto(roomsPage());
    await fresh.getByText('No rooms yet.').waitFor();
    await fresh.waitForLoadState('networkidle');
    await fresh.close();
    const total = [...received.values()].reduce((a, b) => a + b, 0);
    const byKind: Record<string, number> = {};
    for (const [id, bytes] of received) byKind[kinds.get(id) ?? 'other'] = (byKind[kinds.get(id) ?? 'other'] ?? 0) + bytes;
    budgets.firstPageWireBytes = total;
    budgets.firstPageRequests = received.size;
    t.diagnostic(`first page on the wire: ${total} bytes in ${received.size} requests, by kind ${JSON.stringify(byKind)}`);
    assert.ok(total <= BUDGET.firstPageWireBytes, `first page ${total} bytes on the wire`);
  });

  test('1,000 rooms render and scroll without a long task over 200 ms', async (t) => {
    if (!ready(t)) return;
    const names = Array.from({ length: 1000 }, (_, i) => `room-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 25) {
      await Promise.all(names.slice(i, i + 25).map(async (name) => {
        const created = await call(service, 'POST', `/accounts/projects/${projectId}/rooms`, { token: owner.token, json: { name } });
        assert.equal(created.status, 201, JSON.stringify(created.body));
      }));
    }
    const list = await signedIn.newPage();
    list.setDefaultTimeout(20_000);
    await list.addInitScript(`window.__longTasks = [];
      new PerformanceObserver((entries) => { for (const e of entries.getEntries()) window.__longTasks.push(e.duration); }).observe({ type: 'longtask' });`);
    await list.goto(roomsPage());
    await list.getByText('1000 in all').waitFor();
    await list.evaluate('window.__longTasks.length = 0');
    await list.getByRole('combobox', { name: 'Rows per page' }).click();
    await list.getByRole('option', { name: '1000' }).click();
    await list.getByRole('link', { name: 'room-0000' }).waitFor();
    const scroller = list.getByTestId('list-scroller');
    for (let step = 1; step <= 20; step++) {
      await scroller.evaluate((element, fraction) => { (element as { scrollTop: number; scrollHeight: number }).scrollTop = fraction * (element as { scrollHeight: number }).scrollHeight; }, step / 20);
      await list.waitForTimeout(50);
    }
    await list.getByRole('link', { name: 'room-0999' }).waitFor();
    const tasks = await list.evaluate('window.__longTasks.slice()') as number[];
    budgets.thousandRoomsLongestTaskMs = Math.round(Math.max(0, ...tasks));
    budgets.thousandRoomsLongTasks = tasks.length;
    await list.close();
    assert.ok(budgets.thousandRoomsLongestTaskMs <= BUDGET.longTaskMs, `longest task ${budgets.thousandRoomsLongestTaskMs} ms`);
  });
});

// Billing through the official TypeScript SDK (@meshagent/meshagent 0.39.9) on both engines —
// getPricing, getBalance, getRecentTransactions, setAutoRecharge, getCreditsCheckoutUrl,
// getCheckoutUrl, getSubscription, getUsage — and the local provider's checkout page in headless
// Chromium: a person pays with a declined test card (nothing is credited), then with a good one,
// lands on the application's success URL, and the wallet holds the credits once.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import type * as Sdk from '@meshagent/meshagent';
import { priceUsage, verifyLedger } from '../../src/modules/billing/service.ts';
import { chromiumLaunchArgs } from '../support/chromium.ts';
import { chromiumPath, requireOrSkip } from '../support/env.ts';
import { createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { LOCAL_PAYMENTS_ENV } from '../support/payments.ts';
import { eventually } from '../support/webhooks.ts';

const require = createRequire(import.meta.url);
const { Meshagent, RoomException } = require('@meshagent/meshagent') as typeof Sdk;

/** A confirmed local checkout: the page's form, as a browser would post it. */
async function pay(url: string, card = '4242424242424242'): Promise<Response> {
  return fetch(url, { method: 'POST', redirect: 'manual', body: new URLSearchParams({ action: 'confirm', card }) });
}

forEachEngine('official SDK: billing', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let sdk: InstanceType<typeof Meshagent>;

  before(async () => {
    service = await startTestService(engine, LOCAL_PAYMENTS_ENV);
    tenant = await createTenant(service, 'sdk-billing');
    sdk = new Meshagent({ baseUrl: service.url, token: tenant.apiKey });
  });
  after(() => service?.stop());

  test('pricing, balance, credits checkout, transactions, auto-recharge, subscription, usage', async () => {
    const pricing = await sdk.getPricing() as { currency: string; as_of: string; prices: { provider: string; model: string; input: number }[] };
    assert.equal(pricing.currency, 'USD');
    assert.match(pricing.as_of, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(pricing.prices.find((p) => p.provider === 'openai' && p.model === 'gpt-4o-mini')?.input, 0.15);

    assert.equal((await sdk.getBalance(tenant.projectId)).balance, 0);
    const url = await sdk.getCreditsCheckoutUrl(tenant.projectId, { successUrl: 'https://app.example/ok', cancelUrl: 'https://app.example/no', quantity: 7 });
    assert.equal((await pay(url)).status, 303);
    assert.equal((await pay(url)).status, 303);
    const balance = await sdk.getBalance(tenant.projectId);
    assert.equal(balance.balance, 7);
    assert.equal(balance.autoRechargePaused, false);
    const transactions = await sdk.getRecentTransactions(tenant.projectId);
    assert.equal(transactions.length, 1);
    assert.equal(transactions[0]!.amount, 7);
    assert.equal(transactions[0]!.referenceType, 'checkout');
    assert.match(transactions[0]!.description, /Credits: 7 × 1 USD/);

    await sdk.setAutoRecharge({ projectId: tenant.projectId, enabled: true, amount: 10, threshold: 2, monthlyBudget: 50 });
    const set = await sdk.getBalance(tenant.projectId);
    assert.deepEqual([set.autoRechargeAmount, set.autoRechargeThreshold, set.monthlyBudget, set.autoRechargedThisMonth], [10, 2, 50, 0]);
    await assert.rejects(sdk.setAutoRecharge({ projectId: tenant.projectId, enabled: true, amount: 10, threshold: 2, monthlyBudget: 5 }), (error: unknown) => {
      assert.ok(error instanceof RoomException);
      assert.match((error as Error).message, /Status code: 400/);
      return true;
    });

    const subscribe = await sdk.getCheckoutUrl(tenant.projectId, { successUrl: 'https://app.example/ok', cancelUrl: 'https://app.example/no' });
    assert.equal((await pay(subscribe)).status, 303);
    const subscription = await sdk.getSubscription(tenant.projectId) as { subscription: { status: string; monthly_credits: number } };
    assert.deepEqual([subscription.subscription.status, subscription.subscription.monthly_credits], ['active', 20]);

    // One priced call (gpt-4o-mini at the shipped prices: 1000 input, 500 output tokens).
    await service.ctx.db.transaction((tx) => priceUsage(service.ctx, tx, tenant.projectId, {
      request_id: '10000000-0000-4000-8000-000000000001', provider: 'openai', endpoint: '/v1/chat/completions', model: 'gpt-4o-mini', usage_source: 'provider', requested_model: null, request_bytes: 0, max_output_tokens: null, choices: 1,
      usage: { input_tokens: 1000, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 500, reasoning_tokens: 0 }, user: null, annotations: {}, started_at: new Date().toISOString(),
    }));
    const now = new Date();
    const usage = await sdk.getUsage(tenant.projectId, { start: new Date(now.getTime() - 3 * 86_400_000), end: new Date(now.getTime() + 1000), interval: 'day', report: 'model' } as never);
    assert.equal(usage.length, 4, 'four day buckets, one model');
    const today = usage.at(-1) as { model: string; cost: number; quantities: Record<string, number> };
    // 1000 × 0.15 + 500 × 0.60 per million = 0.00045 USD.
    assert.deepEqual([today.model, today.cost, today.quantities.input, today.quantities.output], ['gpt-4o-mini', 0.00045, 1000, 500]);
    assert.equal((await sdk.getBalance(tenant.projectId)).balance, 27 - 0.00045);
    assert.deepEqual([...await verifyLedger(service.ctx.db, tenant.projectId)], []);
  });
});

describe('local checkout page in Chromium', () => {
  let service: TestService | undefined;
  let browser: Browser | undefined;
  let app: Server;
  let appUrl: string;

  before(async () => {
    if (!chromiumPath) return;
    app = createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(`<h1 id="landed">${req.url}</h1>`));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    service = await startTestService('pglite');
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumLaunchArgs });
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
    app?.close();
  });

  test('a declined test card credits nothing; a good one pays once and returns to the success URL', async (t) => {
    if (!requireOrSkip(t, chromiumPath !== undefined, 'Chromium')) return;
    const tenant = await createTenant(service!, 'browser-billing');
    const sdk = new Meshagent({ baseUrl: service!.url, token: tenant.apiKey });
    const url = await sdk.getCreditsCheckoutUrl(tenant.projectId, { successUrl: `${appUrl}/paid`, cancelUrl: `${appUrl}/canceled`, quantity: 3 });
    const page = await (await browser!.newContext()).newPage();
    await page.goto(url);
    assert.equal(await page.textContent('#amount'), 'Total: 3 USD');
    await page.getByLabel(/ending 0002/).check();
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForSelector('#message');
    assert.match(await page.textContent('#message') ?? '', /declined/);
    assert.equal((await sdk.getBalance(tenant.projectId)).balance, 0);

    await page.getByLabel(/ending 4242/).check();
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForSelector('#landed');
    assert.equal(new URL(page.url()).pathname, '/paid');
    assert.equal((await sdk.getBalance(tenant.projectId)).balance, 3);
    // Back to the page: it is completed, and cannot be paid again.
    await page.goto(url);
    assert.match(await page.textContent('#status') ?? '', /completed/);
    assert.equal((await sdk.getBalance(tenant.projectId)).balance, 3);

    const other = await sdk.getCreditsCheckoutUrl(tenant.projectId, { successUrl: `${appUrl}/paid`, cancelUrl: `${appUrl}/canceled`, quantity: 1 });
    await page.goto(other);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForSelector('#landed');
    assert.equal(new URL(page.url()).pathname, '/canceled');
    await eventually(async () => (await sdk.getRecentTransactions(tenant.projectId)).length === 1);
  });
});

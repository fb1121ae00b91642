// Billing and usage on both engines: the ledger (idempotent entries, reversals, the wallet always
// equal to the ledger's sum — checked after every test), the public price list, each LLM proxy
// call priced once into a usage debit (OpenAI and Anthropic SDKs against the fake upstream, amounts
// computed by hand), admission (402 in each provider's shape, x-should-retry: false; 50 parallel
// calls on a small balance), auto-recharge (threshold, monthly budget, pause after failures), the
// local checkout (credits once however often it is confirmed), roles, validation, and the usage
// report's buckets checked against hand-computed expectations.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { adjust, priceSessions, priceUsage, priceUsages, reverse, verifyLedger, type CallUsage } from '../../src/modules/billing/service.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/llm-upstream.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { LOCAL_PAYMENTS_ENV } from '../support/payments.ts';
import { eventually } from '../support/webhooks.ts';

/** Prices chosen so that costs are easy to compute by hand (micros per token = the per-million price). */
const PRICES = {
  currency: 'USD',
  as_of: '2026-01-01',
  source: 'test prices',
  llm_proxy_surcharge_rate: '0.1',
  prices: [
    { provider: 'openai', model: 'fake-chat', input: '10', cached_input: '5', output: '20', request: '100' },
    { provider: 'anthropic', model: 'fake-chat', input: '10', cached_input: '5', cache_write: '12.5', output: '20', request: '100' },
    { provider: 'openai', model: 'model-a', effective_from: '2025-01-01', input: '1000000', output: '2000000' },
    { provider: 'openai', model: 'model-b*', input: '3000000' },
    // Room sessions: 0.50 USD a minute (prices are per million units: 500,000 per million minutes).
    // Agent sessions have no price.
    { provider: 'atrium', model: 'room-session', session_minute: '500000' },
  ],
};
// OpenAI fake call: 8 input, 3 cached, 5 output + 2 reasoning (at the output price), 1 request:
// 80 + 15 + 100 + 40 + 100 = 335, surcharge 33.5 → 34 (half up): 369 micros.
const OPENAI_CALL_MICROS = 369;
// Anthropic fake call: 11 input, 3 cached, 5 cache writes (62.5 → 63), 7 output, 1 request:
// 110 + 15 + 63 + 140 + 100 = 428, surcharge 42.8 → 43: 471 micros.
const ANTHROPIC_CALL_MICROS = 471;
const RESERVE_MICROS = 500;

const micros = (n: number) => Math.round(n * 1_000_000);

forEachEngine('billing', (engine) => {
  let upstream: FakeUpstream;
  let service: TestService;
  let tenant: Tenant;
  let dir: string;

  before(async () => {
    upstream = await startFakeUpstream();
    dir = mkdtempSync(join(tmpdir(), 'atrium-prices-'));
    writeFileSync(join(dir, 'prices.json'), JSON.stringify(PRICES));
    service = await startTestService(engine, {
      ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`,
      ATRIUM_OPENAI_API_KEY: 'sk-operator',
      ATRIUM_ANTHROPIC_BASE_URL: upstream.url,
      ATRIUM_ANTHROPIC_API_KEY: 'sk-operator-anthropic',
      ATRIUM_BILLING_PRICES_FILE: join(dir, 'prices.json'),
      ATRIUM_BILLING_ENFORCED: 'true',
      ATRIUM_BILLING_CALL_RESERVE: String(RESERVE_MICROS),
      ...LOCAL_PAYMENTS_ENV,
    });
    tenant = await createTenant(service, 'billing');
  });
  after(async () => {
    await service?.stop();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    assert.deepEqual([...await verifyLedger(service.ctx.db)], [], 'every wallet equals its ledger\'s sum, and its reservations');
  });

  const base = (t: Tenant) => `/accounts/projects/${t.projectId}`;
  const balanceOf = async (t: Tenant) => (await call(service, 'GET', `${base(t)}/balance`, { token: t.apiKey })).body;
  const transactionsOf = async (t: Tenant) => (await call(service, 'GET', `${base(t)}/transactions?limit=1000`, { token: t.apiKey })).body.transactions as any[];
  const openai = (t: Tenant) => new OpenAI({ apiKey: t.apiKey, baseURL: `${service.url}/openai/v1`, maxRetries: 0 });
  const anthropic = (t: Tenant) => new Anthropic({ apiKey: t.apiKey, baseURL: `${service.url}/anthropic`, maxRetries: 0 });
  const credit = (t: Tenant, amount: number, key: string) => adjust(service.ctx, t.projectId, BigInt(micros(amount)), key, 'test credit');
  const debitOf = (t: Tenant, requestId: string | null) => eventually(async () => (await transactionsOf(t)).find((e) => e.reference === requestId));

  describe('ledger', () => {
    test('credits are idempotent by key; transactions newest first in the SDK\'s fields; reversals, never updates', async () => {
      const t = await createTenant(service, 'ledger');
      assert.equal((await balanceOf(t)).balance, 0);
      const first = await credit(t, 12.5, 'k1');
      assert.ok(first);
      assert.equal(await credit(t, 12.5, 'k1'), undefined, 'the same key again changes nothing');
      await credit(t, 0.000001, 'k2');
      const balance = await balanceOf(t);
      assert.equal(balance.balance, 12.500001);
      assert.equal(balance.currency, 'USD');
      const entries = await transactionsOf(t);
      assert.deepEqual(entries.map((e) => e.amount), [0.000001, 12.5]);
      for (const key of ['id', 'amount', 'reference', 'reference_type', 'description', 'created_at']) assert.ok(key in entries[0], key);
      await reverse(service.ctx, t.projectId, first.id, 'mistake');
      await reverse(service.ctx, t.projectId, first.id, 'mistake again');
      const after = await transactionsOf(t);
      assert.equal(after.length, 3, 'one reversal, however often asked');
      assert.deepEqual([after[0].type, after[0].amount, after[0].reference, after[0].balance_after], ['reversal', -12.5, first.id, 0.000001]);
      assert.equal((await balanceOf(t)).balance, 0.000001);
      // The database refuses to change an entry, whoever asks.
      await assert.rejects(service.ctx.db.execute(sql`update billing_ledger set amount_micros = 0 where id = ${first.id}::uuid`), (error: Error) => /append-only/.test(String((error.cause as Error | undefined)?.message ?? error.message)));
      assert.equal((await transactionsOf(t)).find((e) => e.id === first.id).amount, 12.5);
    });
  });

  test('GET /pricing needs no credential and lists the price file', async () => {
    const { status, body } = await call(service, 'GET', '/pricing');
    assert.equal(status, 200);
    assert.equal(body.currency, 'USD');
    assert.equal(body.as_of, '2026-01-01');
    assert.equal(body.llm_proxy_surcharge_rate, 0.1);
    const fake = body.prices.find((p: any) => p.provider === 'anthropic' && p.model === 'fake-chat');
    assert.deepEqual([fake.input, fake.cached_input, fake.cache_write, fake.output, fake.request], [10, 5, 12.5, 20, 100]);
  });

  describe('pricing LLM calls', () => {
    test('each OpenAI and Anthropic call becomes one usage debit, priced by hand; a replay changes nothing', async () => {
      await credit(tenant, 1, 'start');
      const { response } = await openai(tenant).chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      const requestId = response.headers.get('atrium-request-id');
      const debit = await debitOf(tenant, requestId);
      assert.equal(debit.amount, -OPENAI_CALL_MICROS / 1e6);
      assert.equal(debit.type, 'usage_debit');
      assert.equal(debit.reference_type, 'llm_request');
      assert.match(debit.description, /openai fake-chat: 8 input, 3 cached input, 5 output, 2 reasoning, 1 request/);

      const streamed = await anthropic(tenant).messages.create({ model: 'fake-chat', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      for await (const _event of streamed.data) { /* drain */ }
      const aDebit = await debitOf(tenant, streamed.response.headers.get('atrium-request-id'));
      assert.equal(aDebit.amount, -ANTHROPIC_CALL_MICROS / 1e6);

      const before = await balanceOf(tenant);
      assert.equal(before.balance, (1_000_000 - OPENAI_CALL_MICROS - ANTHROPIC_CALL_MICROS) / 1e6);
      assert.equal(before.reserved, 0, 'the reservations were released when the calls were priced');
      // The same usage record again (a replayed event or job): nothing changes.
      const replay: CallUsage = {
        request_id: requestId!, provider: 'openai', endpoint: '/v1/chat/completions', model: 'fake-chat', usage_source: 'provider', requested_model: null, request_bytes: 0, max_output_tokens: null, choices: 1,
        usage: { input_tokens: 8, cached_input_tokens: 3, cache_write_tokens: 0, output_tokens: 7, reasoning_tokens: 2 }, user: null, annotations: {}, started_at: new Date().toISOString(),
      };
      assert.equal(await service.ctx.db.transaction((tx) => priceUsage(service.ctx, tx, tenant.projectId, replay)), false);
      assert.equal((await balanceOf(tenant)).balance, before.balance);
      assert.equal((await transactionsOf(tenant)).filter((e) => e.reference === requestId).length, 1);
    });
  });

  describe('pricing room sessions', () => {
    test('an ended session becomes one usage debit by the minute, rounded up, in the usage report under its room; without a price, nothing', async () => {
      const t = await createTenant(service, 'sessions-priced');
      const key = await call(service, 'POST', `${base(t)}/api-keys`, { token: t.apiKey, json: { name: 'room server', roles: ['room_server'] } });
      const report = (path: string, json?: object) => call(service, 'POST', `${base(t)}${path}`, { token: key.body.value, json: json ?? {} });
      const start = async (json: object) => (await report('/sessions', json)).body as { id: string };
      const room = await start({ room_name: 'lobby' });
      const agent = await start({ room_name: 'lobby', agent_name: 'helper' });
      const running = await start({ room_name: 'lobby' });
      // Ran 90 s: two minutes, rounded up.
      await service.ctx.db.execute(sql`update room_sessions set started_at = now() - interval '90 seconds' where id in (${room.id}::uuid, ${agent.id}::uuid)`);
      assert.equal((await report(`/sessions/${room.id}/end`)).status, 200);
      assert.equal((await report(`/sessions/${agent.id}/end`)).status, 200);

      const debit = await debitOf(t, room.id);
      assert.equal(debit.amount, -1, '2 minutes at 0.50');
      assert.equal(debit.type, 'usage_debit');
      assert.equal(debit.reference_type, 'room_session');
      assert.match(debit.description, /^room session in lobby: 2 session minutes$/);
      const usage = await call(service, 'GET', `${base(t)}/usage?start=${new Date(Date.now() - 86_400_000).toISOString()}&interval=day&report=room,provider,model`, { token: t.apiKey });
      assert.equal(usage.status, 200, JSON.stringify(usage.body));
      const rows = (usage.body.usage as any[]).filter((r) => r.cost !== 0);
      assert.deepEqual(rows.map((r) => [r.room, r.provider, r.model, r.quantities, r.costs, r.cost]), [['lobby', 'atrium', 'room-session', { session_minute: 2 }, { session_minute: 1 }, 1]]);

      // Once only; a running session and an agent session without a price are not debited.
      const again = await service.ctx.db.transaction((tx) => priceSessions(service.ctx, tx, [room, agent, running].map((s) => ({ projectId: t.projectId, sessionId: s.id }))));
      assert.deepEqual([...again], []);
      const transactions = await transactionsOf(t);
      assert.deepEqual(transactions.filter((e) => e.reference_type === 'room_session').map((e) => e.reference), [room.id]);
      assert.equal((await balanceOf(t)).balance, -1);
    });
  });

  describe('admission', () => {
    test('at or below zero: 402 in each provider\'s shape with x-should-retry: false; nothing goes upstream', async () => {
      const t = await createTenant(service, 'broke');
      const sent = upstream.requests.length;
      await assert.rejects(openai(t).chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'Hi' }] }), (error: any) => {
        assert.equal(error.status, 402);
        assert.equal(error.type, 'insufficient_quota');
        assert.equal(error.code, 'insufficient_balance');
        assert.equal(error.headers.get('x-should-retry'), 'false');
        return true;
      });
      await assert.rejects(anthropic(t).messages.create({ model: 'fake-chat', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }), (error: any) => {
        assert.equal(error.status, 402);
        assert.equal(error.error?.error?.type, 'billing_error');
        assert.equal(error.headers.get('x-should-retry'), 'false');
        return true;
      });
      assert.equal(upstream.requests.length, sent);
      // A debt (balance below zero) is refused too.
      await adjust(service.ctx, t.projectId, -1n, 'debt', 'debt');
      const { status } = await call(service, 'POST', '/openai/v1/chat/completions', { token: t.apiKey, json: { model: 'fake-chat', messages: [] } });
      assert.equal(status, 402);
    });

    test('50 parallel calls on a small balance overspend by at most one call\'s reservation', async () => {
      const t = await createTenant(service, 'race');
      await credit(t, 0.001, 'small');
      const client = openai(t);
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => client.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'Hi' }] })));
      const ok = results.filter((r) => r.status === 'fulfilled').length;
      const refused = results.filter((r) => r.status === 'rejected' && (r.reason as { status?: number }).status === 402).length;
      assert.equal(ok + refused, 50, 'every call either ran or was refused with 402');
      assert.ok(ok >= 1 && refused >= 1, `${ok} ran, ${refused} refused`);
      await eventually(async () => (await transactionsOf(t)).filter((e) => e.type === 'usage_debit').length === ok);
      const balance = await balanceOf(t);
      assert.equal(balance.balance, (1000 - ok * OPENAI_CALL_MICROS) / 1e6);
      assert.ok(balance.balance * 1e6 > -RESERVE_MICROS, `overspent by at most one reservation (balance ${balance.balance})`);
      assert.equal(balance.reserved, 0);
    });
  });

  describe('checkout and auto-recharge', () => {
    const post = (url: string, form: Record<string, string>) => fetch(url, { method: 'POST', redirect: 'manual', body: new URLSearchParams(form) });

    test('credits: the local checkout credits once, however often it is confirmed; cancel credits nothing', async () => {
      const t = await createTenant(service, 'buyer');
      const { status, body } = await call(service, 'POST', `${base(t)}/credits`, { token: t.apiKey, json: { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no', quantity: 5 } });
      assert.equal(status, 200);
      assert.ok(body.checkout_url.startsWith(`${service.url}/billing/checkout/`));
      const page = await fetch(body.checkout_url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /5 × 1 USD of credits/);
      const declined = await post(body.checkout_url, { action: 'confirm', card: '4000000000000002' });
      assert.equal(declined.status, 402);
      assert.match(await declined.text(), /declined/);
      assert.equal((await balanceOf(t)).balance, 0);
      const confirmed = await Promise.all([1, 2, 3].map(() => post(body.checkout_url, { action: 'confirm', card: '4242424242424242' })));
      for (const r of confirmed) {
        assert.equal(r.status, 303);
        assert.equal(r.headers.get('location'), 'https://app.example/ok');
      }
      assert.equal((await balanceOf(t)).balance, 5);
      assert.equal((await transactionsOf(t)).length, 1);

      const other = await call(service, 'POST', `${base(t)}/credits`, { token: t.apiKey, json: { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no' } });
      const canceled = await post(other.body.checkout_url, { action: 'cancel' });
      assert.equal(canceled.headers.get('location'), 'https://app.example/no');
      assert.equal((await post(other.body.checkout_url, { action: 'confirm', card: '4242424242424242' })).headers.get('location'), 'https://app.example/no', 'a canceled checkout cannot be paid');
      assert.equal((await balanceOf(t)).balance, 5);

      const sub = await call(service, 'POST', `${base(t)}/subscription`, { token: t.apiKey, json: { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no' } });
      assert.equal((await post(sub.body.checkout_url, { action: 'confirm', card: '4242424242424242' })).status, 303);
      const info = await call(service, 'GET', `${base(t)}/subscription`, { token: t.apiKey });
      assert.equal(info.body.subscription.status, 'active');
      assert.equal(info.body.subscription.monthly_credits, 20);
      assert.match(info.body.payment_method, /4242/);
      assert.equal((await balanceOf(t)).balance, 25);
    });

    test('auto-recharge: below the threshold one recharge, within the monthly budget', async () => {
      const t = await createTenant(service, 'recharge');
      const checkout = await call(service, 'POST', `${base(t)}/credits`, { token: t.apiKey, json: { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no', quantity: 5 } });
      await post(checkout.body.checkout_url, { action: 'confirm', card: '4242424242424242' });
      const set = await call(service, 'POST', `${base(t)}/recharge`, { token: t.apiKey, json: { enabled: true, amount: 10, threshold: 8, monthly_budget: 25 } });
      assert.equal(set.status, 200);
      assert.deepEqual([set.body.auto_recharge_amount, set.body.auto_recharge_threshold, set.body.monthly_budget], [10, 8, 25]);
      await eventually(async () => (await balanceOf(t)).balance === 15);
      await adjust(service.ctx, t.projectId, BigInt(micros(-10)), 'spend1', 'spend');
      await eventually(async () => (await balanceOf(t)).balance === 15);
      await adjust(service.ctx, t.projectId, BigInt(micros(-10)), 'spend2', 'spend');
      // A third recharge would make 30 > 25 this month: none is attempted.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const balance = await balanceOf(t);
      assert.equal(balance.balance, 5);
      assert.equal(balance.auto_recharged_this_month, 20);
      assert.equal(balance.auto_recharge_paused, false);
      assert.ok(balance.last_recharge);
      const recharges = (await transactionsOf(t)).filter((e) => e.type === 'auto_recharge');
      assert.equal(recharges.length, 2);
    });

    test('auto-recharge: 20 debits at once below the threshold start one recharge, not one each', async () => {
      const t = await createTenant(service, 'recharge-race');
      const checkout = await call(service, 'POST', `${base(t)}/credits`, { token: t.apiKey, json: { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no', quantity: 20 } });
      await post(checkout.body.checkout_url, { action: 'confirm', card: '4242424242424242' });
      assert.equal((await call(service, 'POST', `${base(t)}/recharge`, { token: t.apiKey, json: { enabled: true, amount: 10, threshold: 15, monthly_budget: 100 } })).status, 200);
      // Each debit leaves the balance below the threshold, in 20 concurrent transactions.
      await Promise.all(Array.from({ length: 20 }, (_v, i) => adjust(service.ctx, t.projectId, BigInt(micros(-0.5)), `race-${i}`, 'spend')));
      await eventually(async () => (await balanceOf(t)).balance === 20);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const attempts = rowsOf<{ n: number }>(await service.ctx.db.execute(sql`select count(*)::int as n from billing_recharges where project_id = ${t.projectId}::uuid`));
      assert.equal(attempts[0]!.n, 1, 'one recharge attempt');
      assert.equal((await transactionsOf(t)).filter((e) => e.type === 'auto_recharge').length, 1);
      assert.equal((await balanceOf(t)).balance, 20, '20 − 10 + 10');
    });

    test('auto-recharge: repeated failures pause it, with the reason in the balance', async () => {
      const t = await createTenant(service, 'declined');
      const checkout = await call(service, 'POST', `${base(t)}/credits`, { token: t.apiKey, json: { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no', quantity: 1 } });
      // This test card pays the checkout; later charges are declined.
      await post(checkout.body.checkout_url, { action: 'confirm', card: '4000000000000341' });
      await call(service, 'POST', `${base(t)}/recharge`, { token: t.apiKey, json: { enabled: true, amount: 10, threshold: 5 } });
      const attempts = async (status?: string) => rowsOf<{ n: number }>(await service.ctx.db.execute(sql`
        select count(*)::int as n from billing_recharges where project_id = ${t.projectId}::uuid and (${status ?? null}::text is null or status = ${status ?? null}::text)`))[0]!.n;
      const failed = (n: number) => eventually(async () => await attempts('failed') === n);
      await failed(1);
      await adjust(service.ctx, t.projectId, -1n, 'again1', 'spend');
      await failed(2);
      assert.equal((await balanceOf(t)).auto_recharge_paused, false);
      await adjust(service.ctx, t.projectId, -1n, 'again2', 'spend');
      await failed(3);
      const balance = await eventually(async () => { const b = await balanceOf(t); return b.auto_recharge_paused ? b : undefined; });
      assert.match(balance.auto_recharge_paused_reason, /3 auto-recharges failed in a row; the last: The card was declined/);
      await adjust(service.ctx, t.projectId, -1n, 'again3', 'spend');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await attempts(), 3, 'paused: no more attempts');
      assert.equal(balance.balance, 1 - 0.000002);
    });

    test('validation: clear 400s naming the field', async () => {
      const t = tenant;
      const bad = async (path: string, json: unknown, field: RegExp) => {
        const { status, body } = await call(service, 'POST', `${base(t)}/${path}`, { token: t.apiKey, json });
        assert.equal(status, 400, JSON.stringify(json));
        assert.match(body.error.message, field);
      };
      await bad('recharge', { enabled: true, amount: 0, threshold: 1 }, /amount must be greater than zero/);
      await bad('recharge', { enabled: true, amount: 5, threshold: -1 }, /threshold/);
      await bad('recharge', { enabled: true, amount: 5, threshold: 1, monthly_budget: 4 }, /monthly_budget must be at least amount/);
      await bad('recharge', { enabled: true, amount: 0.0000001, threshold: 1 }, /amount must be a decimal number with at most 6 decimals/);
      await bad('credits', { success_url: 'ftp://x.example/ok', cancel_url: 'https://x.example/no' }, /success_url must be an absolute http\(s\) URL/);
      await bad('credits', { success_url: 'https://x.example/ok', cancel_url: '/relative' }, /cancel_url/);
      await bad('credits', { success_url: 'https://x.example/ok', cancel_url: 'https://x.example/no', quantity: 0 }, /quantity/);
      const usage = await call(service, 'GET', `${base(t)}/usage?report=colour`, { token: t.apiKey });
      assert.equal(usage.status, 400);
      assert.match(usage.body.error.message, /report must be/);
      assert.equal((await call(service, 'GET', `${base(t)}/usage?start=2026-02-01&end=2026-01-01`, { token: t.apiKey })).status, 400);
    });
  });

  test('roles: members see the balance; transactions, usage and checkout need usage_reporter or billing_manager', async () => {
    const member = await createUserWithToken(service, 'member');
    await call(service, 'POST', `${base(tenant)}/users`, { token: tenant.apiKey, json: { user_id: member.userId, roles: ['member'] } });
    assert.equal((await call(service, 'GET', `${base(tenant)}/balance`, { token: member.token })).status, 200);
    assert.equal((await call(service, 'GET', `${base(tenant)}/transactions`, { token: member.token })).status, 403);
    assert.equal((await call(service, 'GET', `${base(tenant)}/usage`, { token: member.token })).status, 403);
    assert.equal((await call(service, 'POST', `${base(tenant)}/credits`, { token: member.token, json: { success_url: 'https://a.example/', cancel_url: 'https://a.example/' } })).status, 403);
    const reporter = await createUserWithToken(service, 'reporter');
    await call(service, 'POST', `${base(tenant)}/users`, { token: tenant.apiKey, json: { user_id: reporter.userId, roles: ['usage_reporter'] } });
    assert.equal((await call(service, 'GET', `${base(tenant)}/transactions`, { token: reporter.token })).status, 200);
    assert.equal((await call(service, 'GET', `${base(tenant)}/usage`, { token: reporter.token })).status, 200);
    assert.equal((await call(service, 'POST', `${base(tenant)}/recharge`, { token: reporter.token, json: { enabled: false, amount: 1, threshold: 0 } })).status, 403);
    const manager = await createUserWithToken(service, 'manager');
    await call(service, 'POST', `${base(tenant)}/users`, { token: tenant.apiKey, json: { user_id: manager.userId, roles: ['billing_manager'] } });
    assert.equal((await call(service, 'POST', `${base(tenant)}/recharge`, { token: manager.token, json: { enabled: false, amount: 1, threshold: 0 } })).status, 200);
    assert.equal((await call(service, 'GET', `${base(tenant)}/transactions`, { token: manager.token })).status, 200);
  });

  describe('usage report', () => {
    const use = (t: Tenant, id: string, model: string, at: string, input: number, output: number, user: string | null = null, room?: string) => service.ctx.db.transaction((tx) => priceUsage(service.ctx, tx, t.projectId, {
      request_id: id, provider: 'openai', endpoint: '/v1/chat/completions', model, usage_source: 'provider', requested_model: null, request_bytes: 0, max_output_tokens: null, choices: 1,
      usage: { input_tokens: input, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: output, reasoning_tokens: 0 }, user, annotations: room ? { room } : {}, started_at: at,
    }));
    const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

    test('buckets by day, week and month (UTC calendar), grouped, filtered, empty buckets filled; costs by hand', async () => {
      const t = await createTenant(service, 'report');
      const u1 = (await createUserWithToken(service, 'u1')).userId;
      // model-a: 1 USD per input token, 2 per output token; model-b*: 3 per input; surcharge 10%; request not priced for them.
      await use(t, uuid(1), 'model-a', '2026-01-05T10:15:00Z', 1, 1, u1, 'lobby');   // Mon: 3 + 0.3
      await use(t, uuid(2), 'model-a', '2026-01-05T23:59:59Z', 2, 0);                // Mon: 2 + 0.2
      await use(t, uuid(3), 'model-b-1', '2026-01-07T00:00:00Z', 1, 0, u1);           // Wed: 3 + 0.3
      await use(t, uuid(4), 'model-a', '2026-01-12T08:00:00Z', 0, 1);                 // next Mon: 2 + 0.2
      await use(t, uuid(4), 'model-a', '2026-01-12T08:00:00Z', 0, 1);                 // replayed: ignored
      const get = async (query: string) => {
        const { status, body } = await call(service, 'GET', `${base(t)}/usage?${query}`, { token: t.apiKey });
        assert.equal(status, 200, JSON.stringify(body));
        return body.usage as any[];
      };
      const days = await get('start=2026-01-05T00:00:00Z&end=2026-01-08T00:00:00Z&interval=day&report=model');
      assert.deepEqual(days.map((r) => [r.start.slice(0, 10), r.model, r.cost, r.quantities.input ?? 0, r.quantities.output ?? 0, r.requests]), [
        ['2026-01-05', 'model-a', 5.5, 3, 1, 2],
        ['2026-01-05', 'model-b-1', 0, 0, 0, 0],
        ['2026-01-06', 'model-a', 0, 0, 0, 0],
        ['2026-01-06', 'model-b-1', 0, 0, 0, 0],
        ['2026-01-07', 'model-a', 0, 0, 0, 0],
        ['2026-01-07', 'model-b-1', 3.3, 1, 0, 1],
      ]);
      assert.equal(days[0].end, '2026-01-06T00:00:00.000Z');
      assert.equal(days[0].costs.llm_proxy_surcharge, 0.5);

      const partDay = await get('start=2026-01-05T11:00:00Z&end=2026-01-06T00:00:00Z&interval=day&report=model');
      assert.deepEqual(partDay.map((r) => [r.model, r.cost]), [['model-a', 2.2]], 'a range from mid-day counts from its first hour (the hourly rollup), not the whole day');

      const weeks = await get('start=2026-01-01T00:00:00Z&end=2026-01-19T00:00:00Z&interval=week');
      assert.deepEqual(weeks.map((r) => [r.start.slice(0, 10), r.end.slice(0, 10), r.cost]), [
        ['2025-12-29', '2026-01-05', 0], ['2026-01-05', '2026-01-12', 8.8], ['2026-01-12', '2026-01-19', 2.2],
      ]);
      const months = await get('start=2026-01-01T00:00:00Z&end=2026-03-01T00:00:00Z&interval=month&report=user');
      assert.deepEqual(months.map((r) => [r.start.slice(0, 7), r.user, r.cost]).sort(), [
        ['2026-01', null, 4.4], ['2026-01', u1, 6.6], ['2026-02', null, 0], ['2026-02', u1, 0],
      ].sort());
      const filtered = await get(`start=2026-01-05T00:00:00Z&end=2026-01-06T00:00:00Z&interval=hour&users=${u1}&room=lobby&report=usage_type`);
      const hour10 = filtered.filter((r) => r.start === '2026-01-05T10:00:00.000Z');
      assert.deepEqual(hour10.map((r) => [r.usage_type, r.cost]).sort(), [['input', 1], ['llm_proxy_surcharge', 0.3], ['output', 2], ['request', 0]]);
      assert.equal(filtered.length, 24 * 4, 'every hour of the day, for each usage type seen');
      assert.deepEqual((await get('start=2026-01-05T00:00:00Z&end=2026-01-07T00:00:00Z&model=nothing')).map((r) => r.cost), [0, 0], 'no rows: one empty row per bucket');
    });

    test('priced together (as a settlement prices its jobs) or one by one: the same ledger and report; a duplicate in the batch counts once', async () => {
      const [alone, together, other] = [await createTenant(service, 'alone'), await createTenant(service, 'together'), await createTenant(service, 'other')];
      const usage = (n: number, model: string, at: string, input: number, output: number): CallUsage => ({
        request_id: uuid(n), provider: 'openai', endpoint: '/v1/chat/completions', model, usage_source: 'provider', requested_model: null, request_bytes: 0, max_output_tokens: null, choices: 1,
        usage: { input_tokens: input, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: output, reasoning_tokens: 0 }, user: null, annotations: {}, started_at: at,
      });
      const calls = [usage(101, 'model-a', '2026-02-02T10:00:00Z', 1, 1), usage(102, 'model-a', '2026-02-02T10:30:00Z', 2, 0), usage(103, 'model-b-1', '2026-02-03T00:00:00Z', 1, 0)];
      for (const c of calls) await service.ctx.db.transaction((tx) => priceUsage(service.ctx, tx, alone.projectId, c));
      // The same calls under other request ids for two projects, interleaved, one of them twice.
      const renumbered = (c: CallUsage, offset: number) => ({ ...c, request_id: uuid(Number(c.request_id.slice(-12)) + offset) });
      const batch = calls.flatMap((c) => [{ projectId: together.projectId, call: renumbered(c, 100) }, { projectId: other.projectId, call: renumbered(c, 200) }]);
      const debited = await service.ctx.db.transaction((tx) => priceUsages(service.ctx, tx, [...batch, batch[0]!]));
      assert.equal(debited.size, 6);
      assert.equal((await service.ctx.db.transaction((tx) => priceUsages(service.ctx, tx, batch))).size, 0, 'a replayed batch changes nothing');

      const ledger = async (t: Tenant) => (await transactionsOf(t)).map((e) => [e.amount, e.description]);
      assert.deepEqual(await ledger(together), await ledger(alone));
      assert.deepEqual(await ledger(other), await ledger(alone));
      assert.equal((await balanceOf(together)).balance, (await balanceOf(alone)).balance);
      const report = async (t: Tenant, range = 'start=2026-02-01T00:00:00Z&end=2026-02-05T00:00:00Z&interval=day') => (await call(service, 'GET', `${base(t)}/usage?${range}&report=model`, { token: t.apiKey })).body.usage;
      assert.deepEqual(await report(together), await report(alone));
      assert.deepEqual(await report(other), await report(alone));
      // Calls 101 and 102 fall in one hourly row and one daily row: summed, two requests each.
      const hour = 'start=2026-02-02T10:00:00Z&end=2026-02-02T11:00:00Z&interval=hour';
      assert.deepEqual((await report(together, hour)).map((r: any) => [r.model, r.quantities.input, r.quantities.output, r.requests]), [['model-a', 3, 1, 2]]);
      assert.deepEqual(await report(together, hour), await report(alone, hour));
      assert.deepEqual((await report(together)).filter((r: any) => r.requests > 0).map((r: any) => [r.start.slice(0, 10), r.model, r.requests]), [['2026-02-02', 'model-a', 2], ['2026-02-03', 'model-b-1', 1]]);
    });
  });
});

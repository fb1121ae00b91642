// Money that cannot leak, on both engines, with the official OpenAI and Anthropic SDKs against the
// fake upstream and billing enforced: snapshot names priced as their model for each provider; an
// unpriced model refused before it goes upstream; fifty parallel calls at a low balance, with and
// without max_tokens, never overdrawing by more than one call's maximum cost; usage past the sizes
// the proxy once gave up at (a streamed event over 1 MiB, a plain answer over 16 MiB), the compact
// endpoint, and an answer without usage billed at its reservation; report dimensions a closed list;
// the ledger refusing UPDATE and DELETE; prices changed without a restart; a server without a
// payment provider taking no payments. The books hold after every test.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { adjust, verifyLedger } from '../../src/modules/billing/service.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/llm-upstream.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { eventually } from '../support/webhooks.ts';

/**
 * Prices per million tokens chosen so that a call is dear next to the balances below: input 0.001
 * and output 0.1 per token, ten output tokens at most per answer (the fake answers with seven).
 */
const MODEL = { input: '1000', output: '100000', max_output_tokens: 10 };
const PRICES = {
  currency: 'USD',
  prices: [
    { provider: 'openai', model: 'gpt-4o', ...MODEL },
    { provider: 'openai', model: 'fake-huge', ...MODEL },
    { provider: 'openai', model: 'fake-no-usage', ...MODEL },
    { provider: 'anthropic', model: 'claude-3-5-haiku', cache_write: '2000', ...MODEL },
  ],
};
// OpenAI's fake usage: 11 prompt tokens of which 3 cached (no cached price), 7 output: 8 × 1,000 + 7 × 100,000.
const OPENAI_CALL = 708_000;
// Anthropic's: 11 input, 3 cache reads (no price), 5 cache writes at 2,000, 7 output.
const ANTHROPIC_CALL = 11_000 + 10_000 + 700_000;
/** More than any one call below can cost: its body (under 300 bytes) at 1,000 and ten output tokens at 100,000. */
const ONE_CALL_AT_MOST = 300 * 1000 + 10 * 100_000;

const usd = (micros: number) => micros / 1e6;

forEachEngine('money that cannot leak', (engine) => {
  let upstream: FakeUpstream;
  let service: TestService;
  let dir: string;
  let pricesFile: string;

  before(async () => {
    upstream = await startFakeUpstream({ answeredModels: { 'gpt-4o': 'gpt-4o-2024-08-06', 'claude-3-5-haiku': 'claude-3-5-haiku-20241022' } });
    dir = mkdtempSync(join(tmpdir(), 'atrium-money-'));
    pricesFile = join(dir, 'prices.json');
    writeFileSync(pricesFile, JSON.stringify(PRICES));
    service = await startTestService(engine, {
      ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`,
      ATRIUM_OPENAI_API_KEY: 'sk-operator',
      ATRIUM_ANTHROPIC_BASE_URL: upstream.url,
      ATRIUM_ANTHROPIC_API_KEY: 'sk-operator-anthropic',
      ATRIUM_BILLING_PRICES_FILE: pricesFile,
      ATRIUM_BILLING_ENFORCED: 'true',
      ATRIUM_BILLING_CALL_RESERVE: '1',
      ATRIUM_BILLING_PRICING_DELAY_MS: '0',
      ATRIUM_PAYMENT_PROVIDER: 'none',
    });
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
  const debits = async (t: Tenant) => ((await call(service, 'GET', `${base(t)}/transactions?limit=1000`, { token: t.apiKey })).body.transactions as any[]).filter((e) => e.type === 'usage_debit');
  const debitOf = (t: Tenant, requestId: string | null) => eventually(async () => (await debits(t)).find((e) => e.reference === requestId));
  const openai = (t: Tenant) => new OpenAI({ apiKey: t.apiKey, baseURL: `${service.url}/openai/v1`, maxRetries: 0 });
  const anthropic = (t: Tenant) => new Anthropic({ apiKey: t.apiKey, baseURL: `${service.url}/anthropic`, maxRetries: 0 });
  const funded = async (label: string, amount: number) => {
    const t = await createTenant(service, label);
    await adjust(service.ctx, t.projectId, BigInt(Math.round(amount * 1e6)), 'start', 'test credit');
    return t;
  };

  test('snapshot names price as their model, for each provider: the answered name first, then the one asked for', async () => {
    const t = await funded('snapshots', 10);
    const plain = await openai(t).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    assert.equal(plain.data.model, 'gpt-4o-2024-08-06');
    const debit = await debitOf(t, plain.response.headers.get('atrium-request-id'));
    assert.equal(debit.amount, -usd(OPENAI_CALL));
    assert.match(debit.description, /^openai gpt-4o-2024-08-06 \(priced as gpt-4o\): 8 input, 3 cached input, 5 output, 2 reasoning, 1 request$/);

    const streamed = await anthropic(t).messages.create({ model: 'claude-3-5-haiku', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    for await (const _event of streamed.data) { /* drain */ }
    const aDebit = await debitOf(t, streamed.response.headers.get('atrium-request-id'));
    assert.equal(aDebit.amount, -usd(ANTHROPIC_CALL));
    assert.match(aDebit.description, /^anthropic claude-3-5-haiku-20241022 \(priced as claude-3-5-haiku\)/);
    assert.equal((await balanceOf(t)).reserved, 0);
  });

  test('an unpriced model is refused before it goes upstream, in each provider\'s shape, not to be retried', async () => {
    const t = await funded('unpriced', 10);
    const sent = upstream.requests.length;
    await assert.rejects(openai(t).chat.completions.create({ model: 'o1-pro', messages: [{ role: 'user', content: 'Hi' }] }), (error: any) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.code, 'unpriced_model');
      assert.equal(error.type, 'invalid_request_error');
      assert.match(error.message, /openai\/o1-pro has no price/);
      assert.equal(error.headers.get('x-should-retry'), 'false');
      return true;
    });
    await assert.rejects(anthropic(t).messages.create({ model: 'claude-unknown-9', max_tokens: 5, messages: [{ role: 'user', content: 'Hi' }] }), (error: any) => {
      assert.equal(error.error?.error?.type, 'invalid_request_error');
      assert.ok(error instanceof Anthropic.BadRequestError);
      return true;
    });
    assert.equal(upstream.requests.length, sent, 'nothing went upstream');
    // Endpoints that consume nothing need no price.
    assert.equal((await openai(t).models.retrieve('o1-pro')).id, 'o1-pro');
  });

  describe('fifty parallel calls at a low balance never overdraw by more than one call\'s maximum cost', () => {
    const cases: [string, (t: Tenant) => Promise<unknown>, number][] = [
      ['OpenAI, without max_tokens', (t) => openai(t).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }), OPENAI_CALL],
      ['OpenAI, with max_tokens', (t) => openai(t).chat.completions.create({ model: 'gpt-4o', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }), OPENAI_CALL],
      ['OpenAI streamed, without max_tokens', async (t) => {
        for await (const _chunk of await openai(t).chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'Hi' }] })) { /* drain */ }
      }, OPENAI_CALL],
      ['Anthropic, with max_tokens (it always has one)', (t) => anthropic(t).messages.create({ model: 'claude-3-5-haiku', max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }] }), ANTHROPIC_CALL],
    ];
    for (const [name, send, cost] of cases) {
      test(name, async () => {
        const start = 2;
        const t = await funded('race', start);
        const results = await Promise.allSettled(Array.from({ length: 50 }, () => send(t)));
        const ok = results.filter((r) => r.status === 'fulfilled').length;
        const refused = results.filter((r) => r.status === 'rejected' && (r.reason as { status?: number }).status === 402).length;
        assert.equal(ok + refused, 50, 'every call ran or was refused with 402');
        assert.ok(ok >= 1, 'the balance covered a first call');
        await eventually(async () => (await debits(t)).length === ok);
        const balance = await balanceOf(t);
        assert.equal(Math.round(balance.balance * 1e6), Math.round(start * 1e6) - ok * cost, 'each call that ran debited once, at its price');
        assert.ok(balance.balance * 1e6 > -ONE_CALL_AT_MOST, `${ok} ran: the balance ${balance.balance} is above minus one call's maximum cost`);
        assert.equal(balance.reserved, 0, 'every reservation was released');
      });
    }
  });

  describe('usage is billed whatever its size, on every metered endpoint', () => {
    test('a streamed Responses event over 1 MiB, and a plain answer over 16 MiB', async () => {
      const t = await funded('huge', 10);
      const { data: stream, response } = await openai(t).responses.create({ model: 'fake-huge', input: 'Hi', stream: true }).withResponse();
      let completed;
      for await (const event of stream) if (event.type === 'response.completed') completed = event;
      assert.ok(JSON.stringify(completed).length > 1024 * 1024, 'the terminal event is over 1 MiB');
      assert.equal((await debitOf(t, response.headers.get('atrium-request-id'))).amount, -usd(OPENAI_CALL));

      const plain = await openai(t).chat.completions.create({ model: 'fake-huge', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      assert.ok(plain.data.choices[0]!.message.content!.length > 16 * 1024 * 1024, 'the answer is over 16 MiB');
      assert.equal((await debitOf(t, plain.response.headers.get('atrium-request-id'))).amount, -usd(OPENAI_CALL));
    });

    test('/v1/responses/compact is metered', async () => {
      const t = await funded('compact', 10);
      const { data, response } = await openai(t).responses.compact({ model: 'gpt-4o', input: 'a long conversation' }).withResponse();
      assert.equal(data.object, 'response.compaction');
      assert.equal((await debitOf(t, response.headers.get('atrium-request-id'))).amount, -usd(OPENAI_CALL));
    });

    test('an answer without usage is billed what the call reserved, and flagged in the ledger and the report', async () => {
      const t = await funded('no-usage', 10);
      const { response } = await openai(t).chat.completions.create({ model: 'fake-no-usage', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      const debit = await debitOf(t, response.headers.get('atrium-request-id'));
      assert.match(debit.description, /reported no usage: billed what the call reserved/);
      // Its reservation: the ten output tokens the model may answer with, and the body's bytes as input.
      assert.ok(-debit.amount > usd(10 * 100_000) && -debit.amount < usd(ONE_CALL_AT_MOST), String(debit.amount));
      const report = (await call(service, 'GET', `${base(t)}/usage?interval=day&report=model,usage_type`, { token: t.apiKey })).body;
      const row = report.usage.find((r: any) => r.usage_type === 'unreported' && r.requests === 1);
      assert.deepEqual([row.model, row.estimated_requests, row.cost], ['fake-no-usage', 1, -debit.amount]);
    });
  });

  test('report dimensions are a closed list: names an object inherits are a 400, not a 500', async () => {
    const t = await funded('report', 0);
    for (const report of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'model,valueOf']) {
      const { status, body } = await call(service, 'GET', `${base(t)}/usage?report=${report}`, { token: t.apiKey });
      assert.equal(status, 400, report);
      assert.match(body.error.message, /report must be a comma-separated list of model, provider, user, room, usage_type/);
    }
  });

  test('the ledger refuses UPDATE and DELETE, whoever asks; its entries go only with their project', async () => {
    const t = await funded('append-only', 1);
    const refused = (error: Error) => /append-only/.test(String((error.cause as Error | undefined)?.message ?? error.message));
    await assert.rejects(service.ctx.db.execute(sql`update billing_ledger set amount_micros = 0 where project_id = ${t.projectId}::uuid`), refused);
    await assert.rejects(service.ctx.db.execute(sql`delete from billing_ledger where project_id = ${t.projectId}::uuid`), refused);
    assert.equal((await balanceOf(t)).balance, 1);
    await service.ctx.db.execute(sql`delete from projects where id = ${t.projectId}::uuid`);
    const [left] = rowsOf<{ n: number }>(await service.ctx.db.execute(sql`select count(*)::int as n from billing_ledger where project_id = ${t.projectId}::uuid`));
    assert.equal(left!.n, 0);
  });

  test('prices change without a restart: on SIGHUP, and when the file changes; a wrong file leaves the list in force', async () => {
    const priceOf = async () => (await call(service, 'GET', '/pricing')).body.prices.find((p: any) => p.provider === 'openai' && p.model === 'gpt-4o')?.input;
    const write = (input: string) => writeFileSync(pricesFile, JSON.stringify({ ...PRICES, prices: PRICES.prices.map((p) => (p.model === 'gpt-4o' ? { ...p, input } : p)) }));
    try {
      assert.equal(await priceOf(), 1000);
      write('2000');
      process.kill(process.pid, 'SIGHUP');
      await eventually(async () => await priceOf() === 2000);
      const t = await funded('repriced', 10);
      const { response } = await openai(t).chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
      assert.equal((await debitOf(t, response.headers.get('atrium-request-id'))).amount, -usd(OPENAI_CALL + 8 * 1000), 'priced at the new input price');

      writeFileSync(pricesFile, '{"prices": [{"provider": "openai"}]}');
      process.kill(process.pid, 'SIGHUP');
      assert.equal(await priceOf(), 2000, 'the list in force stays');
      // No signal: the file's change is seen within seconds.
      write('3000');
      await eventually(async () => await priceOf() === 3000, 10_000, 200);
    } finally {
      writeFileSync(pricesFile, JSON.stringify(PRICES));
      process.kill(process.pid, 'SIGHUP');
      await eventually(async () => await priceOf() === 1000);
    }
  });

  test('a server without a payment provider takes no payments: no checkout, no auto-recharge', async () => {
    const t = await funded('no-payments', 0);
    const urls = { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no' };
    for (const path of ['credits', 'subscription']) {
      const { status, body } = await call(service, 'POST', `${base(t)}/${path}`, { token: t.apiKey, json: urls });
      assert.deepEqual([status, body.error.code], [404, 'payments_unavailable'], path);
    }
    const on = await call(service, 'POST', `${base(t)}/recharge`, { token: t.apiKey, json: { enabled: true, amount: 10, threshold: 5 } });
    assert.deepEqual([on.status, on.body.error.code], [404, 'payments_unavailable']);
    const off = await call(service, 'POST', `${base(t)}/recharge`, { token: t.apiKey, json: { enabled: false, amount: 10, threshold: 5 } });
    assert.equal(off.status, 200);
  });
});

// Money and prices without a database: decimal text to micro-units and back, rounding half up,
// the pricing rule (exact name or alias, then a dated snapshot's base name, then the longest
// prefix, `*` as the fallback; effective dates), a call's lines (reasoning at the output price
// unless priced, the surcharge), the most a call can cost, the UTC calendar buckets, and a price
// file that is wrong stopping the start with the reason.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { costOf, fromMicros, toMicros } from '../../src/modules/billing/money.ts';
import { DEFAULT_PRICES_FILE, loadPriceList, maximumCost, priceCall, resolvePrice, undated, type PriceList } from '../../src/modules/billing/pricing/prices.ts';
import { bucketStart, nextBucket } from '../../src/modules/billing/service.ts';

const dir = mkdtempSync(join(tmpdir(), 'atrium-prices-unit-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

test('decimal text ⇄ micro-units, exactly; rounding half up', () => {
  assert.equal(toMicros('12.5'), 12_500_000n);
  assert.equal(toMicros(0.1), 100_000n);
  assert.equal(toMicros('0.000001'), 1n);
  assert.equal(toMicros(1e-6), 1n);
  assert.equal(toMicros('-3'), -3_000_000n);
  assert.equal(toMicros('1.5000000'), 1_500_000n, 'trailing zeros beyond 6 decimals are fine');
  for (const bad of ['0.0000001', '1e3', 'abc', '', '1.2.3', Number.NaN]) assert.equal(toMicros(bad as string), undefined, String(bad));
  assert.equal(fromMicros(1_234_567n), 1.234567);
  assert.equal(costOf(5n, 12_500_000n), 63n, '62.5 → 63');
  assert.equal(costOf(1n, 150_000n), 0n, '0.15 → 0');
  assert.equal(costOf(11n, 150_000n), 2n, '1.65 → 2');
});

test('the price of a model: exact name beats the longest prefix; effective dates choose the version', () => {
  const list = loadPriceList(file('p.json', {
    llm_proxy_surcharge_rate: 0.5,
    prices: [
      { provider: 'openai', model: 'gpt*', input: '1' },
      { provider: 'openai', model: 'gpt-4o*', input: '2' },
      { provider: 'openai', model: 'gpt-4o-mini', input: '3', effective_to: '2026-01-01' },
      { provider: 'openai', model: 'gpt-4o-mini', input: '4', effective_from: '2026-01-01' },
    ],
  }), 'USD');
  const input = (model: string, at: string) => resolvePrice(list, 'openai', model, Date.parse(at))?.price.perMillion.input;
  assert.equal(input('gpt-3', '2025-06-01'), 1_000_000n);
  assert.equal(input('gpt-4o-2024', '2025-06-01'), 2_000_000n);
  assert.equal(input('gpt-4o-mini', '2025-12-31T23:59:59Z'), 3_000_000n);
  assert.equal(input('gpt-4o-mini', '2026-01-01T00:00:00Z'), 4_000_000n);
  assert.equal(resolvePrice(list, 'anthropic', 'gpt-4o', Date.now()), undefined);
  assert.equal(resolvePrice(list, 'openai', null, Date.now()), undefined);

  const lines = priceCall(list, { provider: 'openai', model: 'x', aliases: [], maxOutputTokens: undefined, from: -Infinity, to: Infinity, perMillion: { input: 1_000_000n, output: 2_000_000n, reasoning: 5_000_000n } },
    { input_tokens: 10, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 7, reasoning_tokens: 3 });
  assert.deepEqual(lines.map((l) => [l.usageType, l.quantity, l.costMicros]), [
    ['input', 10n, 10n], ['output', 4n, 8n], ['reasoning', 3n, 15n], ['request', 1n, 0n], ['llm_proxy_surcharge', 0n, 17n],
  ]);
});

test('UTC calendar buckets: weeks start on Monday, months have their own lengths', () => {
  const at = new Date('2026-03-04T15:30:00Z'); // a Wednesday
  assert.equal(bucketStart(at, 'hour').toISOString(), '2026-03-04T15:00:00.000Z');
  assert.equal(bucketStart(at, 'day').toISOString(), '2026-03-04T00:00:00.000Z');
  assert.equal(bucketStart(at, 'week').toISOString(), '2026-03-02T00:00:00.000Z');
  assert.equal(bucketStart(new Date('2026-03-08T23:00:00Z'), 'week').toISOString(), '2026-03-02T00:00:00.000Z', 'Sunday belongs to the week before');
  assert.equal(bucketStart(at, 'month').toISOString(), '2026-03-01T00:00:00.000Z');
  assert.equal(nextBucket(new Date('2026-02-01T00:00:00Z'), 'month').toISOString(), '2026-03-01T00:00:00.000Z');
  assert.equal(nextBucket(new Date('2026-12-01T00:00:00Z'), 'month').toISOString(), '2027-01-01T00:00:00.000Z');
});

test('the shipped price file loads and says what its prices are; a wrong file stops with the reason', () => {
  const shipped = loadPriceList(DEFAULT_PRICES_FILE, 'USD');
  assert.match(shipped.source ?? '', /list prices/);
  assert.match(shipped.asOf ?? '', /^\d{4}-\d{2}-\d{2}$/);
  assert.equal(resolvePrice(shipped, 'anthropic', 'claude-sonnet-4-5-20250929', Date.now())?.price.perMillion.output, 15_000_000n);
  // Every model the shipped list prices by the token says how much output one answer can have.
  for (const price of shipped.prices) if (price.perMillion.output !== undefined) assert.ok(price.maxOutputTokens, `${price.provider}/${price.model} declares max_output_tokens`);
  assert.throws(() => loadPriceList(join(dir, 'missing.json'), 'USD'), /cannot be read/);
  assert.throws(() => loadPriceList(file('bad.json', '{not json'), 'USD'), /cannot be read/);
  assert.throws(() => loadPriceList(file('shape.json', { prices: [{ provider: 'openai', model: 'm', input: '-1' }] }), 'USD'), /invalid at \/prices\/0\/input/);
  assert.throws(() => loadPriceList(file('eur.json', { currency: 'EUR', prices: [] }), 'USD'), /in EUR, but ATRIUM_BILLING_CURRENCY is USD/);
});

test('the pricing rule: snapshot and dated names price as their model, for each provider; aliases; `*` is the fallback', () => {
  const list = loadPriceList(file('rule.json', {
    prices: [
      { provider: 'openai', model: 'gpt-4o', input: '2.5', max_output_tokens: 16384 },
      { provider: 'openai', model: 'gpt-4o-mini', input: '0.15' },
      { provider: 'openai', model: 'gpt-4', input: '30' },
      { provider: 'openai', model: 'gpt-4o-2024-05-13', input: '5' },
      { provider: 'anthropic', model: 'claude-3-5-haiku', aliases: ['claude-3-5-haiku-latest'], input: '0.8' },
      { provider: 'anthropic', model: 'claude-sonnet-4-5*', input: '3' },
    ],
  }), 'USD');
  const found = (provider: string, model: string) => {
    const hit = resolvePrice(list, provider, model, Date.now());
    return hit && [hit.price.model, hit.match];
  };
  assert.deepEqual(found('openai', 'gpt-4o'), ['gpt-4o', 'exact']);
  assert.deepEqual(found('openai', 'gpt-4o-2024-08-06'), ['gpt-4o', 'snapshot']);
  assert.deepEqual(found('openai', 'gpt-4o-mini-2024-07-18'), ['gpt-4o-mini', 'snapshot'], 'not gpt-4o: the whole base name');
  assert.deepEqual(found('openai', 'gpt-4o-2024-05-13'), ['gpt-4o-2024-05-13', 'exact'], 'a snapshot priced apart keeps its own price');
  assert.deepEqual(found('openai', 'gpt-4-0613'), ['gpt-4', 'snapshot'], 'the older four-digit snapshots');
  assert.deepEqual(found('anthropic', 'claude-3-5-haiku-20241022'), ['claude-3-5-haiku', 'snapshot']);
  assert.deepEqual(found('anthropic', 'claude-3-5-haiku-latest'), ['claude-3-5-haiku', 'exact']);
  assert.deepEqual(found('anthropic', 'claude-sonnet-4-5-20250929'), ['claude-sonnet-4-5*', 'prefix']);
  assert.equal(found('openai', 'o1-pro'), undefined, 'a model the list does not name has no price');
  assert.equal(found('openai', 'ft:gpt-4o-mini-2024-07-18:org::x'), undefined, 'a fine-tune is not its base model');
  assert.equal(undated('text-embedding-3-large'), undefined);

  const withFallback = loadPriceList(file('fallback.json', { prices: [{ provider: 'openai', model: '*', input: '100' }, { provider: 'openai', model: 'gpt-4o', input: '2.5' }] }), 'USD');
  assert.equal(resolvePrice(withFallback, 'openai', 'o1-pro', Date.now())?.price.model, '*');
  assert.equal(resolvePrice(withFallback, 'openai', 'gpt-4o-2024-08-06', Date.now())?.price.model, 'gpt-4o', 'the fallback comes last');
  assert.equal(resolvePrice(withFallback, 'anthropic', 'claude', Date.now()), undefined, 'a fallback is per provider');
});

test('the most a call can cost: every body byte an input token at the dearest input rate, the output allowed (capped by the model\'s) per answer', () => {
  const list: PriceList = loadPriceList(file('max.json', {
    llm_proxy_surcharge_rate: '0.1', default_max_output_tokens: 1000,
    prices: [
      { provider: 'anthropic', model: 'm', input: '1', cached_input: '0.1', cache_write: '2', output: '3', request: '5', max_output_tokens: 100 },
      { provider: 'anthropic', model: 'free-output', input: '1' },
    ],
  }), 'USD');
  const m = resolvePrice(list, 'anthropic', 'm', Date.now())!.price;
  // 50 bytes × 2 (cache writes are dearest) + 100 × 3 (the model's maximum) + 5 = 405, +10 % = 445.5 → 446 (half up: 40.5 → 41).
  assert.equal(maximumCost(list, m, { bodyBytes: 50, maxOutputTokens: undefined, choices: 1 }), 446n);
  assert.equal(maximumCost(list, m, { bodyBytes: 50, maxOutputTokens: 10_000, choices: 1 }), 446n, 'no more than the model can answer');
  // 100 + 10 × 3 × 4 answers + 5 = 225, + 22.5 → 23.
  assert.equal(maximumCost(list, m, { bodyBytes: 50, maxOutputTokens: 10, choices: 4 }), 248n);
  const free = resolvePrice(list, 'anthropic', 'free-output', Date.now())!.price;
  assert.equal(maximumCost(list, free, { bodyBytes: 7, maxOutputTokens: undefined, choices: 1 }), 8n, 'no output price: input only (7 + 0.7 → 1)');
});

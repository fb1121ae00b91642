// The price list: per provider, model and usage type, with effective dates, loaded from a JSON file
// the operator can replace (ATRIUM_BILLING_PRICES_FILE; the shipped default lists public list
// prices as of a date), plus the LLM proxy surcharge rate. Prices are per million units, held as
// integer micros per million. Pure: the rule that finds a model's price, a call's priced lines, and
// what a call can cost at most (its reservation) are worked out here without a database.
import { readFileSync } from 'node:fs';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { costOf, fromMicros, toMicros } from '../money.ts';

export const USAGE_TYPES = ['input', 'cached_input', 'cache_write', 'output', 'reasoning', 'request', 'session_minute'] as const;
export type UsageType = (typeof USAGE_TYPES)[number];
/** The usage type of the surcharge on top of priced usage. */
export const SURCHARGE = 'llm_proxy_surcharge';
/** The usage type of a call whose usage the provider never reported, billed at what it reserved. */
export const UNREPORTED = 'unreported';

/** The output a model may produce when its entry does not say (the largest of current models' limits). */
const DEFAULT_MAX_OUTPUT_TOKENS = 128_000;

const Decimal = Type.Union([Type.String({ pattern: '^\\d{1,12}(\\.\\d{1,6})?$', 'x-pattern-means': 'must be a decimal number with at most 6 decimals' }), Type.Number({ minimum: 0 })]);
const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}(T[0-9:.]+Z)?$', 'x-pattern-means': 'must be a date (2025-01-31) or a UTC time' });
const ModelName = Type.String({ minLength: 1, maxLength: 256 });
const PriceEntry = Type.Object({
  provider: Type.String({ minLength: 1, maxLength: 100 }),
  model: ModelName,
  aliases: Type.Optional(Type.Array(ModelName, { maxItems: 100 })),
  max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  effective_from: Type.Optional(Day),
  effective_to: Type.Optional(Day),
  ...Object.fromEntries(USAGE_TYPES.map((t) => [t, Type.Optional(Decimal)])),
});
const PriceFileSchema = Type.Object({
  currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', 'x-pattern-means': 'must be a three-letter currency code (USD)' })),
  as_of: Type.Optional(Type.String()),
  source: Type.Optional(Type.String()),
  unit: Type.Optional(Type.String()),
  llm_proxy_surcharge_rate: Type.Optional(Decimal),
  default_max_output_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000 })),
  prices: Type.Array(PriceEntry, { maxItems: 100_000 }),
});
type PriceFile = Static<typeof PriceFileSchema>;

export interface Price {
  provider: string;
  model: string;
  aliases: readonly string[];
  /** The most output tokens one answer of the model can have, if the entry says. */
  maxOutputTokens: number | undefined;
  from: number;
  to: number;
  /** Micros per million units, by usage type. */
  perMillion: Partial<Record<UsageType, bigint>>;
}

export interface PriceList {
  currency: string;
  asOf: string | undefined;
  source: string | undefined;
  /** Surcharge in parts per million of the priced cost. */
  surchargePpm: bigint;
  defaultMaxOutputTokens: number;
  prices: Price[];
}

export const DEFAULT_PRICES_FILE = new URL('./prices.default.json', import.meta.url);

/** Reads and checks a price file; throws with what is wrong (at boot a bad file stops the start; on a reload the old list stays). */
export function loadPriceList(path: string | URL, currency: string): PriceList {
  let file: PriceFile;
  try {
    file = JSON.parse(readFileSync(path, 'utf8')) as PriceFile;
  } catch (error) {
    throw new Error(`The price file ${String(path)} cannot be read: ${(error as Error).message}`);
  }
  const problem = Value.Errors(PriceFileSchema, file)[0];
  if (problem) throw new Error(`The price file ${String(path)} is invalid at ${problem.instancePath || '/'}: ${problem.message}`);
  if (file.currency && file.currency !== currency) throw new Error(`The price file ${String(path)} is in ${file.currency}, but ATRIUM_BILLING_CURRENCY is ${currency}`);
  const prices = file.prices.map((entry): Price => {
    const perMillion: Price['perMillion'] = {};
    for (const type of USAGE_TYPES) {
      const value = (entry as unknown as Record<string, string | number | undefined>)[type];
      if (value !== undefined) perMillion[type] = toMicros(value)!;
    }
    return {
      provider: entry.provider,
      model: entry.model,
      aliases: entry.aliases ?? [],
      maxOutputTokens: entry.max_output_tokens,
      from: entry.effective_from ? Date.parse(entry.effective_from) : -Infinity,
      to: entry.effective_to ? Date.parse(entry.effective_to) : Infinity,
      perMillion,
    };
  });
  const rate = toMicros(file.llm_proxy_surcharge_rate ?? 0)!;
  return {
    currency, asOf: file.as_of, source: file.source, surchargePpm: rate,
    defaultMaxOutputTokens: file.default_max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS, prices,
  };
}

/**
 * A provider's dated snapshot name without its date: OpenAI's `gpt-4o-2024-08-06` and older
 * `gpt-4-0613`, Anthropic's `claude-3-5-haiku-20241022`. Undefined for a name without one.
 */
export function undated(model: string): string | undefined {
  const match = /^(.+?)-(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/.exec(model);
  return match?.[1];
}

/** How a model's name found its price (docs/billing.md "The pricing rule"). */
export type Match = 'exact' | 'snapshot' | 'prefix';

/**
 * The price of a model at a time, by the pricing rule: an entry naming it (as `model` or among its
 * `aliases`); else, for a dated snapshot, an entry naming the name without its date; else the
 * entry whose `prefix*` is the longest that matches (`*` alone: the provider's fallback price).
 * Among entries that match alike, the one in effect that started last wins.
 */
export function resolvePrice(list: PriceList, provider: string, model: string | null | undefined, at: number): { price: Price; match: Match } | undefined {
  if (!model) return undefined;
  const base = undated(model);
  let best: Price | undefined;
  let bestScore = -1;
  for (const price of list.prices) {
    if (price.provider !== provider || at < price.from || at >= price.to) continue;
    const names = price.model === model || price.aliases.includes(model);
    const score = names ? Infinity
      : base !== undefined && (price.model === base || price.aliases.includes(base)) ? Number.MAX_SAFE_INTEGER
        : price.model.endsWith('*') && model.startsWith(price.model.slice(0, -1)) ? price.model.length : -1;
    if (score > bestScore || (score === bestScore && score >= 0 && best && price.from > best.from)) {
      best = price;
      bestScore = score;
    }
  }
  if (!best) return undefined;
  return { price: best, match: bestScore === Infinity ? 'exact' : bestScore === Number.MAX_SAFE_INTEGER ? 'snapshot' : 'prefix' };
}

export interface Quantities {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

export interface PricedLine {
  usageType: UsageType | typeof SURCHARGE | typeof UNREPORTED;
  quantity: bigint;
  costMicros: bigint;
}

const surchargeOf = (list: PriceList, total: bigint) => (total * list.surchargePpm + 500_000n) / 1_000_000n;

/**
 * The lines of one call: quantity and cost per usage type. Output tokens include reasoning; with a
 * reasoning price, reasoning tokens are priced at it and the rest of the output at the output
 * price, otherwise all output at the output price. Unpriced types cost 0. The surcharge is a line
 * of its own.
 */
export function priceCall(list: PriceList, price: Price | undefined, usage: Quantities): PricedLine[] {
  const reasoning = BigInt(Math.min(usage.reasoning_tokens, usage.output_tokens));
  const quantities: Record<UsageType, bigint> = {
    input: BigInt(usage.input_tokens),
    cached_input: BigInt(usage.cached_input_tokens),
    cache_write: BigInt(usage.cache_write_tokens),
    output: BigInt(usage.output_tokens) - reasoning,
    reasoning,
    request: 1n,
    session_minute: 0n,
  };
  const per = price?.perMillion ?? {};
  const lines: PricedLine[] = [];
  let total = 0n;
  for (const type of USAGE_TYPES) {
    const quantity = quantities[type];
    if (quantity === 0n) continue;
    const rate = type === 'reasoning' ? per.reasoning ?? per.output : per[type];
    const costMicros = rate === undefined ? 0n : costOf(quantity, rate);
    total += costMicros;
    lines.push({ usageType: type, quantity, costMicros });
  }
  const surcharge = surchargeOf(list, total);
  if (surcharge > 0n) lines.push({ usageType: SURCHARGE, quantity: 0n, costMicros: surcharge });
  return lines;
}

/** What bounds a call's cost before it runs. */
export interface CallLimits {
  /** Size of the request body: its input is at most one token per byte. */
  bodyBytes: number;
  /** The output the caller allowed per answer, if it said. */
  maxOutputTokens: number | undefined;
  /** Answers asked for. */
  choices: number;
}

const max = (...values: (bigint | undefined)[]) => values.reduce<bigint>((a, b) => (b !== undefined && b > a ? b : a), 0n);

/**
 * The most a call can cost at its price (what admission reserves): every byte of its body an input
 * token at the dearest input rate, and every answer the most output allowed — the caller's limit,
 * no more than the model's declared maximum — at the dearest output rate, plus the request and the
 * surcharge. Input the body only names (a previous response, a file id) is not bounded by it.
 */
export function maximumCost(list: PriceList, price: Price, limits: CallLimits): bigint {
  const per = price.perMillion;
  const modelMax = price.maxOutputTokens ?? list.defaultMaxOutputTokens;
  const perAnswer = limits.maxOutputTokens === undefined ? modelMax : Math.min(limits.maxOutputTokens, modelMax);
  const output = BigInt(perAnswer) * BigInt(Math.max(1, limits.choices));
  const total = costOf(BigInt(limits.bodyBytes), max(per.input, per.cached_input, per.cache_write))
    + costOf(output, max(per.output, per.reasoning))
    + costOf(1n, per.request ?? 0n);
  return total + surchargeOf(list, total);
}

/** Whose price room sessions have: provider `atrium`, model `room-session` or `agent-session`. */
export const SESSION_PROVIDER = 'atrium';
export const sessionModel = (kind: 'room' | 'agent') => `${kind}-session`;

/** Whether any price covers session minutes (without one, sessions are not priced at all). */
export function pricesSessions(list: PriceList): boolean {
  return list.prices.some((p) => p.provider === SESSION_PROVIDER && p.perMillion.session_minute !== undefined);
}

/** The price list as `GET /pricing` shows it (decimal numbers per million units). */
export function pricingView(list: PriceList) {
  return {
    currency: list.currency,
    as_of: list.asOf ?? null,
    source: list.source ?? null,
    unit: 'per 1,000,000 units (tokens; requests for `request`; minutes for `session_minute`)',
    llm_proxy_surcharge_rate: fromMicros(list.surchargePpm),
    default_max_output_tokens: list.defaultMaxOutputTokens,
    prices: list.prices.map((p) => ({
      provider: p.provider,
      model: p.model,
      aliases: [...p.aliases],
      max_output_tokens: p.maxOutputTokens ?? null,
      effective_from: Number.isFinite(p.from) ? new Date(p.from).toISOString() : null,
      effective_to: Number.isFinite(p.to) ? new Date(p.to).toISOString() : null,
      ...Object.fromEntries(Object.entries(p.perMillion).map(([type, micros]) => [type, fromMicros(micros)])),
    })),
  };
}

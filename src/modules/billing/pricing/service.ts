// Pricing: the price list of this server (reloaded when its file changes or on SIGHUP, without a
// restart), admission of LLM proxy calls against it, and settlement: each call or session priced
// once into a usage debit, its rollup lines and the release of its reservation.
import { unwatchFile, watchFile } from 'node:fs';
import type { AppContext } from '../../../context.ts';
import type { Db } from '../../../platform/db/engine.ts';
import { apiError } from '../../../platform/http/errors.ts';
import type { PaidCall } from '../../../platform/limits/admission.ts';
import { endedSessionSpans } from '../../sessions/service.ts';
import * as ledger from '../ledger/service.ts';
import { costOf } from '../money.ts';
import * as payments from '../payments/service.ts';
import { addToRollup, type RollupLine } from '../reports/service.ts';
import { DEFAULT_PRICES_FILE, loadPriceList, maximumCost, priceCall, resolvePrice, SESSION_PROVIDER, sessionModel, UNREPORTED, type PricedLine, type PriceList } from './prices.ts';
import type { CallUsage } from '../jobs.ts';

/** How often the price file's modification time is looked at. */
const WATCH_INTERVAL_MS = 2000;

/** The price list of one server: read at start (a bad file fails the start), read again when asked. */
export class PriceBook {
  #list: PriceList;
  readonly #ctx: AppContext;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#list = this.#read();
  }

  get list(): PriceList {
    return this.#list;
  }

  /** Reads the file again; a file that is wrong now is logged and the list in force stays. Whether it changed. */
  reload(): boolean {
    try {
      this.#list = this.#read();
      this.#ctx.log.info({ file: this.#file }, 'billing: the price list was reloaded');
      return true;
    } catch (error) {
      this.#ctx.log.error({ err: error }, 'billing: the price list was not reloaded; the one in force stays');
      return false;
    }
  }

  /** Reloads on SIGHUP, and when the operator's price file changes (looked at every 2 s); returns the way to stop. */
  watch(): () => void {
    const onHangup = () => this.reload();
    process.on('SIGHUP', onHangup);
    const file = this.#ctx.config.billing.pricesFile;
    const onChange = (now: { mtimeMs: number; size: number }, before: { mtimeMs: number; size: number }) => {
      if (now.mtimeMs !== before.mtimeMs || now.size !== before.size) this.reload();
    };
    if (file) watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, onChange);
    return () => {
      process.off('SIGHUP', onHangup);
      if (file) unwatchFile(file, onChange);
    };
  }

  get #file(): string | URL {
    return this.#ctx.config.billing.pricesFile ?? DEFAULT_PRICES_FILE;
  }

  #read(): PriceList {
    return loadPriceList(this.#file, this.#ctx.config.billing.currency);
  }
}

const books = new WeakMap<AppContext, PriceBook>();

/** This server's price list (one per server, shared by admission, pricing and the routes). */
export function priceBook(ctx: AppContext): PriceBook {
  let book = books.get(ctx);
  if (!book) books.set(ctx, (book = new PriceBook(ctx)));
  return book;
}

// ---------------------------------------------------------------- admission

/**
 * Admits an LLM proxy call when billing is enforced: a model without a price is refused (400,
 * `unpriced_model`); otherwise the call reserves the most it can cost (`maximumCost`, at least
 * ATRIUM_BILLING_CALL_RESERVE) while the balance minus what calls in flight reserved is above zero,
 * else 402. Both in the provider's shape with `x-should-retry: false`.
 */
export async function admitCall(ctx: AppContext, call: PaidCall): Promise<void> {
  if (!ctx.config.billing.enforced) return;
  const { list } = priceBook(ctx);
  const found = resolvePrice(list, call.provider, call.model, Date.now());
  if (!found) throw apiError('unpriced_model', { provider: call.provider, model: call.model ?? '' }, { 'x-should-retry': 'false' });
  const most = maximumCost(list, found.price, { bodyBytes: call.bodyBytes, maxOutputTokens: call.maxOutputTokens, choices: call.choices });
  const floor = BigInt(ctx.config.billing.callReserve);
  if (!await ledger.reserve(ctx.db, call.projectId, call.requestId, most > floor ? most : floor)) {
    throw apiError('insufficient_balance', {}, { 'x-should-retry': 'false' });
  }
}

// ---------------------------------------------------------------- settlement

const LABELS: Record<string, string> = {
  input: 'input', cached_input: 'cached input', cache_write: 'cache write', output: 'output', reasoning: 'reasoning', request: 'request', session_minute: 'session minutes',
};

/** One call's usage, as a pricing job carries it. */
export interface ProjectCall {
  projectId: string;
  call: CallUsage;
}

interface Priced {
  entry: ledger.NewEntry;
  rollup: RollupLine[];
}

/** The hour a time falls in. */
const hourOf = (at: Date) => new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000);

/**
 * One call's debit and rollup lines. Priced by the model the provider answered with, else the one
 * asked for (docs/billing.md "The pricing rule"). A call whose usage never came is billed what it
 * reserved (or, unenforced, what it would have reserved); a call without any price is recorded at
 * no cost and counted as unpriced — unless it reserved, then it pays that.
 */
function priceOne(list: PriceList, { projectId, call }: ProjectCall, reserved: bigint | undefined): Priced | undefined {
  if (call.usage_source !== 'provider' && call.usage_source !== 'missing') return undefined;
  const at = new Date(call.started_at);
  const found = resolvePrice(list, call.provider, call.model, at.getTime()) ?? resolvePrice(list, call.provider, call.requested_model, at.getTime());
  const name = call.model ?? call.requested_model ?? '(unknown model)';
  const pricedAs = found && found.price.model !== name ? ` (priced as ${found.price.model})` : '';
  let lines: PricedLine[];
  let note = '';
  let flag: Pick<RollupLine, 'unpriced' | 'estimated'>;
  if (call.usage_source === 'missing') {
    const cost = reserved ?? (found ? maximumCost(list, found.price, { bodyBytes: call.request_bytes, maxOutputTokens: call.max_output_tokens ?? undefined, choices: call.choices }) : 0n);
    lines = [{ usageType: UNREPORTED, quantity: 1n, costMicros: cost }];
    note = ' (the provider reported no usage: billed what the call reserved)';
    flag = found || reserved !== undefined ? { estimated: 1 } : { estimated: 1, unpriced: 1 };
  } else if (!found && reserved !== undefined) {
    lines = [{ usageType: UNREPORTED, quantity: 1n, costMicros: reserved }];
    note = ' (no price for this model: billed what the call reserved)';
    flag = { unpriced: 1 };
  } else {
    lines = priceCall(list, found?.price, call.usage);
    if (!found) note = ' (unpriced: no price for this model)';
    flag = found ? {} : { unpriced: 1 };
  }
  const total = lines.reduce((sum, l) => sum + l.costMicros, 0n);
  const parts = lines.filter((l) => l.quantity > 0n && l.usageType !== UNREPORTED).map((l) => `${l.quantity} ${LABELS[l.usageType]}`).join(', ');
  const hour = hourOf(at);
  return {
    entry: {
      projectId, type: 'usage_debit', amountMicros: -total, idempotencyKey: `usage:${call.request_id}`, reference: call.request_id, referenceType: 'llm_request',
      description: `${call.provider} ${name}${pricedAs}: ${parts || '1 call'}${note}`,
    },
    rollup: lines.map((l, i) => ({
      projectId, hour, provider: call.provider, model: name, usageType: l.usageType, userKey: call.user ?? '', room: call.annotations.room ?? '',
      quantity: l.quantity, costMicros: l.costMicros, ...(i === 0 ? flag : {}),
    })),
  };
}

/**
 * Prices calls into one usage debit each, their lines into the rollup, and releases their
 * reservations, in the caller's transaction and a handful of statements however many calls there
 * are; a call priced before changes nothing. Returns the request ids that were debited.
 */
export async function priceCalls(ctx: AppContext, tx: Db, calls: readonly ProjectCall[]): Promise<Set<string>> {
  const { list } = priceBook(ctx);
  const reserved = await ledger.release(tx, calls.map(({ call }) => call.request_id));
  const priced = calls.flatMap((c) => priceOne(list, c, reserved.get(c.call.request_id)) ?? []);
  return post(tx, priced);
}

/** An ended room or agent session to price, as its pricing job names it. */
export interface ProjectSession {
  projectId: string;
  sessionId: string;
}

/**
 * Prices ended sessions by the minute (rounded up) at the price of `atrium` / `room-session` (or
 * `agent-session`) in force when each started: one usage debit per session, idempotent by its id,
 * and its line in the rollup under the session's room. A session without a price, still running or
 * unknown is left alone. Returns the ids of the sessions debited.
 */
export async function priceSessions(ctx: AppContext, tx: Db, sessions: readonly ProjectSession[]): Promise<Set<string>> {
  const { list } = priceBook(ctx);
  const priced: Priced[] = [];
  for (const { projectId, sessionId, ...span } of await endedSessionSpans(tx, sessions)) {
    const at = span.startedAt.getTime();
    const model = sessionModel(span.kind);
    const rate = resolvePrice(list, SESSION_PROVIDER, model, at)?.price.perMillion.session_minute;
    const minutes = BigInt(Math.ceil(Math.max(0, span.endedAt.getTime() - at) / 60_000));
    if (rate === undefined || minutes === 0n) continue;
    const costMicros = costOf(minutes, rate);
    priced.push({
      entry: {
        projectId, type: 'usage_debit', amountMicros: -costMicros, idempotencyKey: `usage:session:${sessionId}`,
        reference: sessionId, referenceType: 'room_session', description: `${span.kind} session in ${span.roomName}: ${minutes} ${LABELS.session_minute}`,
      },
      rollup: [{ projectId, hour: hourOf(span.startedAt), provider: SESSION_PROVIDER, model, usageType: 'session_minute', userKey: '', room: span.roomName, quantity: minutes, costMicros }],
    });
  }
  return post(tx, priced);
}

/**
 * Posts usage debits (each once, by its idempotency key), the rollup lines of those that were new,
 * and starts auto-recharge where a balance fell; returns the references of the new debits.
 */
async function post(tx: Db, priced: readonly Priced[]): Promise<Set<string>> {
  const posted = await ledger.postEntries(tx, priced.map((p) => p.entry));
  const postedEntries = new Set(posted.map((p) => p.entry));
  await addToRollup(tx, priced.filter((p) => postedEntries.has(p.entry)).flatMap((p) => p.rollup));
  for (const projectId of new Set(posted.filter((p) => p.entry.amountMicros < 0n).map((p) => p.entry.projectId))) await payments.maybeRecharge(tx, projectId);
  return new Set(posted.map((p) => p.entry.reference!));
}

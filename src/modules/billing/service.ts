// Billing's rules: the wallet and its ledger, pricing each LLM proxy call once, admission of calls
// against the balance, auto-recharge within a monthly budget, checkouts, and the usage report.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../platform/db/engine.ts';
import { apiError, badRequest, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import type { PaidCall } from '../../platform/limits/admission.ts';
import { enqueue } from '../../platform/jobs/outbox.ts';
import { rowsOf } from '../../platform/db/rows.ts';
import { endedSessionSpans } from '../sessions/service.ts';
import { rechargeJob } from './jobs.ts';
import { costOf, fromMicros, MICROS, toMicros } from './money.ts';
import { localProvider, TEST_CARDS, type PaymentProvider } from './payments.ts';
import { DEFAULT_PRICES_FILE, loadPriceList, priceCall, priceOf, SESSION_PROVIDER, sessionModel, type PriceList } from './prices.ts';
import * as store from './store.ts';
import { stripeProvider } from './stripe.ts';

/** Consecutive failed auto-recharges after which auto-recharge pauses. */
export const MAX_RECHARGE_FAILURES = 3;
/** Endpoints whose calls are metered (and count as a `request`). */
const METERED = new Set(['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/messages']);

interface State {
  prices: PriceList;
  provider: PaymentProvider;
}
const states = new WeakMap<AppContext['config'], State>();

/** The price list and payment provider of this server (read once; a bad price file fails the start). */
export function billingState(ctx: AppContext): State {
  let state = states.get(ctx.config);
  if (!state) {
    const { billing } = ctx.config;
    state = {
      prices: loadPriceList(billing.pricesFile ?? DEFAULT_PRICES_FILE, billing.currency),
      provider: billing.paymentProvider === 'stripe' ? stripeProvider(ctx.config) : localProvider(ctx.config),
    };
    states.set(ctx.config, state);
  }
  return state;
}

async function rows<T>(db: Db, query: ReturnType<typeof sql>): Promise<T[]> {
  return rowsOf<T>(await db.execute(query));
}

const iso = (value: string | Date | null | undefined) => (value === null || value === undefined ? null : new Date(value).toISOString());
const periodOf = (at: Date) => at.toISOString().slice(0, 7);

// ---------------------------------------------------------------- balance and transactions

interface RechargeSettingsRow {
  enabled: boolean;
  amount: string;
  threshold: string;
  budget: string | null;
  paused_reason: string | null;
  consecutive_failures: number;
  last_recharge_at: string | Date | null;
}

async function rechargeSettings(db: Db, projectId: string, lock = false): Promise<RechargeSettingsRow | undefined> {
  const [row] = await rows<RechargeSettingsRow>(db, sql`
    select enabled, amount_micros::text as amount, threshold_micros::text as threshold, monthly_budget_micros::text as budget,
      paused_reason, consecutive_failures, last_recharge_at
    from billing_auto_recharge where project_id = ${projectId}::uuid ${lock ? sql`for update` : sql``}`);
  return row;
}

async function rechargedInPeriod(db: Db, projectId: string, period: string): Promise<bigint> {
  const [row] = await rows<{ total: string }>(db, sql`
    select coalesce(sum(amount_micros), 0)::text as total from billing_recharges
    where project_id = ${projectId}::uuid and period = ${period} and status in ('pending', 'succeeded')`);
  return BigInt(row!.total);
}

export async function balanceView(ctx: AppContext, projectId: string, db: Db = ctx.db) {
  const wallet = await store.wallet(db, projectId);
  const settings = await rechargeSettings(db, projectId);
  const period = periodOf(new Date());
  const [recharged] = await rows<{ total: string }>(db, sql`
    select coalesce(sum(amount_micros), 0)::text as total from billing_recharges
    where project_id = ${projectId}::uuid and period = ${period} and status = 'succeeded'`);
  return {
    balance: fromMicros(wallet.balance),
    reserved: fromMicros(wallet.reserved),
    available: fromMicros(wallet.balance - wallet.reserved),
    currency: ctx.config.billing.currency,
    auto_recharge_enabled: settings?.enabled ?? false,
    auto_recharge_threshold: settings ? fromMicros(settings.threshold) : null,
    auto_recharge_amount: settings ? fromMicros(settings.amount) : null,
    monthly_budget: settings?.budget ? fromMicros(settings.budget) : null,
    auto_recharge_paused: settings?.paused_reason !== null && settings?.paused_reason !== undefined,
    auto_recharge_paused_reason: settings?.paused_reason ?? null,
    auto_recharged_this_month: fromMicros(recharged!.total),
    last_recharge: iso(settings?.last_recharge_at),
  };
}

export async function listTransactions(ctx: AppContext, projectId: string, page: Page) {
  const { items, total } = await store.listEntries(ctx.db, projectId, page);
  return {
    transactions: items.map((e) => ({
      id: e.id,
      amount: fromMicros(e.amount_micros),
      balance_after: fromMicros(e.balance_after_micros),
      type: e.entry_type,
      reference: e.reference,
      reference_type: e.reference_type,
      referenceType: e.reference_type,
      description: e.description,
      created_at: iso(e.created_at)!,
    })),
    total,
  };
}

/** Wallets that differ from their ledger (or reservations); empty when the books hold. */
export async function verifyLedger(db: Db, projectId?: string) {
  return store.ledgerMismatches(db, projectId);
}

/** An adjustment (operator credit or debit), once per idempotency key. */
export async function adjust(ctx: AppContext, projectId: string, amount: bigint, idempotencyKey: string, description: string) {
  return ctx.db.transaction(async (tx) => {
    const posted = await store.postEntry(tx, { projectId, type: 'adjustment', amountMicros: amount, idempotencyKey: `adjustment:${idempotencyKey}`, description, referenceType: 'adjustment' });
    if (posted && amount < 0n) await maybeRecharge(tx, projectId);
    return posted;
  });
}

/** Reverses an entry with an opposite one (at most once); the entry itself stays. */
export async function reverse(ctx: AppContext, projectId: string, entryId: string, description: string) {
  return ctx.db.transaction(async (tx) => {
    const entry = await store.findEntry(tx, projectId, entryId);
    if (!entry) throw notFound('Transaction');
    return store.postEntry(tx, {
      projectId, type: 'reversal', amountMicros: -BigInt(entry.amount_micros), idempotencyKey: `reversal:${entry.id}`,
      reference: entry.id, referenceType: 'ledger_entry', description, reversesEntryId: entry.id,
    });
  });
}

// ---------------------------------------------------------------- pricing LLM calls

/** What billing reads of an `llm.call.completed` event. */
export interface CallUsage {
  request_id: string;
  provider: string;
  endpoint: string;
  model: string | null;
  usage_source: string;
  usage: { input_tokens: number; cached_input_tokens: number; cache_write_tokens: number; output_tokens: number; reasoning_tokens: number };
  user: string | null;
  annotations: Record<string, string>;
  started_at: string;
}

const LABELS: Record<string, string> = { input: 'input', cached_input: 'cached input', cache_write: 'cache write', output: 'output', reasoning: 'reasoning', request: 'request', session_minute: 'session minutes' };

/** One call's usage, as a pricing job carries it. */
export interface ProjectCall {
  projectId: string;
  call: CallUsage;
}

/**
 * Prices calls into one usage debit each, their lines into the rollup, and releases their
 * reservations, in the caller's transaction and a handful of statements however many calls there
 * are; a call priced before changes nothing. Returns the request ids that were debited.
 */
export async function priceUsages(ctx: AppContext, tx: Db, calls: readonly ProjectCall[]): Promise<Set<string>> {
  const { prices } = billingState(ctx);
  await store.release(tx, calls.map(({ call }) => call.request_id));
  const priced = calls.flatMap(({ projectId, call }) => {
    const at = Date.parse(call.started_at);
    const price = priceOf(prices, call.provider, call.model, at);
    const lines = priceCall(prices, price, call.usage, METERED.has(call.endpoint) && call.usage_source === 'provider');
    if (lines.length === 0) return [];
    const total = lines.reduce((sum, l) => sum + l.costMicros, 0n);
    const parts = lines.filter((l) => l.quantity > 0n).map((l) => `${l.quantity} ${LABELS[l.usageType]}`).join(', ');
    const hour = bucketStart(new Date(at), 'hour');
    const entry: store.NewEntry = {
      projectId, type: 'usage_debit', amountMicros: -total, idempotencyKey: `usage:${call.request_id}`,
      reference: call.request_id, referenceType: 'llm_request',
      description: `${call.provider} ${call.model ?? '(unknown model)'}: ${parts}${price ? '' : ' (no price for this model)'}`,
    };
    const rollup = lines.map((l) => ({
      projectId, hour, provider: call.provider, model: call.model ?? '', usageType: l.usageType, userKey: call.user ?? '', room: call.annotations.room ?? '',
      quantity: l.quantity, costMicros: l.costMicros,
    }));
    return [{ entry, rollup }];
  });
  return postPriced(tx, priced);
}

/**
 * Posts usage debits (each once, by its idempotency key), the rollup lines of those that were new,
 * and starts auto-recharge where a balance fell; returns the references of the new debits.
 */
async function postPriced(tx: Db, priced: readonly { entry: store.NewEntry; rollup: store.RollupLine[] }[]): Promise<Set<string>> {
  const posted = await store.postEntries(tx, priced.map((p) => p.entry));
  const postedEntries = new Set(posted.map((p) => p.entry));
  await store.addToRollup(tx, priced.filter((p) => postedEntries.has(p.entry)).flatMap((p) => p.rollup));
  for (const projectId of new Set(posted.filter((p) => p.entry.amountMicros < 0n).map((p) => p.entry.projectId))) await maybeRecharge(tx, projectId);
  return new Set(posted.map((p) => p.entry.reference!));
}

// ---------------------------------------------------------------- pricing room sessions

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
  const { prices } = billingState(ctx);
  const priced = [];
  for (const { projectId, sessionId, ...span } of await endedSessionSpans(tx, sessions)) {
    const at = span.startedAt.getTime();
    const model = sessionModel(span.kind);
    const rate = priceOf(prices, SESSION_PROVIDER, model, at)?.perMillion.session_minute;
    const minutes = BigInt(Math.ceil(Math.max(0, span.endedAt.getTime() - at) / 60_000));
    if (rate === undefined || minutes === 0n) continue;
    const costMicros = costOf(minutes, rate);
    priced.push({
      entry: {
        projectId, type: 'usage_debit', amountMicros: -costMicros, idempotencyKey: `usage:session:${sessionId}`,
        reference: sessionId, referenceType: 'room_session', description: `${span.kind} session in ${span.roomName}: ${minutes} ${LABELS.session_minute}`,
      } satisfies store.NewEntry,
      rollup: [{
        projectId, hour: bucketStart(span.startedAt, 'hour'), provider: SESSION_PROVIDER, model, usageType: 'session_minute',
        userKey: '', room: span.roomName, quantity: minutes, costMicros,
      }],
    });
  }
  return postPriced(tx, priced);
}

/** Prices one call (see `priceUsages`); false when it was priced before or costs nothing to record. */
export async function priceUsage(ctx: AppContext, tx: Db, projectId: string, call: CallUsage): Promise<boolean> {
  return (await priceUsages(ctx, tx, [{ projectId, call }])).size > 0;
}

// ---------------------------------------------------------------- admission

/**
 * Admits an LLM proxy call when billing is enforced: reserves its estimated cost while the balance
 * minus what calls in flight reserved is above zero, else 402 (`x-should-retry: false`). The
 * estimate is the model's price of the body's size in input tokens (4 bytes each) plus its
 * `max_tokens` of output, at least ATRIUM_BILLING_CALL_RESERVE.
 */
export async function admitCall(ctx: AppContext, call: PaidCall): Promise<void> {
  if (!ctx.config.billing.enforced) return;
  const { prices } = billingState(ctx);
  const price = priceOf(prices, call.provider, call.model ?? null, Date.now());
  const estimate = price ? priceCall(prices, price, {
    input_tokens: Math.ceil(call.bodyBytes / 4), cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: call.maxTokens ?? 0, reasoning_tokens: 0,
  }, true).reduce((sum, l) => sum + l.costMicros, 0n) : 0n;
  const amount = estimate > BigInt(ctx.config.billing.callReserve) ? estimate : BigInt(ctx.config.billing.callReserve);
  if (!await store.reserve(ctx.db, call.projectId, call.requestId, amount)) {
    throw apiError('insufficient_balance', {}, { 'x-should-retry': 'false' });
  }
}

/** Releases reservations of calls whose record never came (after the longest call could last). */
export async function releaseStaleReservations(ctx: AppContext): Promise<number> {
  return store.releaseStale(ctx.db, Math.ceil(ctx.config.llm.timeoutMs / 1000) * 2 + 600);
}

// ---------------------------------------------------------------- auto-recharge

export interface RechargeInput {
  enabled: boolean;
  amount: number | string;
  threshold: number | string;
  monthly_budget?: number | string | null | undefined;
}

function positive(value: number | string, field: string, allowZero = false): bigint {
  const micros = toMicros(value);
  if (micros === undefined) throw badRequest(`${field} must be a decimal number with at most 6 decimals`);
  if (micros < 0n || (!allowZero && micros === 0n)) throw badRequest(`${field} must be ${allowZero ? 'zero or more' : 'greater than zero'}`);
  return micros;
}

export async function setAutoRecharge(ctx: AppContext, projectId: string, input: RechargeInput) {
  const amount = positive(input.amount, 'amount');
  const threshold = positive(input.threshold, 'threshold', true);
  const budget = input.monthly_budget === null || input.monthly_budget === undefined ? null : positive(input.monthly_budget, 'monthly_budget');
  if (budget !== null && budget < amount) throw badRequest('monthly_budget must be at least amount');
  return ctx.db.transaction(async (tx) => {
    await tx.execute(sql`
      insert into billing_auto_recharge (project_id, enabled, amount_micros, threshold_micros, monthly_budget_micros)
      values (${projectId}::uuid, ${input.enabled}, ${amount.toString()}::bigint, ${threshold.toString()}::bigint, ${budget?.toString() ?? null}::bigint)
      on conflict (project_id) do update set enabled = excluded.enabled, amount_micros = excluded.amount_micros,
        threshold_micros = excluded.threshold_micros, monthly_budget_micros = excluded.monthly_budget_micros,
        consecutive_failures = 0, paused_reason = null, updated_at = now()`);
    if (input.enabled) await maybeRecharge(tx, projectId);
    return balanceView(ctx, projectId, tx);
  });
}

/**
 * Starts one auto-recharge when the project wants one: enabled and not paused, the balance below
 * the threshold, none pending, and the month's recharges plus this one within the budget. The
 * charge itself runs as a job; the wallet is credited only when the provider confirms.
 */
export async function maybeRecharge(tx: Db, projectId: string): Promise<string | undefined> {
  const settings = await rechargeSettings(tx, projectId, true);
  if (!settings?.enabled || settings.paused_reason !== null) return undefined;
  const wallet = await store.wallet(tx, projectId);
  if (wallet.balance >= BigInt(settings.threshold)) return undefined;
  const period = periodOf(new Date());
  const amount = BigInt(settings.amount);
  if (settings.budget !== null && await rechargedInPeriod(tx, projectId, period) + amount > BigInt(settings.budget)) return undefined;
  const id = randomUUID();
  const [inserted] = await rows<{ id: string }>(tx, sql`
    insert into billing_recharges (id, project_id, period, amount_micros, status)
    values (${id}::uuid, ${projectId}::uuid, ${period}, ${amount.toString()}::bigint, 'pending')
    on conflict (project_id) where status = 'pending' do nothing
    returning id::text`);
  if (!inserted) return undefined;
  await enqueue(tx, rechargeJob.of({ key: id, payload: { project_id: projectId, recharge_id: id } }));
  return id;
}

interface RechargeRow {
  id: string;
  project_id: string;
  amount: string;
  status: string;
  method: string | null;
}

/** Charges a pending recharge (outside any transaction) and returns how to record the outcome. */
export async function chargeRecharge(ctx: AppContext, db: Db, projectId: string, rechargeId: string): Promise<((tx: Db) => Promise<void>) | undefined> {
  const [recharge] = await rows<RechargeRow>(db, sql`
    select r.id::text, r.project_id::text, r.amount_micros::text as amount, r.status, m.provider_ref as method
    from billing_recharges r left join billing_payment_methods m on m.project_id = r.project_id
    where r.project_id = ${projectId}::uuid and r.id = ${rechargeId}::uuid`);
  if (!recharge || recharge.status !== 'pending') return undefined;
  const amount = BigInt(recharge.amount);
  const result = recharge.method
    ? await billingState(ctx).provider.chargeSavedMethod(recharge.method, amount, `recharge:${recharge.id}`)
    : { status: 'failed' as const, providerRef: '', error: 'No saved payment method: buy credits once to save a card' };
  return async (tx) => {
    // The wallet first, as every ledger write takes it: a debit in flight holds it and then waits
    // for this recharge's row (its own recharge check); the other order deadlocked.
    await store.lockWallets(tx, [projectId]);
    const [settled] = await rows<{ id: string }>(tx, sql`
      update billing_recharges set status = ${result.status}, provider_ref = ${result.providerRef || null}, error = ${result.error ?? null}, settled_at = now()
      where id = ${recharge.id}::uuid and status = 'pending' returning id::text`);
    if (!settled) return;
    if (result.status === 'succeeded') {
      await store.postEntry(tx, {
        projectId, type: 'auto_recharge', amountMicros: amount, idempotencyKey: `recharge:${recharge.id}`,
        reference: result.providerRef, referenceType: 'payment', description: `Auto-recharge of ${fromMicros(amount)} ${ctx.config.billing.currency}`,
      });
      await tx.execute(sql`update billing_auto_recharge set consecutive_failures = 0, last_recharge_at = now(), updated_at = now() where project_id = ${projectId}::uuid`);
    } else {
      await tx.execute(sql`
        update billing_auto_recharge set consecutive_failures = consecutive_failures + 1, updated_at = now(),
          paused_reason = case when consecutive_failures + 1 >= ${MAX_RECHARGE_FAILURES}
            then ${`${MAX_RECHARGE_FAILURES} auto-recharges failed in a row; the last: ${result.error ?? 'failed'}`} else paused_reason end
        where project_id = ${projectId}::uuid`);
    }
  };
}

// ---------------------------------------------------------------- checkout

export interface CheckoutInput {
  success_url: string;
  cancel_url: string;
  quantity?: number | undefined;
}

function absoluteUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw apiError('invalid_url', `${field} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw apiError('invalid_url', `${field} must be an absolute http(s) URL`);
  return url.toString();
}

/** Starts a checkout for credits (quantity × one currency unit) or the subscription; returns its URL. */
export async function startCheckout(ctx: AppContext, projectId: string, kind: 'credits' | 'subscription', input: CheckoutInput) {
  const successUrl = absoluteUrl(input.success_url, 'success_url');
  const cancelUrl = absoluteUrl(input.cancel_url, 'cancel_url');
  const quantity = kind === 'credits' ? input.quantity ?? 1 : 1;
  const amount = kind === 'credits' ? BigInt(quantity) * MICROS : BigInt(ctx.config.billing.subscriptionCredits) * MICROS;
  const id = randomUUID();
  const { provider } = billingState(ctx);
  const session = await provider.createCheckout({ checkoutId: id, projectId, kind, amountMicros: amount, successUrl, cancelUrl });
  await ctx.db.execute(sql`
    insert into billing_checkouts (id, project_id, kind, amount_micros, quantity, success_url, cancel_url, provider, provider_ref)
    values (${id}::uuid, ${projectId}::uuid, ${kind}, ${amount.toString()}::bigint, ${quantity}, ${successUrl}, ${cancelUrl}, ${provider.name}, ${session.providerRef})`);
  return { checkout_url: session.url };
}

export interface CheckoutRow {
  id: string;
  project_id: string;
  kind: 'credits' | 'subscription';
  amount: string;
  quantity: number;
  success_url: string;
  cancel_url: string;
  provider: string;
  status: 'open' | 'completed' | 'canceled';
}

export async function findCheckout(db: Db, id: string): Promise<CheckoutRow | undefined> {
  const [row] = await rows<CheckoutRow>(db, sql`
    select id::text, project_id::text, kind, amount_micros::text as amount, quantity, success_url, cancel_url, provider, status
    from billing_checkouts where id = ${id}::uuid`);
  return row;
}

/**
 * A payment provider's word that a checkout was paid (the local page, or a provider event): credits
 * the ledger, starts the subscription and saves the card, exactly once per event and per checkout.
 */
export async function completeCheckout(ctx: AppContext, provider: string, eventId: string, checkoutId: string, card: { ref: string; label: string } | undefined): Promise<CheckoutRow | undefined> {
  return ctx.db.transaction(async (tx) => {
    const [fresh] = await rows<{ event_id: string }>(tx, sql`
      insert into billing_payment_events (provider, event_id, type) values (${provider}, ${eventId}, 'checkout.completed')
      on conflict do nothing returning event_id`);
    const [checkout] = await rows<CheckoutRow>(tx, sql`
      update billing_checkouts set status = 'completed', completed_at = now()
      where id = ${checkoutId}::uuid and status = 'open' and ${fresh !== undefined}
      returning id::text, project_id::text, kind, amount_micros::text as amount, quantity, success_url, cancel_url, provider, status`);
    if (!checkout) return findCheckout(tx, checkoutId);
    const amount = BigInt(checkout.amount);
    const currency = ctx.config.billing.currency;
    if (checkout.kind === 'subscription') {
      await tx.execute(sql`
        insert into billing_subscriptions (project_id, plan, status, monthly_credit_micros, provider, provider_ref, current_period_start)
        values (${checkout.project_id}::uuid, 'monthly', 'active', ${amount.toString()}::bigint, ${provider}, ${eventId}, now())
        on conflict (project_id) do update set status = 'active', monthly_credit_micros = excluded.monthly_credit_micros,
          provider_ref = excluded.provider_ref, current_period_start = now(), updated_at = now()`);
    }
    await store.postEntry(tx, {
      projectId: checkout.project_id, type: checkout.kind === 'credits' ? 'credit_purchase' : 'subscription_grant', amountMicros: amount,
      idempotencyKey: `checkout:${checkout.id}`, reference: checkout.id, referenceType: 'checkout',
      description: checkout.kind === 'credits' ? `Credits: ${checkout.quantity} × 1 ${currency}` : `Subscription: ${fromMicros(amount)} ${currency} of credits for the month`,
    });
    if (card) {
      await tx.execute(sql`
        insert into billing_payment_methods (project_id, provider, provider_ref, label) values (${checkout.project_id}::uuid, ${provider}, ${card.ref}, ${card.label})
        on conflict (project_id) do update set provider = excluded.provider, provider_ref = excluded.provider_ref, label = excluded.label, created_at = now()`);
      // A new card lifts a pause caused by the old one.
      await tx.execute(sql`update billing_auto_recharge set paused_reason = null, consecutive_failures = 0 where project_id = ${checkout.project_id}::uuid`);
    }
    return checkout;
  });
}

/**
 * A webhook delivery of the payment provider: verified (400 when the signature is wrong), then
 * each paid checkout it reports is completed once. 404 when the provider sends no webhooks.
 */
export async function handleWebhook(ctx: AppContext, provider: string, rawBody: Buffer, signature: string | undefined): Promise<number> {
  const state = billingState(ctx);
  if (state.provider.name !== provider || !state.provider.parseWebhook) throw notFound('Webhook endpoint');
  let paid;
  try {
    paid = await state.provider.parseWebhook(rawBody, signature);
  } catch (error) {
    if ((error as { type?: string }).type === 'StripeSignatureVerificationError') throw badRequest(`The webhook signature does not verify: ${(error as Error).message}`);
    throw error;
  }
  for (const event of paid) await completeCheckout(ctx, provider, event.eventId, event.checkoutId, event.card);
  return paid.length;
}

export async function cancelCheckout(db: Db, checkoutId: string): Promise<CheckoutRow | undefined> {
  await db.execute(sql`update billing_checkouts set status = 'canceled' where id = ${checkoutId}::uuid and status = 'open'`);
  return findCheckout(db, checkoutId);
}

/** The local provider's page: confirm with a test card (declined cards save nothing and credit nothing). */
export async function confirmLocalCheckout(ctx: AppContext, checkoutId: string, cardNumber: string): Promise<{ checkout: CheckoutRow | undefined; declined?: string }> {
  const card = TEST_CARDS[cardNumber.replace(/\s+/g, '')];
  if (!card) throw badRequest(`card must be one of the local provider's test card numbers: ${Object.keys(TEST_CARDS).join(', ')}`);
  if (card.declined === 'always') return { checkout: await findCheckout(ctx.db, checkoutId), declined: 'The card was declined (test card)' };
  const checkout = await completeCheckout(ctx, 'local', `checkout:${checkoutId}`, checkoutId, { ref: cardNumber.replace(/\s+/g, ''), label: card.label });
  return { checkout };
}

export async function subscriptionView(ctx: AppContext, projectId: string) {
  const [row] = await rows<{ plan: string; status: string; monthly: string; provider: string; start: string | Date; created_at: string | Date }>(ctx.db, sql`
    select plan, status, monthly_credit_micros::text as monthly, provider, current_period_start as start, created_at
    from billing_subscriptions where project_id = ${projectId}::uuid`);
  const [method] = await rows<{ label: string }>(ctx.db, sql`select label from billing_payment_methods where project_id = ${projectId}::uuid`);
  return {
    subscription: row ? {
      plan: row.plan, status: row.status, monthly_credits: fromMicros(row.monthly), currency: ctx.config.billing.currency, provider: row.provider,
      current_period_start: iso(row.start), created_at: iso(row.created_at),
    } : null,
    payment_method: method?.label ?? null,
  };
}

// ---------------------------------------------------------------- usage report

const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

export interface UsageInput {
  start?: string | undefined;
  end?: string | undefined;
  interval?: Interval | undefined;
  report?: string | undefined;
  users?: string | undefined;
  room?: string | undefined;
  provider?: string | undefined;
  model?: string | undefined;
  usage_type?: string | undefined;
}

/** The start of the UTC calendar bucket holding `at`. */
export function bucketStart(at: Date, interval: Interval): Date {
  const d = new Date(at);
  if (interval === 'hour') return new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (interval === 'day') return new Date(day);
  if (interval === 'week') return new Date(day - ((d.getUTCDay() + 6) % 7) * 86_400_000);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

export function nextBucket(start: Date, interval: Interval): Date {
  if (interval === 'hour') return new Date(start.getTime() + 3_600_000);
  if (interval === 'day') return new Date(start.getTime() + 86_400_000);
  if (interval === 'week') return new Date(start.getTime() + 7 * 86_400_000);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

const MAX_BUCKETS = 5000;

function parseTime(value: string | undefined, field: string, fallback: Date): Date {
  if (value === undefined || value === '') return fallback;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw badRequest(`${field} must be an ISO 8601 date or date-time`);
  return at;
}

/**
 * Usage per bucket (UTC calendar-aligned), grouped by the `report` dimensions, filtered; every
 * bucket of the range appears for every group seen (empty ones with zeros), oldest first.
 */
export async function usageReport(ctx: AppContext, projectId: string, input: UsageInput) {
  const interval = input.interval ?? 'day';
  const now = new Date();
  const end = parseTime(input.end, 'end', now);
  const start = parseTime(input.start, 'start', new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)));
  if (start >= end) throw badRequest('start must be before end');
  const report = (input.report ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const dim of report) if (!(dim in store.REPORT_DIMENSIONS)) throw badRequest(`report must be a comma-separated list of ${Object.keys(store.REPORT_DIMENSIONS).join(', ')}`);
  const dims = [...new Set(report)] as store.Dimension[];
  const first = bucketStart(start, interval);
  const buckets: Date[] = [];
  for (let b = first; b < end; b = nextBucket(b, interval)) {
    buckets.push(b);
    if (buckets.length > MAX_BUCKETS) throw badRequest(`The range holds more than ${MAX_BUCKETS} buckets of one ${interval}: shorten it or use a longer interval`);
  }
  const users = input.users ? input.users.split(',').map((u) => u.trim()).filter(Boolean) : undefined;
  const found = await store.usageReport(ctx.db, projectId, {
    // Whole hours: the rollup's grain.
    start: bucketStart(start, 'hour'), end, interval, report: dims, users, room: input.room, provider: input.provider, model: input.model, usageType: input.usage_type,
  });
  const keyOf = (row: Record<string, unknown>) => JSON.stringify(dims.map((d) => row[d] ?? null));
  interface Cell { quantities: Record<string, number>; costs: Record<string, bigint>; requests: number }
  const cells = new Map<string, Map<number, Cell>>();
  for (const row of found) {
    const key = keyOf(row);
    const at = bucketStart(new Date(row.bucket), interval).getTime();
    let byBucket = cells.get(key);
    if (!byBucket) cells.set(key, byBucket = new Map());
    let cell = byBucket.get(at);
    if (!cell) byBucket.set(at, cell = { quantities: {}, costs: {}, requests: 0 });
    cell.quantities[row.usage_type] = (cell.quantities[row.usage_type] ?? 0) + Number(row.quantity);
    cell.costs[row.usage_type] = (cell.costs[row.usage_type] ?? 0n) + BigInt(row.cost);
    if (row.usage_type === 'request') cell.requests += Number(row.quantity);
  }
  if (cells.size === 0) cells.set(JSON.stringify(dims.map(() => null)), new Map());
  const usage = [];
  for (const bucket of buckets) {
    const bucketEnd = nextBucket(bucket, interval);
    for (const [key, byBucket] of [...cells].sort(([a], [b]) => a.localeCompare(b))) {
      const cell = byBucket.get(bucket.getTime()) ?? { quantities: {}, costs: {}, requests: 0 };
      const values = JSON.parse(key) as (string | null)[];
      const cost = Object.values(cell.costs).reduce((sum, c) => sum + c, 0n);
      usage.push({
        start: bucket.toISOString(),
        end: bucketEnd.toISOString(),
        ...Object.fromEntries(dims.map((d, i) => [d, values[i] === '' ? null : values[i]])),
        requests: cell.requests,
        quantities: cell.quantities,
        costs: Object.fromEntries(Object.entries(cell.costs).map(([t, c]) => [t, fromMicros(c)])),
        cost: fromMicros(cost),
        total: fromMicros(cost),
      });
    }
  }
  return { usage, currency: ctx.config.billing.currency, interval, start: start.toISOString(), end: end.toISOString() };
}

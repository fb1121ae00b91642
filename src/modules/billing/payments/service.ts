// Payments: checkouts (credits, the monthly subscription) through the payment provider the operator
// enabled, each credited once and only once its provider's word matches it (the checkout's
// provider, session, amount and currency); the saved payment method; and auto-recharge within a
// monthly budget, charged as a job and credited only when the provider confirms.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../../context.ts';
import type { Db } from '../../../platform/db/engine.ts';
import { apiError, badRequest, notFound } from '../../../platform/http/errors.ts';
import { enqueue } from '../../../platform/jobs/outbox.ts';
import type { RunnerOf } from '../../../platform/jobs/types.ts';
import { rechargeJob } from '../jobs.ts';
import * as ledger from '../ledger/service.ts';
import { fromMicros, MICROS, toMicros } from '../money.ts';
import { localProvider, TEST_CARDS, type CheckoutPaid, type PaymentProvider } from './providers.ts';
import * as store from './store.ts';
import { cents, stripeProvider } from './stripe.ts';

/** Consecutive failed auto-recharges after which auto-recharge pauses. */
const MAX_RECHARGE_FAILURES = 3;

const providers = new WeakMap<AppContext, PaymentProvider | null>();

/**
 * This server's payment provider (one per server: Stripe's holds its SDK client), or undefined when
 * the operator enabled none. A Stripe provider without its keys fails the start.
 */
export function paymentProvider(ctx: AppContext): PaymentProvider | undefined {
  let provider = providers.get(ctx);
  if (provider === undefined) {
    const name = ctx.config.billing.paymentProvider;
    provider = name === 'stripe' ? stripeProvider(ctx.config) : name === 'local' ? localProvider(ctx.config) : null;
    providers.set(ctx, provider);
  }
  return provider ?? undefined;
}

function enabledProvider(ctx: AppContext): PaymentProvider {
  const provider = paymentProvider(ctx);
  if (!provider) throw apiError('payments_unavailable');
  return provider;
}

const periodOf = (at: Date) => at.toISOString().slice(0, 7);

// ---------------------------------------------------------------- checkouts

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
  const provider = enabledProvider(ctx);
  const successUrl = absoluteUrl(input.success_url, 'success_url');
  const cancelUrl = absoluteUrl(input.cancel_url, 'cancel_url');
  const quantity = kind === 'credits' ? input.quantity ?? 1 : 1;
  const amountMicros = kind === 'credits' ? BigInt(quantity) * MICROS : BigInt(ctx.config.billing.subscriptionCredits) * MICROS;
  const id = randomUUID();
  const session = await provider.createCheckout({ checkoutId: id, projectId, kind, amountMicros, successUrl, cancelUrl });
  await store.insertCheckout(ctx.db, {
    id, projectId, kind, amountMicros, currency: ctx.config.billing.currency, quantity, successUrl, cancelUrl, provider: provider.name, providerRef: session.providerRef,
  });
  return { checkout_url: session.url };
}

/** A checkout the local provider's page may show: the local provider's own, while it is this server's provider. */
export async function localCheckout(ctx: AppContext, checkoutId: string): Promise<store.CheckoutRow | undefined> {
  if (paymentProvider(ctx)?.name !== 'local') return undefined;
  const checkout = await store.findCheckout(ctx.db, checkoutId);
  return checkout?.provider === 'local' ? checkout : undefined;
}

/** What in a provider's word does not match its checkout (undefined when everything does). */
function mismatch(ctx: AppContext, checkout: store.CheckoutRow, paid: CheckoutPaid): string | undefined {
  if (checkout.providerRef !== paid.sessionId) return `the session ${paid.sessionId} is not the checkout's ${checkout.providerRef ?? '(none)'}`;
  if (paid.amountMinor !== cents(checkout.amountMicros)) return `the amount paid (${paid.amountMinor}) is not the checkout's (${cents(checkout.amountMicros)})`;
  const currency = checkout.currency ?? ctx.config.billing.currency;
  if (paid.currency.toLowerCase() !== currency.toLowerCase()) return `the currency paid (${paid.currency}) is not the checkout's (${currency})`;
  return undefined;
}

/**
 * A payment provider's word that a checkout was paid (the local page, or a provider's event): when
 * it comes from this server's provider, for a checkout that provider opened, and matches it, the
 * ledger is credited, the subscription started and the card saved, exactly once per event and per
 * checkout. The checkout as it stands after, and whether this word completed it.
 */
async function completeCheckout(ctx: AppContext, provider: PaymentProvider, paid: CheckoutPaid): Promise<{ checkout: store.CheckoutRow | undefined; credited: boolean }> {
  return ctx.db.transaction(async (tx) => {
    const checkout = await store.findCheckout(tx, paid.checkoutId);
    if (!checkout || checkout.provider !== provider.name) return { checkout: undefined, credited: false };
    const wrong = mismatch(ctx, checkout, paid);
    if (wrong) {
      ctx.log.warn({ provider: provider.name, eventId: paid.eventId, checkoutId: checkout.id }, `billing: a paid event does not match its checkout (${wrong}); nothing credited`);
      return { checkout, credited: false };
    }
    // A second word of the same payment (another event, a confirmation twice) finds it done: read again, it says so.
    const completed = await store.recordEvent(tx, provider.name, paid.eventId, 'checkout.completed') ? await store.markCompleted(tx, checkout.id, provider.name) : undefined;
    if (!completed) return { checkout: await store.findCheckout(tx, checkout.id), credited: false };
    const amount = completed.amountMicros;
    const currency = completed.currency ?? ctx.config.billing.currency;
    // The wallet first, as every transaction that posts to the ledger takes it.
    await ledger.lockWallets(tx, [completed.projectId]);
    if (completed.kind === 'subscription') await store.startSubscription(tx, completed.projectId, amount, provider.name, paid.eventId);
    await ledger.postEntry(tx, {
      projectId: completed.projectId, type: completed.kind === 'credits' ? 'credit_purchase' : 'subscription_grant', amountMicros: amount,
      idempotencyKey: `checkout:${completed.id}`, reference: completed.id, referenceType: 'checkout',
      description: completed.kind === 'credits' ? `Credits: ${completed.quantity} × 1 ${currency}` : `Subscription: ${fromMicros(amount)} ${currency} of credits for the month`,
    });
    if (paid.card) {
      await store.savePaymentMethod(tx, completed.projectId, provider.name, paid.card.ref, paid.card.label);
      // A new card lifts a pause caused by the old one.
      await store.liftPause(tx, completed.projectId);
    }
    return { checkout: completed, credited: true };
  });
}

/**
 * A webhook delivery of the payment provider: verified (400 when the signature is wrong), then
 * each paid checkout it reports is completed once, if it matches. 404 unless `provider` is this
 * server's and sends webhooks.
 */
export async function handleWebhook(ctx: AppContext, name: string, rawBody: Buffer, signature: string | undefined): Promise<number> {
  const provider = paymentProvider(ctx);
  if (provider?.name !== name || !provider.parseWebhook) throw notFound('Webhook endpoint');
  let paid;
  try {
    paid = await provider.parseWebhook(rawBody, signature);
  } catch (error) {
    if ((error as { type?: string }).type === 'StripeSignatureVerificationError') throw badRequest(`The webhook signature does not verify: ${(error as Error).message}`);
    throw error;
  }
  let processed = 0;
  for (const event of paid) if ((await completeCheckout(ctx, provider, event)).credited) processed += 1;
  return processed;
}

export async function cancelCheckout(db: Db, checkout: store.CheckoutRow): Promise<store.CheckoutRow | undefined> {
  await store.markCanceled(db, checkout.id);
  return store.findCheckout(db, checkout.id);
}

/** The local provider's page: confirm with a test card (declined cards save nothing and credit nothing). */
export async function confirmLocalCheckout(ctx: AppContext, checkout: store.CheckoutRow, cardNumber: string): Promise<{ checkout: store.CheckoutRow | undefined; declined?: string }> {
  const number = cardNumber.replace(/\s+/g, '');
  const card = TEST_CARDS[number];
  if (!card) throw badRequest(`card must be one of the local provider's test card numbers: ${Object.keys(TEST_CARDS).join(', ')}`);
  if (card.declined === 'always') return { checkout, declined: 'The card was declined (test card)' };
  const provider = enabledProvider(ctx);
  const { checkout: after } = await completeCheckout(ctx, provider, {
    eventId: `checkout:${checkout.id}`, checkoutId: checkout.id, sessionId: checkout.providerRef ?? '', amountMinor: cents(checkout.amountMicros),
    currency: checkout.currency ?? ctx.config.billing.currency, card: { ref: number, label: card.label },
  });
  return { checkout: after };
}

export async function subscriptionView(ctx: AppContext, projectId: string) {
  const [row, method] = await Promise.all([store.subscription(ctx.db, projectId), store.paymentMethod(ctx.db, projectId)]);
  return {
    subscription: row ? {
      plan: row.plan, status: row.status, monthly_credits: fromMicros(row.monthlyCreditMicros), currency: ctx.config.billing.currency, provider: row.provider,
      current_period_start: row.currentPeriodStart.toISOString(), created_at: row.createdAt.toISOString(),
    } : null,
    payment_method: method?.label ?? null,
  };
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

/** Saves the settings (lifting any pause) in the caller's transaction and, when enabled, checks at once. */
export async function setAutoRecharge(ctx: AppContext, tx: Db, projectId: string, input: RechargeInput): Promise<void> {
  const amountMicros = positive(input.amount, 'amount');
  const thresholdMicros = positive(input.threshold, 'threshold', true);
  const monthlyBudgetMicros = input.monthly_budget === null || input.monthly_budget === undefined ? null : positive(input.monthly_budget, 'monthly_budget');
  if (monthlyBudgetMicros !== null && monthlyBudgetMicros < amountMicros) throw badRequest('monthly_budget must be at least amount');
  if (input.enabled) enabledProvider(ctx);
  await store.saveRechargeSettings(tx, projectId, { enabled: input.enabled, amountMicros, thresholdMicros, monthlyBudgetMicros });
  if (input.enabled) await maybeRecharge(tx, projectId);
}

/** The auto-recharge part of the balance view. */
export async function rechargeView(db: Db, projectId: string) {
  const [settings, recharged] = await Promise.all([
    store.rechargeSettings(db, projectId),
    store.rechargedInPeriod(db, projectId, periodOf(new Date()), ['succeeded']),
  ]);
  return {
    auto_recharge_enabled: settings?.enabled ?? false,
    auto_recharge_threshold: settings ? fromMicros(settings.thresholdMicros) : null,
    auto_recharge_amount: settings ? fromMicros(settings.amountMicros) : null,
    monthly_budget: settings?.monthlyBudgetMicros === null || settings === undefined ? null : fromMicros(settings.monthlyBudgetMicros),
    auto_recharge_paused: settings?.pausedReason !== null && settings?.pausedReason !== undefined,
    auto_recharge_paused_reason: settings?.pausedReason ?? null,
    auto_recharged_this_month: fromMicros(recharged),
    last_recharge: settings?.lastRechargeAt?.toISOString() ?? null,
  };
}

/**
 * Starts one auto-recharge when the project wants one: enabled and not paused, the balance below
 * the threshold, none pending, and the month's recharges plus this one within the budget. The
 * charge itself runs as a job; the wallet is credited only when the provider confirms. The caller
 * holds the project's wallet (ledger.lockWallets) or has just posted to it.
 */
export async function maybeRecharge(tx: Db, projectId: string): Promise<void> {
  const settings = await store.rechargeSettings(tx, projectId, true);
  if (!settings?.enabled || settings.pausedReason !== null) return;
  const { balance } = await ledger.wallet(tx, projectId);
  if (balance >= settings.thresholdMicros) return;
  const period = periodOf(new Date());
  const amountMicros = settings.amountMicros;
  if (settings.monthlyBudgetMicros !== null && await store.rechargedInPeriod(tx, projectId, period, ['pending', 'succeeded']) + amountMicros > settings.monthlyBudgetMicros) return;
  const id = randomUUID();
  if (!await store.insertPendingRecharge(tx, { id, projectId, period, amountMicros })) return;
  await enqueue(tx, rechargeJob.of({ key: id, payload: { project_id: projectId, recharge_id: id } }));
}

/**
 * Charges a pending recharge (outside any transaction) with the card saved through this server's
 * provider, and returns how to record the outcome.
 */
async function chargeRecharge(ctx: AppContext, db: Db, projectId: string, rechargeId: string): Promise<((tx: Db) => Promise<void>) | undefined> {
  const recharge = await store.findRecharge(db, projectId, rechargeId);
  if (!recharge || recharge.status !== 'pending') return undefined;
  const provider = paymentProvider(ctx);
  const method = await store.paymentMethod(db, projectId);
  const result = !provider
    ? { status: 'failed' as const, providerRef: '', error: 'This server takes no payments (ATRIUM_PAYMENT_PROVIDER)' }
    : method?.provider === provider.name
      ? await provider.chargeSavedMethod(method.providerRef, recharge.amountMicros, `recharge:${recharge.id}`)
      : { status: 'failed' as const, providerRef: '', error: 'No saved payment method: buy credits once to save a card' };
  return async (tx) => {
    // The wallet first, as every ledger write takes it: a debit in flight holds it and then waits
    // for this recharge's row (its own recharge check); the other order deadlocked.
    await ledger.lockWallets(tx, [projectId]);
    if (!await store.settleRecharge(tx, projectId, recharge.id, result)) return;
    if (result.status === 'succeeded') {
      await ledger.postEntry(tx, {
        projectId, type: 'auto_recharge', amountMicros: recharge.amountMicros, idempotencyKey: `recharge:${recharge.id}`,
        reference: result.providerRef, referenceType: 'payment', description: `Auto-recharge of ${fromMicros(recharge.amountMicros)} ${ctx.config.billing.currency}`,
      });
      await store.rechargeSucceeded(tx, projectId);
    } else {
      await store.rechargeFailed(tx, projectId, MAX_RECHARGE_FAILURES, `${MAX_RECHARGE_FAILURES} auto-recharges failed in a row; the last: ${result.error ?? 'failed'}`);
    }
  };
}

/** The job that charges a pending recharge and records what the provider said. */
export function rechargeHandler(ctx: AppContext): RunnerOf<typeof rechargeJob> {
  return {
    async run({ payload }, { db }) {
      const record = await chargeRecharge(ctx, db, payload.project_id, payload.recharge_id);
      return record ? { record } : {};
    },
  };
}

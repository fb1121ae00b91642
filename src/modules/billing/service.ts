// Billing as the rest of the service (the CLI, other modules) sees it: the books and their check,
// operator adjustments, pricing usage, and the balance and transaction views. The rules live in the
// sub-modules, each with its service and store: ledger/ (wallets, entries, reservations), pricing/
// (the price list, admission, settlement), payments/ (checkouts, auto-recharge, subscriptions,
// providers) and reports/ (the usage rollups and report). docs/billing.md.
import type { AppContext } from '../../context.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { Page } from '../../platform/http/lists.ts';
import type { CallUsage } from './jobs.ts';
import * as ledger from './ledger/service.ts';
import { fromMicros } from './money.ts';
import { rechargeView, maybeRecharge } from './payments/service.ts';
import { priceCalls, priceSessions, type ProjectCall } from './pricing/service.ts';

export type { CallUsage, ProjectCall };
export { bucketStart, nextBucket } from './reports/service.ts';

/** Wallets that differ from their ledger's sum (or reservations); empty when the books hold. */
export async function verifyLedger(db: Db, projectId?: string): Promise<ledger.Mismatch[]> {
  return ledger.mismatches(db, projectId);
}

/** An adjustment (an operator's credit or debit), once per idempotency key; a debit may start an auto-recharge. */
export async function adjust(ctx: AppContext, projectId: string, amount: bigint, idempotencyKey: string, description: string) {
  return ctx.db.transaction(async (tx) => {
    const posted = await ledger.postEntry(tx, { projectId, type: 'adjustment', amountMicros: amount, idempotencyKey: `adjustment:${idempotencyKey}`, description, referenceType: 'adjustment' });
    if (posted && amount < 0n) await maybeRecharge(tx, projectId);
    return posted;
  });
}

/** Reverses an entry with an opposite one (at most once); the entry itself stays. */
export async function reverse(ctx: AppContext, projectId: string, entryId: string, description: string) {
  return ctx.db.transaction((tx) => ledger.reverseEntry(tx, projectId, entryId, description));
}

/** Prices calls in the caller's transaction (what a settlement of pricing jobs does); the request ids debited. */
export async function priceUsages(ctx: AppContext, tx: Db, calls: readonly ProjectCall[]): Promise<Set<string>> {
  return priceCalls(ctx, tx, calls);
}

/** Prices one call (see `priceUsages`); false when it was priced before or costs nothing to record. */
export async function priceUsage(ctx: AppContext, tx: Db, projectId: string, call: CallUsage): Promise<boolean> {
  return (await priceCalls(ctx, tx, [{ projectId, call }])).size > 0;
}

export { priceSessions };

export async function balanceView(ctx: AppContext, projectId: string, db: Db = ctx.db) {
  const [wallet, recharge] = await Promise.all([ledger.wallet(db, projectId), rechargeView(db, projectId)]);
  return {
    balance: fromMicros(wallet.balance),
    reserved: fromMicros(wallet.reserved),
    available: fromMicros(wallet.balance - wallet.reserved),
    currency: ctx.config.billing.currency,
    ...recharge,
  };
}

export async function listTransactions(ctx: AppContext, projectId: string, page: Page) {
  const { items, total } = await ledger.entries(ctx.db, projectId, page);
  return {
    transactions: items.map((e) => ({
      id: e.id,
      amount: fromMicros(e.amountMicros),
      balance_after: fromMicros(e.balanceAfterMicros),
      type: e.entryType,
      reference: e.reference,
      reference_type: e.referenceType,
      // The Dart SDK reads only this name (the TypeScript and Python SDKs accept either).
      referenceType: e.referenceType,
      description: e.description,
      created_at: e.createdAt.toISOString(),
    })),
    total,
  };
}

// Payments' tables: checkouts (credits, the subscription) with the provider that opened them, the
// provider events already processed, the saved payment method, the subscription, auto-recharge
// settings and attempts. Every query is keyed by the project id, except the lookups by a
// checkout's id (the local page's secret) and a provider's event id.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { bigint, boolean, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../../platform/db/columns.ts';
import type { Db } from '../../../platform/db/engine.ts';

export const checkoutsTable = pgTable('billing_checkouts', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  kind: text('kind').$type<'credits' | 'subscription'>().notNull(),
  amountMicros: bigint('amount_micros', { mode: 'bigint' }).notNull(),
  currency: text('currency'),
  quantity: integer('quantity').notNull(),
  successUrl: text('success_url').notNull(),
  cancelUrl: text('cancel_url').notNull(),
  provider: text('provider').notNull(),
  providerRef: text('provider_ref'),
  status: text('status').$type<'open' | 'completed' | 'canceled'>().notNull().default('open'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  completedAt: timestamptz('completed_at'),
});

export const paymentEventsTable = pgTable('billing_payment_events', {
  provider: text('provider').notNull(),
  eventId: text('event_id').notNull(),
  type: text('type').notNull(),
  processedAt: timestamptz('processed_at').notNull().defaultNow(),
});

export const paymentMethodsTable = pgTable('billing_payment_methods', {
  projectId: uuid('project_id').primaryKey(),
  provider: text('provider').notNull(),
  providerRef: text('provider_ref').notNull(),
  label: text('label').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export const subscriptionsTable = pgTable('billing_subscriptions', {
  projectId: uuid('project_id').primaryKey(),
  plan: text('plan').notNull(),
  status: text('status').notNull(),
  monthlyCreditMicros: bigint('monthly_credit_micros', { mode: 'bigint' }).notNull(),
  provider: text('provider').notNull(),
  providerRef: text('provider_ref'),
  currentPeriodStart: timestamptz('current_period_start').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export const autoRechargeTable = pgTable('billing_auto_recharge', {
  projectId: uuid('project_id').primaryKey(),
  enabled: boolean('enabled').notNull(),
  amountMicros: bigint('amount_micros', { mode: 'bigint' }).notNull(),
  thresholdMicros: bigint('threshold_micros', { mode: 'bigint' }).notNull(),
  monthlyBudgetMicros: bigint('monthly_budget_micros', { mode: 'bigint' }),
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  pausedReason: text('paused_reason'),
  lastRechargeAt: timestamptz('last_recharge_at'),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export const rechargesTable = pgTable('billing_recharges', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  period: text('period').notNull(),
  amountMicros: bigint('amount_micros', { mode: 'bigint' }).notNull(),
  status: text('status').$type<'pending' | 'succeeded' | 'failed'>().notNull(),
  providerRef: text('provider_ref'),
  error: text('error'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  settledAt: timestamptz('settled_at'),
});

export type CheckoutRow = typeof checkoutsTable.$inferSelect;
export type RechargeSettings = typeof autoRechargeTable.$inferSelect;

// ---------------------------------------------------------------- checkouts

export async function insertCheckout(db: Db, checkout: typeof checkoutsTable.$inferInsert): Promise<void> {
  await db.insert(checkoutsTable).values(checkout);
}

export async function findCheckout(db: Db, id: string): Promise<CheckoutRow | undefined> {
  const [row] = await db.select().from(checkoutsTable).where(eq(checkoutsTable.id, id));
  return row;
}

/** Moves an open checkout of `provider` to completed; undefined when it is not open, or another provider's. */
export async function markCompleted(tx: Db, id: string, provider: string): Promise<CheckoutRow | undefined> {
  const [row] = await tx.update(checkoutsTable).set({ status: 'completed', completedAt: new Date() })
    .where(and(eq(checkoutsTable.id, id), eq(checkoutsTable.provider, provider), eq(checkoutsTable.status, 'open'))).returning();
  return row;
}

export async function markCanceled(db: Db, id: string): Promise<void> {
  await db.update(checkoutsTable).set({ status: 'canceled' }).where(and(eq(checkoutsTable.id, id), eq(checkoutsTable.status, 'open')));
}

/** Records a provider event; false when it was recorded before (each is processed once). */
export async function recordEvent(tx: Db, provider: string, eventId: string, type: string): Promise<boolean> {
  const rows = await tx.insert(paymentEventsTable).values({ provider, eventId, type }).onConflictDoNothing().returning({ eventId: paymentEventsTable.eventId });
  return rows.length > 0;
}

// ---------------------------------------------------------------- payment methods and subscriptions

export async function savePaymentMethod(tx: Db, projectId: string, provider: string, providerRef: string, label: string): Promise<void> {
  await tx.insert(paymentMethodsTable).values({ projectId, provider, providerRef, label })
    .onConflictDoUpdate({ target: paymentMethodsTable.projectId, set: { provider, providerRef, label, createdAt: new Date() } });
}

export async function paymentMethod(db: Db, projectId: string): Promise<typeof paymentMethodsTable.$inferSelect | undefined> {
  const [row] = await db.select().from(paymentMethodsTable).where(eq(paymentMethodsTable.projectId, projectId));
  return row;
}

export async function startSubscription(tx: Db, projectId: string, monthlyCreditMicros: bigint, provider: string, providerRef: string): Promise<void> {
  const now = new Date();
  await tx.insert(subscriptionsTable).values({ projectId, plan: 'monthly', status: 'active', monthlyCreditMicros, provider, providerRef, currentPeriodStart: now })
    .onConflictDoUpdate({ target: subscriptionsTable.projectId, set: { status: 'active', monthlyCreditMicros, providerRef, currentPeriodStart: now, updatedAt: now } });
}

export async function subscription(db: Db, projectId: string): Promise<typeof subscriptionsTable.$inferSelect | undefined> {
  const [row] = await db.select().from(subscriptionsTable).where(eq(subscriptionsTable.projectId, projectId));
  return row;
}

// ---------------------------------------------------------------- auto-recharge

export async function rechargeSettings(db: Db, projectId: string, lock = false): Promise<RechargeSettings | undefined> {
  const query = db.select().from(autoRechargeTable).where(eq(autoRechargeTable.projectId, projectId));
  const [row] = lock ? await query.for('update') : await query;
  return row;
}

export async function saveRechargeSettings(tx: Db, projectId: string, settings: Pick<RechargeSettings, 'enabled' | 'amountMicros' | 'thresholdMicros' | 'monthlyBudgetMicros'>): Promise<void> {
  await tx.insert(autoRechargeTable).values({ projectId, ...settings })
    .onConflictDoUpdate({ target: autoRechargeTable.projectId, set: { ...settings, consecutiveFailures: 0, pausedReason: null, updatedAt: new Date() } });
}

/** A new card lifts a pause caused by the old one. */
export async function liftPause(tx: Db, projectId: string): Promise<void> {
  await tx.update(autoRechargeTable).set({ pausedReason: null, consecutiveFailures: 0 }).where(eq(autoRechargeTable.projectId, projectId));
}

/** The month's recharges in the given states, summed. */
export async function rechargedInPeriod(db: Db, projectId: string, period: string, statuses: readonly ('pending' | 'succeeded')[]): Promise<bigint> {
  const [row] = await db.select({ total: sql<string>`coalesce(sum(${rechargesTable.amountMicros}), 0)`.mapWith((v: string) => BigInt(v)) }).from(rechargesTable)
    .where(and(eq(rechargesTable.projectId, projectId), eq(rechargesTable.period, period), inArray(rechargesTable.status, [...statuses])));
  return row!.total;
}

/** A pending recharge, unless one is pending already (a partial unique index allows one). */
export async function insertPendingRecharge(tx: Db, recharge: { id: string; projectId: string; period: string; amountMicros: bigint }): Promise<boolean> {
  const rows = await tx.insert(rechargesTable).values({ ...recharge, status: 'pending' })
    .onConflictDoNothing({ target: rechargesTable.projectId, where: sql`status = 'pending'` }).returning({ id: rechargesTable.id });
  return rows.length > 0;
}

export async function findRecharge(db: Db, projectId: string, id: string): Promise<(typeof rechargesTable.$inferSelect) | undefined> {
  const [row] = await db.select().from(rechargesTable).where(and(eq(rechargesTable.projectId, projectId), eq(rechargesTable.id, id)));
  return row;
}

/** Settles a pending recharge; false when it was settled before. */
export async function settleRecharge(tx: Db, projectId: string, id: string, outcome: { status: 'succeeded' | 'failed'; providerRef: string; error?: string | undefined }): Promise<boolean> {
  const rows = await tx.update(rechargesTable).set({ status: outcome.status, providerRef: outcome.providerRef || null, error: outcome.error ?? null, settledAt: new Date() })
    .where(and(eq(rechargesTable.projectId, projectId), eq(rechargesTable.id, id), eq(rechargesTable.status, 'pending'))).returning({ id: rechargesTable.id });
  return rows.length > 0;
}

export async function rechargeSucceeded(tx: Db, projectId: string): Promise<void> {
  const now = new Date();
  await tx.update(autoRechargeTable).set({ consecutiveFailures: 0, lastRechargeAt: now, updatedAt: now }).where(eq(autoRechargeTable.projectId, projectId));
}

/** Counts a failed recharge; at `pauseAfter` failures in a row, auto-recharge pauses with `reason`. */
export async function rechargeFailed(tx: Db, projectId: string, pauseAfter: number, reason: string): Promise<void> {
  await tx.update(autoRechargeTable).set({
    consecutiveFailures: sql`${autoRechargeTable.consecutiveFailures} + 1`,
    updatedAt: new Date(),
    pausedReason: sql`case when ${autoRechargeTable.consecutiveFailures} + 1 >= ${pauseAfter} then ${reason} else ${autoRechargeTable.pausedReason} end`,
  }).where(eq(autoRechargeTable.projectId, projectId));
}

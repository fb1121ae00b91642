// Deliveries of events to webhooks and their attempts. Every query is keyed by the project id.
import { and, desc, eq, sql } from 'drizzle-orm';
import { bigint, boolean, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { preparedPerDb } from '../../platform/db/statements.ts';
import { eventsTable, type EventRow } from '../../platform/events/store.ts';
import { countRows, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { rowsOf, tableRows } from '../../platform/db/rows.ts';
import { webhooksTable, type WebhookRow } from './store.ts';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

export const webhookDeliveriesTable = pgTable('webhook_deliveries', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  webhookId: uuid('webhook_id').notNull(),
  eventId: uuid('event_id').notNull(),
  status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
  attemptCount: integer('attempt_count').notNull().default(0),
  nextAttemptAt: timestamptz('next_attempt_at'),
  nextTrigger: text('next_trigger').$type<'scheduled' | 'manual'>().notNull().default('scheduled'),
  lastAttemptAt: timestamptz('last_attempt_at'),
  lastHttpStatus: integer('last_http_status'),
  lastError: text('last_error'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export const webhookAttemptsTable = pgTable('webhook_attempts', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  deliveryId: uuid('delivery_id').notNull(),
  attempt: integer('attempt').notNull(),
  trigger: text('trigger').notNull(),
  startedAt: timestamptz('started_at').notNull(),
  latencyMs: integer('latency_ms').notNull(),
  succeeded: boolean('succeeded').notNull(),
  httpStatus: integer('http_status'),
  responseExcerpt: text('response_excerpt'),
  error: text('error'),
});
export type DeliveryRow = typeof webhookDeliveriesTable.$inferSelect;
export type AttemptRow = typeof webhookAttemptsTable.$inferSelect;
const attemptRows = tableRows(webhookAttemptsTable);

export interface SendableDelivery {
  delivery: DeliveryRow;
  event: EventRow;
  webhook: WebhookRow;
}

// Every attempt runs this query: build it once per database handle.
const loadForSendStatement = preparedPerDb((db) => db.select({ delivery: webhookDeliveriesTable, event: eventsTable, webhook: webhooksTable })
  .from(webhookDeliveriesTable)
  .innerJoin(eventsTable, eq(eventsTable.id, webhookDeliveriesTable.eventId))
  .innerJoin(webhooksTable, eq(webhooksTable.id, webhookDeliveriesTable.webhookId))
  .where(and(eq(webhookDeliveriesTable.projectId, sql.placeholder('projectId')), eq(webhookDeliveriesTable.id, sql.placeholder('deliveryId'))))
  .prepare('webhook_delivery_for_send'));

/** What a batch of attempts needs, in one query, by delivery id. */
export async function loadManyForSend(db: Db, keys: readonly { projectId: string; deliveryId: string }[]): Promise<Map<string, SendableDelivery>> {
  const rows = await db.select({ delivery: webhookDeliveriesTable, event: eventsTable, webhook: webhooksTable })
    .from(webhookDeliveriesTable)
    .innerJoin(eventsTable, eq(eventsTable.id, webhookDeliveriesTable.eventId))
    .innerJoin(webhooksTable, eq(webhooksTable.id, webhookDeliveriesTable.webhookId))
    .where(sql`(${webhookDeliveriesTable.projectId}, ${webhookDeliveriesTable.id}) in (
      select p, d from jsonb_to_recordset(${JSON.stringify(keys.map((k) => ({ p: k.projectId, d: k.deliveryId })))}::jsonb) as x(p uuid, d uuid))`);
  return new Map(rows.map((r) => [r.delivery.id, r]));
}

/** Everything one attempt needs, in one query. */
export async function loadForSend(db: Db, projectId: string, deliveryId: string): Promise<SendableDelivery | undefined> {
  const [row] = await loadForSendStatement(db).execute({ projectId, deliveryId });
  return row as SendableDelivery | undefined;
}

export interface AttemptRecord {
  deliveryId: string;
  attempt: number;
  trigger: string;
  startedAt: Date;
  latencyMs: number;
  succeeded: boolean;
  httpStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
  /** The delivery's state after this attempt. */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/** An attempt of a delivery of a project's webhook. */
export type ProjectAttempt = AttemptRecord & { projectId: string };

/**
 * Appends attempts and moves their deliveries to their new states, in one statement however many
 * (the attempts of the deliveries a worker settles together are written together).
 */
export async function recordAttempts(db: Db, attempts: readonly ProjectAttempt[]): Promise<void> {
  if (attempts.length === 0) return;
  const input = JSON.stringify(attempts.map((a) => ({
    project_id: a.projectId, delivery_id: a.deliveryId, attempt: a.attempt, trigger: a.trigger, started_at: a.startedAt.toISOString(),
    latency_ms: a.latencyMs, succeeded: a.succeeded, http_status: a.httpStatus, response_excerpt: a.responseExcerpt, error: a.error,
    status: a.status, next_attempt_at: a.nextAttemptAt?.toISOString() ?? null,
  })));
  await db.execute(sql`
    with input as (
      select * from jsonb_to_recordset(${input}::jsonb) as x(project_id uuid, delivery_id uuid, attempt int, trigger text, started_at timestamptz,
        latency_ms int, succeeded boolean, http_status int, response_excerpt text, error text, status text, next_attempt_at timestamptz)
    ), delivery as (
      update webhook_deliveries d set
        status = i.status, attempt_count = i.attempt, next_attempt_at = i.next_attempt_at, next_trigger = 'scheduled',
        last_attempt_at = i.started_at, last_http_status = i.http_status, last_error = i.error
      from input i where d.project_id = i.project_id and d.id = i.delivery_id
      returning d.id
    )
    insert into webhook_attempts (delivery_id, attempt, trigger, started_at, latency_ms, succeeded, http_status, response_excerpt, error)
    select i.delivery_id, i.attempt, i.trigger, i.started_at, i.latency_ms, i.succeeded, i.http_status, i.response_excerpt, i.error
    from input i join delivery on delivery.id = i.delivery_id`);
}

/** Appends one attempt and moves its delivery to its new state (see `recordAttempts`). */
export async function recordAttempt(db: Db, projectId: string, a: AttemptRecord): Promise<void> {
  await recordAttempts(db, [{ ...a, projectId }]);
}

export async function cancelDelivery(db: Db, projectId: string, deliveryId: string, reason: string): Promise<void> {
  await db.update(webhookDeliveriesTable).set({ status: 'cancelled', nextAttemptAt: null, lastError: reason })
    .where(and(eq(webhookDeliveriesTable.projectId, projectId), eq(webhookDeliveriesTable.id, deliveryId), eq(webhookDeliveriesTable.status, 'pending')));
}

export async function findDelivery(db: Db, projectId: string, webhookId: string, deliveryId: string): Promise<(DeliveryRow & { eventType: string; eventData: Record<string, unknown> }) | undefined> {
  const [row] = await db.select({ delivery: webhookDeliveriesTable, type: eventsTable.type, data: eventsTable.data })
    .from(webhookDeliveriesTable)
    .innerJoin(eventsTable, eq(eventsTable.id, webhookDeliveriesTable.eventId))
    .where(and(eq(webhookDeliveriesTable.projectId, projectId), eq(webhookDeliveriesTable.webhookId, webhookId), eq(webhookDeliveriesTable.id, deliveryId)));
  return row ? { ...row.delivery, eventType: row.type, eventData: row.data } : undefined;
}

/** Marks a delivery for a manual attempt now. */
export async function requestRedelivery(db: Db, projectId: string, deliveryId: string, at: Date): Promise<void> {
  await db.update(webhookDeliveriesTable).set({ status: 'pending', nextAttemptAt: at, nextTrigger: 'manual' })
    .where(and(eq(webhookDeliveriesTable.projectId, projectId), eq(webhookDeliveriesTable.id, deliveryId)));
}

export async function listDeliveries(db: Db, projectId: string, webhookId: string, page: Page & { status?: DeliveryStatus | undefined }) {
  const where = and(
    eq(webhookDeliveriesTable.projectId, projectId),
    eq(webhookDeliveriesTable.webhookId, webhookId),
    page.status ? eq(webhookDeliveriesTable.status, page.status) : undefined,
  );
  const rows = await db.select({ delivery: webhookDeliveriesTable, type: eventsTable.type, data: eventsTable.data, total: windowTotal })
    .from(webhookDeliveriesTable)
    .innerJoin(eventsTable, eq(eventsTable.id, webhookDeliveriesTable.eventId))
    .where(where)
    .orderBy(desc(webhookDeliveriesTable.createdAt), desc(webhookDeliveriesTable.id))
    .limit(page.limit).offset(page.offset);
  const { items, total } = await pageResult(rows, page, () => countRows(db, webhookDeliveriesTable, where));
  return { rows: items.map((r) => ({ ...r.delivery, eventType: r.type, eventData: r.data })), total };
}

/** The latest `perDelivery` attempts of each delivery, oldest first. */
export async function attemptsOf(db: Db, projectId: string, deliveryIds: string[], perDelivery: number): Promise<Map<string, AttemptRow[]>> {
  const out = new Map<string, AttemptRow[]>();
  if (deliveryIds.length === 0) return out;
  // Joined to deliveries of the project so that ids from elsewhere return nothing.
  const result = await db.execute(sql`
    select a.*
    from webhook_deliveries d
    cross join lateral (
      select * from webhook_attempts a where a.delivery_id = d.id order by a.id desc limit ${perDelivery}
    ) a
    where d.project_id = ${projectId}::uuid and d.id in (select value::uuid from jsonb_array_elements_text(${JSON.stringify(deliveryIds)}::jsonb))
    order by a.id`);
  for (const row of attemptRows.of(result)) {
    const list = out.get(row.deliveryId) ?? [];
    list.push(row);
    out.set(row.deliveryId, list);
  }
  return out;
}

/**
 * Deletes up to `limit` finished deliveries (not pending) created before `before`, with their
 * attempts, in one short statement; how many of each.
 */
export async function pruneFinished(db: Db, before: Date, limit: number): Promise<{ deliveries: number; attempts: number }> {
  const [row] = rowsOf<{ deliveries: number; attempts: number }>(await db.execute(sql`
    with picked as (
      select id from webhook_deliveries where status <> 'pending' and created_at < ${before.toISOString()}::timestamptz order by created_at limit ${limit}
    ),
    attempts as (delete from webhook_attempts where delivery_id in (select id from picked) returning 1),
    gone as (delete from webhook_deliveries where id in (select id from picked) returning 1)
    select (select count(*) from gone)::int as deliveries, (select count(*) from attempts)::int as attempts`));
  return { deliveries: Number(row?.deliveries ?? 0), attempts: Number(row?.attempts ?? 0) };
}

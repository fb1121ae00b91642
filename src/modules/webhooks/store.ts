// Webhook registrations. Every query is keyed by the project id.
import { and, asc, count, eq, ilike, or, sql } from 'drizzle-orm';
import { boolean, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { likeContains } from '../../platform/http/lists.ts';

export const webhooksTable = pgTable('webhooks', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  url: text('url').notNull(),
  events: text('events').array().notNull(),
  action: text('action').notNull().default(''),
  payload: jsonb('payload').$type<Record<string, unknown> | null>(),
  secretEncrypted: text('secret_encrypted'),
  previousSecretEncrypted: text('previous_secret_encrypted'),
  previousSecretExpiresAt: timestamptz('previous_secret_expires_at'),
  enabled: boolean('enabled').notNull().default(true),
  disabledReason: text('disabled_reason'),
  failingSince: timestamptz('failing_since'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});
export type WebhookRow = typeof webhooksTable.$inferSelect;

export async function insertWebhook(db: Db, row: typeof webhooksTable.$inferInsert): Promise<WebhookRow> {
  const [inserted] = await db.insert(webhooksTable).values(row).returning();
  return inserted!;
}

export async function findWebhook(db: Db, projectId: string, id: string): Promise<WebhookRow | undefined> {
  const [row] = await db.select().from(webhooksTable).where(and(eq(webhooksTable.projectId, projectId), eq(webhooksTable.id, id)));
  return row;
}

/** Locks the row for a read-modify-write (secret rotation). */
export async function findWebhookForUpdate(db: Db, projectId: string, id: string): Promise<WebhookRow | undefined> {
  const [row] = await db.select().from(webhooksTable).where(and(eq(webhooksTable.projectId, projectId), eq(webhooksTable.id, id))).for('update');
  return row;
}

/** The project's webhooks, those whose name or URL contains `filter` when one is given. */
export async function listWebhooks(db: Db, projectId: string, filter: string | undefined): Promise<WebhookRow[]> {
  const matching = filter ? or(ilike(webhooksTable.name, likeContains(filter)), ilike(webhooksTable.url, likeContains(filter))) : undefined;
  return db.select().from(webhooksTable).where(and(eq(webhooksTable.projectId, projectId), matching)).orderBy(asc(webhooksTable.createdAt), asc(webhooksTable.id));
}

export async function countWebhooks(db: Db, projectId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(webhooksTable).where(eq(webhooksTable.projectId, projectId));
  return Number(row?.n ?? 0);
}

export async function updateWebhook(db: Db, projectId: string, id: string, changes: Partial<typeof webhooksTable.$inferInsert>): Promise<WebhookRow | undefined> {
  const [row] = await db.update(webhooksTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(webhooksTable.projectId, projectId), eq(webhooksTable.id, id))).returning();
  return row;
}

export async function deleteWebhook(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(webhooksTable).where(and(eq(webhooksTable.projectId, projectId), eq(webhooksTable.id, id))).returning({ id: webhooksTable.id });
  return rows.length > 0;
}

/** Health bookkeeping after an attempt: start or clear the failing streak, or disable. */
export async function setWebhookHealth(db: Db, projectId: string, id: string, change: { failingSince: Date | null } | { disabledReason: string }): Promise<void> {
  const where = and(eq(webhooksTable.projectId, projectId), eq(webhooksTable.id, id));
  if ('disabledReason' in change) {
    await db.update(webhooksTable).set({ enabled: false, disabledReason: change.disabledReason, updatedAt: new Date() }).where(and(where, eq(webhooksTable.enabled, true)));
  } else if (change.failingSince) {
    await db.update(webhooksTable).set({ failingSince: sql`coalesce(${webhooksTable.failingSince}, ${change.failingSince.toISOString()}::timestamptz)` }).where(where);
  } else {
    await db.update(webhooksTable).set({ failingSince: null }).where(where);
  }
}

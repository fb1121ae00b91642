// LLM loggers of a project. Every query is keyed by the project id.
import { and, asc, eq, getTableColumns, ilike } from 'drizzle-orm';
import { boolean, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';

export const loggersTable = pgTable('llm_loggers', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  destinationFeedId: uuid('destination_feed_id').notNull(),
  filterExpression: text('filter_expression').notNull(),
  paused: boolean('paused').notNull().default(false),
  annotations: jsonb('annotations').$type<Record<string, string>>().notNull().default({}),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});
export type LoggerRow = typeof loggersTable.$inferSelect;

export async function insertLogger(db: Db, row: typeof loggersTable.$inferInsert): Promise<LoggerRow> {
  const [inserted] = await db.insert(loggersTable).values(row).returning();
  return inserted!;
}

export async function findLogger(db: Db, projectId: string, id: string): Promise<LoggerRow | undefined> {
  const [row] = await db.select().from(loggersTable).where(and(eq(loggersTable.projectId, projectId), eq(loggersTable.id, id)));
  return row;
}

export async function listLoggers(db: Db, projectId: string, page: Page) {
  const where = and(eq(loggersTable.projectId, projectId), page.filter ? ilike(loggersTable.filterExpression, likeContains(page.filter)) : undefined);
  const rows = await db.select({ ...getTableColumns(loggersTable), total: windowTotal }).from(loggersTable).where(where)
    .orderBy(asc(loggersTable.createdAt), asc(loggersTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, loggersTable, where));
}

export async function updateLogger(db: Db, projectId: string, id: string, changes: Pick<LoggerRow, 'destinationFeedId' | 'filterExpression' | 'paused' | 'annotations'>): Promise<LoggerRow | undefined> {
  const [row] = await db.update(loggersTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(loggersTable.projectId, projectId), eq(loggersTable.id, id))).returning();
  return row;
}

export async function deleteLogger(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(loggersTable).where(and(eq(loggersTable.projectId, projectId), eq(loggersTable.id, id))).returning({ id: loggersTable.id });
  return rows.length > 0;
}

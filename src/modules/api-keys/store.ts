// Project API keys. Values are never stored: a SHA-256 of the secret for verification, and the
// secret encrypted for checking participant tokens applications sign with it.
import { and, asc, eq, ilike, or } from 'drizzle-orm';
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { likeContains } from '../../platform/http/lists.ts';

export const apiKeysTable = pgTable('api_keys', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  roles: text('roles').array(),
  secretHash: bytea('secret_hash').notNull(),
  secretEncrypted: text('secret_encrypted').notNull(),
  createdBy: uuid('created_by'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export type ApiKeyRow = typeof apiKeysTable.$inferSelect;

export async function insertApiKey(db: Db, key: typeof apiKeysTable.$inferInsert): Promise<ApiKeyRow> {
  const [row] = await db.insert(apiKeysTable).values(key).returning();
  return row!;
}

export async function findApiKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db.select().from(apiKeysTable).where(eq(apiKeysTable.id, id));
  return row;
}

/** The project's keys, those whose name or description contains `filter` when one is given. */
export async function listApiKeys(db: Db, projectId: string, filter: string | undefined): Promise<ApiKeyRow[]> {
  const matching = filter ? or(ilike(apiKeysTable.name, likeContains(filter)), ilike(apiKeysTable.description, likeContains(filter))) : undefined;
  return db.select().from(apiKeysTable).where(and(eq(apiKeysTable.projectId, projectId), matching)).orderBy(asc(apiKeysTable.createdAt), asc(apiKeysTable.id));
}

export async function deleteApiKey(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(apiKeysTable).where(and(eq(apiKeysTable.projectId, projectId), eq(apiKeysTable.id, id))).returning({ id: apiKeysTable.id });
  return rows.length > 0;
}

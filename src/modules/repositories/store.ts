// Image repositories of a project. Every query is keyed by the project id.
import { and, asc, eq, getTableColumns, ilike, inArray, sql } from 'drizzle-orm';
import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';

export const repositoriesTable = pgTable('repositories', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  annotations: jsonb('annotations').$type<Record<string, string>>().notNull().default({}),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type RepositoryRow = typeof repositoriesTable.$inferSelect;

/** Inserts unless the name is taken in the project; undefined on a name clash. */
export async function insertRepository(db: Db, repository: typeof repositoriesTable.$inferInsert): Promise<RepositoryRow | undefined> {
  const [row] = await db.insert(repositoriesTable).values(repository).onConflictDoNothing({ target: [repositoriesTable.projectId, repositoriesTable.name] }).returning();
  return row;
}

export async function findRepository(db: Db, projectId: string, id: string): Promise<RepositoryRow | undefined> {
  const [row] = await db.select().from(repositoriesTable).where(and(eq(repositoriesTable.projectId, projectId), eq(repositoriesTable.id, id)));
  return row;
}

export async function findRepositoryByName(db: Db, projectId: string, name: string): Promise<RepositoryRow | undefined> {
  const [row] = await db.select().from(repositoriesTable).where(and(eq(repositoriesTable.projectId, projectId), eq(repositoriesTable.name, name)));
  return row;
}

export async function updateRepository(db: Db, projectId: string, id: string, changes: Pick<RepositoryRow, 'name' | 'description' | 'annotations'>): Promise<RepositoryRow | undefined> {
  const [row] = await db.update(repositoriesTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(repositoriesTable.projectId, projectId), eq(repositoriesTable.id, id))).returning();
  return row;
}

export async function deleteRepository(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(repositoriesTable).where(and(eq(repositoriesTable.projectId, projectId), eq(repositoriesTable.id, id))).returning({ id: repositoriesTable.id });
  return rows.length > 0;
}

/** A page of the project's repositories: all of them, or those with these ids (the ones the caller sees). */
export async function listRepositories(db: Db, projectId: string, page: Page, shown: true | readonly string[]) {
  const ids = shown === true ? [] : shown.filter(isUuid);
  const only = shown === true ? undefined : ids.length > 0 ? inArray(repositoriesTable.id, ids) : sql`false`;
  const where = and(eq(repositoriesTable.projectId, projectId), only, page.filter ? ilike(repositoriesTable.name, likeContains(page.filter)) : undefined);
  const rows = await db.select({ ...getTableColumns(repositoriesTable), total: windowTotal }).from(repositoriesTable).where(where)
    .orderBy(asc(repositoriesTable.name), asc(repositoriesTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, repositoriesTable, where));
}

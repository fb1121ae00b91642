// Shares of a project. Management queries are keyed by the project id; connect looks a share up by
// its id alone (the token then proves the caller holds it).
import { and, asc, eq, getTableColumns, ilike, inArray, or, sql } from 'drizzle-orm';
import { jsonb, pgTable, uuid } from 'drizzle-orm/pg-core';
import { bytea, timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { roomsTable } from '../rooms/tables.ts';

export const sharesTable = pgTable('shares', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id').notNull(),
  grants: jsonb('grants').$type<Record<string, unknown>>().notNull(),
  settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
  expiresAt: timestamptz('expires_at'),
  tokenHash: bytea('token_hash').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type ShareRow = typeof sharesTable.$inferSelect;
export type ShareFields = Pick<ShareRow, 'roomId' | 'grants' | 'settings' | 'expiresAt'>;

const byId = (projectId: string, id: string) => and(eq(sharesTable.projectId, projectId), eq(sharesTable.id, id));

export async function insertShare(db: Db, share: typeof sharesTable.$inferInsert): Promise<ShareRow> {
  const [row] = await db.insert(sharesTable).values(share).returning();
  return row!;
}

export async function findShare(db: Db, projectId: string, id: string): Promise<ShareRow | undefined> {
  const [row] = await db.select().from(sharesTable).where(byId(projectId, id));
  return row;
}

/** For connect: the share with this id, in whichever project. */
export async function findShareForConnect(db: Db, id: string): Promise<ShareRow | undefined> {
  const [row] = await db.select().from(sharesTable).where(eq(sharesTable.id, id));
  return row;
}

export async function updateShare(db: Db, projectId: string, id: string, fields: ShareFields): Promise<ShareRow | undefined> {
  const [row] = await db.update(sharesTable).set({ ...fields, updatedAt: new Date() }).where(byId(projectId, id)).returning();
  return row;
}

export async function deleteShare(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(sharesTable).where(byId(projectId, id)).returning({ id: sharesTable.id });
  return rows.length > 0;
}

/** Shares whose label or room name contains `filter`. */
function matching(db: Db, projectId: string, filter: string) {
  const pattern = likeContains(filter);
  const rooms = db.select({ id: roomsTable.id }).from(roomsTable).where(and(eq(roomsTable.projectId, projectId), ilike(roomsTable.name, pattern)));
  return or(ilike(sql`${sharesTable.settings}->>'label'`, pattern), inArray(sharesTable.roomId, rooms));
}

export async function listShares(db: Db, projectId: string, page: Page) {
  const where = and(eq(sharesTable.projectId, projectId), page.filter ? matching(db, projectId, page.filter) : undefined);
  const rows = await db.select({ ...getTableColumns(sharesTable), total: windowTotal }).from(sharesTable).where(where)
    .orderBy(asc(sharesTable.createdAt), asc(sharesTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, sharesTable, where));
}

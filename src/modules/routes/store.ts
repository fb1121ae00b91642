// Routes: domains claimed by projects. The domain is unique across the deployment; every other query
// is keyed by the project id.
import { and, asc, eq, getTableColumns, ilike, type SQL } from 'drizzle-orm';
import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { roomsTable } from '../rooms/tables.ts';

export const routesTable = pgTable('routes', {
  domain: text('domain').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id'),
  agentName: text('agent_name'),
  spec: jsonb('spec').$type<Record<string, unknown>>().notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type RouteRow = typeof routesTable.$inferSelect;
/** A route with the current name of its room. */
export type RouteWithRoom = RouteRow & { roomName: string | null };

const withRoom = { ...getTableColumns(routesTable), roomName: roomsTable.name };

/** Inserts unless the domain is claimed (by any project); undefined then. */
export async function insertRoute(db: Db, row: typeof routesTable.$inferInsert): Promise<RouteRow | undefined> {
  const [inserted] = await db.insert(routesTable).values(row).onConflictDoNothing({ target: routesTable.domain }).returning();
  return inserted;
}

export async function findRoute(db: Db, projectId: string, domain: string): Promise<RouteWithRoom | undefined> {
  const [row] = await db.select(withRoom).from(routesTable).leftJoin(roomsTable, eq(roomsTable.id, routesTable.roomId))
    .where(and(eq(routesTable.projectId, projectId), eq(routesTable.domain, domain)));
  return row;
}

/** The project that claimed a domain: the one lookup not keyed by a project (ingress resolution). */
export async function projectOfDomain(db: Db, domain: string): Promise<string | undefined> {
  const [row] = await db.select({ projectId: routesTable.projectId }).from(routesTable).where(eq(routesTable.domain, domain));
  return row?.projectId;
}

export async function listRoutes(db: Db, projectId: string, roomId: string | undefined, page: Page) {
  const where: SQL | undefined = and(
    eq(routesTable.projectId, projectId),
    roomId === undefined ? undefined : eq(routesTable.roomId, roomId),
    page.filter ? ilike(routesTable.domain, likeContains(page.filter)) : undefined,
  );
  const rows = await db.select({ ...withRoom, total: windowTotal }).from(routesTable).leftJoin(roomsTable, eq(roomsTable.id, routesTable.roomId))
    .where(where).orderBy(asc(routesTable.domain)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, routesTable, where));
}

export async function updateRoute(db: Db, projectId: string, domain: string, changes: Pick<RouteRow, 'roomId' | 'agentName' | 'spec'>): Promise<boolean> {
  const rows = await db.update(routesTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(routesTable.projectId, projectId), eq(routesTable.domain, domain))).returning({ domain: routesTable.domain });
  return rows.length > 0;
}

export async function deleteRoute(db: Db, projectId: string, domain: string): Promise<boolean> {
  const rows = await db.delete(routesTable).where(and(eq(routesTable.projectId, projectId), eq(routesTable.domain, domain))).returning({ domain: routesTable.domain });
  return rows.length > 0;
}

// Services of a project: project-wide (room id null) or of one room. Every query is keyed by the
// project id and the scope.
import { and, asc, eq, getTableColumns, ilike, isNull, or, sql, type SQL } from 'drizzle-orm';
import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { preparedPerDb } from '../../platform/db/statements.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';

export const servicesTable = pgTable('services', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id'),
  name: text('name').notNull(),
  spec: jsonb('spec').$type<Record<string, unknown>>().notNull(),
  specSealed: text('spec_sealed'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type ServiceRow = typeof servicesTable.$inferSelect;

/** Project-wide services (room null) or one room's. */
export interface Scope {
  projectId: string;
  roomId: string | null;
}

function inScope(scope: Scope): SQL {
  return and(eq(servicesTable.projectId, scope.projectId), scope.roomId === null ? isNull(servicesTable.roomId) : eq(servicesTable.roomId, scope.roomId))!;
}

/** Inserts unless the name is taken in the scope; undefined on a name clash. */
export async function insertService(db: Db, row: typeof servicesTable.$inferInsert): Promise<ServiceRow | undefined> {
  const [inserted] = await db.insert(servicesTable).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function findService(db: Db, scope: Scope, id: string): Promise<ServiceRow | undefined> {
  const [row] = await db.select().from(servicesTable).where(and(inScope(scope), eq(servicesTable.id, id)));
  return row;
}

export async function findServiceByName(db: Db, scope: Scope, name: string): Promise<ServiceRow | undefined> {
  const [row] = await db.select().from(servicesTable).where(and(inScope(scope), eq(servicesTable.name, name)));
  return row;
}

/**
 * The name as callers see it: the shown spec's, where an obscure template value reads "********".
 * `name` holds the one a room server runs, so lists filter and sort by this one instead: matching
 * or ordering by the real name would tell a reader what the obscured part is.
 */
const shownName = sql<string>`(${servicesTable.spec} #>> '{metadata,name}')`;

export async function listServices(db: Db, scope: Scope, page: Page) {
  const where = and(inScope(scope), page.filter ? ilike(shownName, likeContains(page.filter)) : undefined);
  const rows = await db.select({ ...getTableColumns(servicesTable), total: windowTotal }).from(servicesTable).where(where)
    .orderBy(asc(shownName), asc(servicesTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, servicesTable, where));
}

export async function updateService(db: Db, scope: Scope, id: string, changes: Pick<ServiceRow, 'name' | 'spec' | 'specSealed'>): Promise<ServiceRow | undefined> {
  const [row] = await db.update(servicesTable).set({ ...changes, updatedAt: new Date() }).where(and(inScope(scope), eq(servicesTable.id, id))).returning();
  return row;
}

export async function deleteService(db: Db, scope: Scope, id: string): Promise<boolean> {
  const rows = await db.delete(servicesTable).where(and(inScope(scope), eq(servicesTable.id, id))).returning({ id: servicesTable.id });
  return rows.length > 0;
}

// What a room server reads when a room starts, and the benchmark's hot path: prepared once per handle.
const forRoom = preparedPerDb((db) => {
  const { id, roomId, name, specSealed } = servicesTable;
  // The shown spec only when there is no sealed one to run: parsing a spec nobody reads costs more
  // than the rest of the row.
  const spec = sql<ServiceRow['spec'] | null>`case when ${specSealed} is null then ${servicesTable.spec} end`;
  return db.select({ id, roomId, name, spec, specSealed }).from(servicesTable)
    .where(and(eq(servicesTable.projectId, sql.placeholder('projectId')), or(isNull(servicesTable.roomId), eq(servicesTable.roomId, sql.placeholder('roomId')))))
    .orderBy(asc(servicesTable.name), sql`${servicesTable.roomId} nulls first`)
    .prepare('services_for_room');
});

/** A service a room runs: its sealed spec, or (only when there is none) its shown one. */
export type ServiceForRoom = Pick<ServiceRow, 'id' | 'roomId' | 'name'> & ({ specSealed: string; spec: null } | { specSealed: null; spec: ServiceRow['spec'] });

/** The project's services and the room's, by name (a name's project service first). */
export async function servicesForRoom(db: Db, projectId: string, roomId: string): Promise<ServiceForRoom[]> {
  return forRoom(db).execute({ projectId, roomId }) as Promise<ServiceForRoom[]>;
}

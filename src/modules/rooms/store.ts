// Rooms of a project. Every query is keyed by the project id.
import { and, asc, eq, getTableColumns, ilike, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/engine.ts';
import { preparedPerDb } from '../../platform/db/statements.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { roomsTable } from './tables.ts';

export type RoomRow = typeof roomsTable.$inferSelect;

// The authenticated room read is the hottest query, and a room's insert the hottest write: each is
// prepared once per database handle.
const byName = preparedPerDb((db) => db.select().from(roomsTable)
  .where(and(eq(roomsTable.projectId, sql.placeholder('projectId')), eq(roomsTable.name, sql.placeholder('name'))))
  .prepare('room_by_name'));

const insert = preparedPerDb((db) => db.insert(roomsTable).values({
  id: sql.placeholder('id'), projectId: sql.placeholder('projectId'), name: sql.placeholder('name'),
  metadata: sql.placeholder('metadata'), annotations: sql.placeholder('annotations'), permissions: sql.placeholder('permissions'),
}).onConflictDoNothing({ target: [roomsTable.projectId, roomsTable.name] }).returning().prepare('room_insert'));

export async function findRoomByName(db: Db, projectId: string, name: string): Promise<RoomRow | undefined> {
  const [row] = await byName(db).execute({ projectId, name });
  return row as RoomRow | undefined;
}

export async function findRoomById(db: Db, projectId: string, id: string): Promise<RoomRow | undefined> {
  const [row] = await db.select().from(roomsTable).where(and(eq(roomsTable.projectId, projectId), eq(roomsTable.id, id)));
  return row;
}

export async function findRoomNames(db: Db, projectId: string, ids: readonly string[]): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0) return [];
  return db.select({ id: roomsTable.id, name: roomsTable.name }).from(roomsTable).where(and(eq(roomsTable.projectId, projectId), inArray(roomsTable.id, [...ids])));
}

/** Inserts unless the name is taken; returns undefined on a name clash. */
export async function insertRoom(db: Db, room: Pick<RoomRow, 'id' | 'projectId' | 'name' | 'metadata' | 'annotations' | 'permissions'>): Promise<RoomRow | undefined> {
  const [row] = await insert(db).execute(room);
  return row as RoomRow | undefined;
}

export async function updateRoom(db: Db, projectId: string, id: string, changes: Partial<Pick<RoomRow, 'name' | 'metadata' | 'annotations'>>): Promise<RoomRow | undefined> {
  const [row] = await db.update(roomsTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(roomsTable.projectId, projectId), eq(roomsTable.id, id))).returning();
  return row;
}

export async function deleteRoom(db: Db, projectId: string, id: string): Promise<RoomRow | undefined> {
  const [row] = await db.delete(roomsTable).where(and(eq(roomsTable.projectId, projectId), eq(roomsTable.id, id))).returning();
  return row;
}

export const ROOM_ORDERS = { room_name: [asc(roomsTable.name)], created_at: [asc(roomsTable.createdAt)] } as const;

export async function listRooms(db: Db, projectId: string, page: Page & { orderBy: keyof typeof ROOM_ORDERS }) {
  const where = and(eq(roomsTable.projectId, projectId), page.filter ? ilike(roomsTable.name, likeContains(page.filter)) : undefined);
  const rows = await db.select({ ...getTableColumns(roomsTable), total: windowTotal }).from(roomsTable).where(where)
    .orderBy(...ROOM_ORDERS[page.orderBy], asc(roomsTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, roomsTable, where));
}

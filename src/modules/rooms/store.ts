// Rooms of a project. Every query is keyed by the project id.
import { and, asc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { roomsTable } from './tables.ts';

export type RoomRow = typeof roomsTable.$inferSelect;

// The authenticated room read is the hottest query: prepare it once per database handle.
const byNameStatements = new WeakMap<Db, ReturnType<typeof prepareByName>>();
function prepareByName(db: Db) {
  return db.select().from(roomsTable)
    .where(and(eq(roomsTable.projectId, sql.placeholder('projectId')), eq(roomsTable.name, sql.placeholder('name'))))
    .prepare('room_by_name');
}

export async function findRoomByName(db: Db, projectId: string, name: string): Promise<RoomRow | undefined> {
  let statement = byNameStatements.get(db);
  if (!statement) byNameStatements.set(db, (statement = prepareByName(db)));
  const [row] = await statement.execute({ projectId, name });
  return row as RoomRow | undefined;
}

/** Inserts unless the name is taken; returns undefined on a name clash. */
export async function insertRoom(db: Db, room: typeof roomsTable.$inferInsert): Promise<RoomRow | undefined> {
  const [row] = await db.insert(roomsTable).values(room).onConflictDoNothing({ target: [roomsTable.projectId, roomsTable.name] }).returning();
  return row;
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
  const where = eq(roomsTable.projectId, projectId);
  const rows = await db.select({ ...getTableColumns(roomsTable), total: windowTotal }).from(roomsTable).where(where)
    .orderBy(...ROOM_ORDERS[page.orderBy], asc(roomsTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, roomsTable, where));
}

// Rooms of a project. Every query is keyed by the project id.
import { and, asc, eq, getTableColumns, ilike, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/engine.ts';
import { tableRows } from '../../platform/db/rows.ts';
import type { EventCause, SingleCause } from '../../platform/events/emit.ts';
import { preparedPerDb } from '../../platform/db/statements.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { roomsTable } from './tables.ts';

export type RoomRow = typeof roomsTable.$inferSelect;

// The authenticated room read is the hottest query: prepared once per database handle.
const byName = preparedPerDb((db) => db.select().from(roomsTable)
  .where(and(eq(roomsTable.projectId, sql.placeholder('projectId')), eq(roomsTable.name, sql.placeholder('name'))))
  .prepare('room_by_name'));

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

/**
 * A room's insert, unless the name is taken, as the cause of a change (`AuditLog.change` writes it
 * with the request's audit entry in one statement); its `room` column reads with `roomFromJson`.
 */
export function roomInsert(room: Pick<RoomRow, 'id' | 'projectId' | 'name' | 'metadata' | 'annotations' | 'permissions'>): EventCause<SingleCause> {
  return {
    name: 'room-insert',
    build: buildRoomInsert,
    values: {
      room_id: room.id, room_project_id: room.projectId, room_name: room.name,
      room_metadata: JSON.stringify(room.metadata), room_annotations: JSON.stringify(room.annotations), room_permissions: JSON.stringify(room.permissions),
    },
  };
}

function buildRoomInsert(): SingleCause {
  const v = (name: string) => sql.placeholder(name);
  return {
    ctes: sql`room as (
      insert into rooms (id, project_id, name, metadata, annotations, permissions)
      values (${v('room_id')}::uuid, ${v('room_project_id')}::uuid, ${v('room_name')}::text, ${v('room_metadata')}::jsonb, ${v('room_annotations')}::jsonb, ${v('room_permissions')}::jsonb)
      on conflict (project_id, name) do nothing
      returning *
    )`,
    happened: sql`exists (select 1 from room)`,
    result: sql`(select row_to_json(r) from room r) as room`,
  };
}

const roomRows = tableRows(roomsTable);
/** The `room` column of an insert's result: the new room, or undefined when the name was taken. */
export const roomFromJson = (json: unknown): RoomRow | undefined => roomRows.fromJson(json);

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

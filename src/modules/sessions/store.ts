// Room sessions as reported by room servers. Every query is keyed by the project id.
import { and, eq, isNull, sql } from 'drizzle-orm';
import { jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { Db } from '../../platform/db/engine.ts';
import { roomsTable } from '../rooms/store.ts';

export const roomSessionsTable = pgTable('room_sessions', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id'),
  roomName: text('room_name').notNull(),
  startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  endedAt: timestamp('ended_at', { withTimezone: true, mode: 'date' }),
  participants: jsonb('participants').$type<Record<string, number>>().notNull().default({}),
});

export type SessionRow = typeof roomSessionsTable.$inferSelect;

/**
 * Inserts unless the id exists (in any project); undefined then. The session points at the
 * project's registered room of that name, if there is one.
 */
export async function insertSession(db: Db, row: Omit<typeof roomSessionsTable.$inferInsert, 'roomId'>): Promise<SessionRow | undefined> {
  const roomId = sql`(select ${roomsTable.id} from ${roomsTable} where ${roomsTable.projectId} = ${row.projectId} and ${roomsTable.name} = ${row.roomName})`;
  const [inserted] = await db.insert(roomSessionsTable).values({ ...row, roomId }).onConflictDoNothing({ target: roomSessionsTable.id }).returning();
  return inserted;
}

export async function findSession(db: Db, projectId: string, id: string): Promise<SessionRow | undefined> {
  const [row] = await db.select().from(roomSessionsTable).where(and(eq(roomSessionsTable.projectId, projectId), eq(roomSessionsTable.id, id)));
  return row;
}

/** Ends a session still running; undefined when there is none (missing or already ended). */
export async function endSession(db: Db, projectId: string, id: string, participants: Record<string, number> | undefined): Promise<SessionRow | undefined> {
  const [row] = await db.update(roomSessionsTable)
    .set({ endedAt: sql`now()`, ...(participants ? { participants } : {}) })
    .where(and(eq(roomSessionsTable.projectId, projectId), eq(roomSessionsTable.id, id), isNull(roomSessionsTable.endedAt)))
    .returning();
  return row;
}

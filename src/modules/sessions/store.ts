// Room sessions as reported by room servers. Every query is keyed by the project id.
import { and, eq, isNull, sql } from 'drizzle-orm';
import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';

export const roomSessionsTable = pgTable('room_sessions', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id'),
  roomName: text('room_name').notNull(),
  startedAt: timestamptz('started_at').notNull().defaultNow(),
  endedAt: timestamptz('ended_at'),
  participants: jsonb('participants').$type<Record<string, number>>().notNull().default({}),
});

export type SessionRow = typeof roomSessionsTable.$inferSelect;

/**
 * Inserting a session (unless the id exists, in any project), as WITH items for the statement that
 * also emits its event: the session points at the project's registered room of that name, if any.
 * The CTE `session` holds the inserted row (none when the id exists); `happened` says whether there is one;
 * `result` returns it as JSON in a column `session` (read it with sessionFromJson).
 */
export function insertSessionSql(row: { id: string; projectId: string; roomName: string; participants: Record<string, number> }) {
  return {
    ctes: sql`session as (
      insert into room_sessions (id, project_id, room_id, room_name, participants)
      values (${row.id}::uuid, ${row.projectId}::uuid,
        (select id from rooms where project_id = ${row.projectId}::uuid and name = ${row.roomName}),
        ${row.roomName}, ${JSON.stringify(row.participants)}::jsonb)
      on conflict (id) do nothing
      returning id, room_id, room_name, started_at, ended_at, participants, project_id
    )`,
    happened: sql`exists (select 1 from session)`,
    result: sql`(select row_to_json(s) from session s) as session`,
  };
}

/** A row of the `session` CTE as row_to_json gives it; undefined for none. */
export function sessionFromJson(json: unknown): SessionRow | undefined {
  if (json === null || json === undefined) return undefined;
  const r = (typeof json === 'string' ? JSON.parse(json) : json) as Record<string, unknown>;
  return {
    id: r.id as string,
    projectId: r.project_id as string,
    roomId: (r.room_id as string | null) ?? null,
    roomName: r.room_name as string,
    startedAt: new Date(r.started_at as string),
    endedAt: r.ended_at === null || r.ended_at === undefined ? null : new Date(r.ended_at as string),
    participants: r.participants as Record<string, number>,
  };
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

// Room sessions: room servers (outside Atrium) report when a session starts and ends. Each report
// commits the session record and its room.started / room.ended event together. Reports are
// idempotent, because a room server retries when it does not hear back: a repeated start or end
// returns the session as it is and emits nothing.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { conflict, notFound } from '../../platform/http/errors.ts';
import { roomUrl } from '../rooms/service.ts';
import { roomEnded, roomStarted } from './events.ts';
import * as store from './store.ts';

export function sessionView(row: store.SessionRow) {
  return {
    id: row.id,
    room_id: row.roomId,
    room_name: row.roomName,
    kind: 'room' as const,
    created_at: row.startedAt.toISOString(),
    started_at: row.startedAt.toISOString(),
    ended_at: row.endedAt ? row.endedAt.toISOString() : null,
    is_active: row.endedAt === null,
    participants: row.participants,
  };
}

export async function startSession(ctx: AppContext, projectId: string, input: { room_name: string; session_id?: string | undefined; participants?: Record<string, number> | undefined }) {
  const id = input.session_id ?? randomUUID();
  // One statement writes the session and its room.started event (atomic without a transaction);
  // the event is written only when the session was.
  const insert = store.insertSessionSql({ id, projectId, roomName: input.room_name, participants: input.participants ?? {} });
  const { row } = await ctx.events.emitWithCause(
    ctx.db, projectId, roomStarted,
    { room_name: input.room_name, room_url: roomUrl(ctx, input.room_name), session_id: id },
    insert,
  );
  const inserted = store.sessionFromJson(row.session);
  if (inserted) return { session: sessionView(inserted), created: true };
  const existing = await store.findSession(ctx.db, projectId, id);
  if (!existing || existing.roomName !== input.room_name) throw conflict('That session id is already in use');
  return { session: sessionView(existing), created: false };
}

export async function endSession(ctx: AppContext, projectId: string, sessionId: string, input: { participants?: Record<string, number> | undefined }) {
  return ctx.db.transaction(async (tx) => {
    const ended = await store.endSession(tx, projectId, sessionId, input.participants);
    if (!ended) {
      const existing = await store.findSession(tx, projectId, sessionId);
      if (!existing) throw notFound('Session');
      return sessionView(existing);
    }
    await ctx.events.emit(tx, projectId, roomEnded, { room_name: ended.roomName, room_url: roomUrl(ctx, ended.roomName), session_id: ended.id });
    return sessionView(ended);
  });
}

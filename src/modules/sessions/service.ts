// Room sessions: room servers (outside Atrium) report when a session starts and ends and who joins
// and leaves; owners list and inspect them and may terminate one. Each report commits the session
// record, its session events and its room.started / room.ended event together. Reports are
// idempotent, because a room server retries when it does not hear back: a repeated start, end, join
// or leave changes nothing and emits nothing.
//
// Terminating: the request marks the session as terminating and enqueues, in the same transaction,
// the call that asks the room server to end it (through the outbox, signed) and a timeout. The
// session ends when the room server reports the end; if it does not within
// ATRIUM_SESSION_TERMINATE_TIMEOUT_SECONDS, the timeout ends it, marked `terminate_timeout`.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../platform/db/engine.ts';
import { badRequest, conflict, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { enqueue } from '../../platform/jobs/outbox.ts';
import { getAgent } from '../agents/service.ts';
import { roomUrl } from '../rooms/service.ts';
import { roomEnded, roomStarted } from './events.ts';
import { terminateJob, terminateTimeoutJob } from './jobs.ts';
import { digestOf } from './otlp.ts';
import * as store from './store.ts';
import { listEvents, listMetrics, listSpans } from './telemetry.ts';


export function sessionView(row: store.SessionRow) {
  return {
    id: row.id,
    room_id: row.roomId,
    room_name: row.roomName,
    kind: row.kind,
    agent_id: row.agentId,
    agent_name: row.agentName,
    created_at: row.startedAt.toISOString(),
    started_at: row.startedAt.toISOString(),
    ended_at: row.endedAt ? row.endedAt.toISOString() : null,
    is_active: row.endedAt === null,
    status: row.endedAt ? 'ended' as const : row.terminateRequestedAt ? 'terminating' as const : 'active' as const,
    ended_reason: row.endedReason,
    participants: row.participants,
    termination: row.terminateRequestedAt
      ? { requested_at: row.terminateRequestedAt.toISOString(), status: row.terminationStatus!, attempt_count: row.terminationAttempts, error: row.terminationError }
      : null,
    telemetry: { spans: row.spanCount, events: row.eventCount, metrics: row.metricCount },
  };
}

const nowNs = () => (BigInt(Date.now()) * 1_000_000n).toString();

/** A session event of the session's own life (start, end, participants, termination). */
function lifecycleEvent(type: string, data: Record<string, unknown>, identity: unknown = type): Omit<store.NewEvent, 'sessionId'> {
  return { type, timeNs: nowNs(), data, digest: digestOf(['lifecycle', type, identity]) };
}

export interface SessionStartInput {
  room_name: string;
  session_id?: string | undefined;
  participants?: Record<string, number> | undefined;
  agent_name?: string | undefined;
}

export async function startSession(ctx: AppContext, projectId: string, input: SessionStartInput) {
  const id = input.session_id ?? randomUUID();
  let agent: { id: string | null; name: string } | undefined;
  if (input.agent_name !== undefined) {
    const name = input.agent_name.trim().toLowerCase();
    const registered = await getAgent(ctx, projectId, name).catch(() => undefined);
    agent = { id: registered?.id ?? null, name };
  }
  // One statement writes the session, its first session event and its room.started event (atomic
  // without a transaction); the events are written only when the session was.
  const insert = store.sessionStartCause({
    id, projectId, roomName: input.room_name, participants: input.participants ?? {}, agent,
    started: lifecycleEvent('session.started', { room_name: input.room_name, ...(agent ? { agent_name: agent.name } : {}) }),
  });
  const { row } = await ctx.events.emitWithCause(
    ctx.db, projectId, roomStarted,
    { room_name: input.room_name, room_url: roomUrl(ctx, input.room_name), session_id: id },
    insert,
  );
  const inserted = store.sessionFromJson(row.session);
  if (inserted) return { session: sessionView(inserted), created: true };
  const existing = await store.findSession(ctx.db, projectId, id);
  if (!existing || existing.roomName !== input.room_name) throw conflict('That session id is already in use in this project, by another room', 'already_exists');
  return { session: sessionView(existing), created: false };
}

/** Ends a running session and emits room.ended, in the caller's transaction; undefined when it was not running. */
async function end(ctx: AppContext, tx: Db, projectId: string, sessionId: string, reason: 'reported' | 'terminate_timeout', participants?: Record<string, number>) {
  const ended = await store.endSession(tx, projectId, sessionId, reason, participants);
  if (!ended) return undefined;
  await store.insertEvents(tx, projectId, [{ sessionId, ...lifecycleEvent('session.ended', { reason: ended.endedReason }) }]);
  await ctx.events.emit(tx, projectId, roomEnded, { room_name: ended.roomName, room_url: roomUrl(ctx, ended.roomName), session_id: ended.id });
  return ended;
}

export async function endSession(ctx: AppContext, projectId: string, sessionId: string, input: { participants?: Record<string, number> | undefined }) {
  return ctx.db.transaction(async (tx) => {
    const ended = await end(ctx, tx, projectId, sessionId, 'reported', input.participants);
    if (ended) return sessionView(ended);
    return sessionView(await mustFind(tx, projectId, sessionId));
  });
}

async function mustFind(db: Db, projectId: string, sessionId: string): Promise<store.SessionRow> {
  const session = await store.findSession(db, projectId, sessionId);
  if (!session) throw notFound('Session');
  return session;
}

/** When ended sessions ran, and what they were (for pricing their minutes), in one query; running or unknown ones are left out. */
export async function endedSessionSpans(db: Db, keys: readonly { projectId: string; sessionId: string }[]) {
  return (await store.findEndedSessions(db, keys)).map((row) => ({
    projectId: row.projectId, sessionId: row.id, kind: row.kind, roomName: row.roomName, startedAt: row.startedAt, endedAt: row.endedAt!,
  }));
}

export async function getSession(ctx: AppContext, projectId: string, sessionId: string) {
  return sessionView(await mustFind(ctx.db, projectId, sessionId));
}

export async function listSessions(ctx: AppContext, projectId: string, filter: store.SessionFilter, page: Page) {
  const { items, total } = await store.listSessions(ctx.db, projectId, filter, page);
  return { sessions: items.map(sessionView), total };
}

export interface ParticipantReport {
  type: 'joined' | 'left';
  participant_id: string;
  role?: string | undefined;
  name?: string | undefined;
}

async function participantCounts(db: Db, session: store.SessionRow) {
  return { participants: session.participants, active: await store.activeParticipantCounts(db, session.projectId, session.id) };
}

/** Applies a room server's report of participants joining and leaving a running session. */
export async function reportParticipants(ctx: AppContext, projectId: string, sessionId: string, reports: readonly ParticipantReport[]) {
  return ctx.db.transaction(async (tx) => {
    const session = await mustFind(tx, projectId, sessionId);
    if (session.endedAt && reports.some((r) => r.type === 'joined')) throw conflict('The session has ended: nobody can join it', 'session_ended');
    if (reports.some((r) => r.type === 'joined' && !r.role)) throw badRequest('A participant that joins needs a role');
    const applied = await store.applyParticipantChanges(tx, projectId, sessionId, reports.map((r) => ({ type: r.type, participantId: r.participant_id, role: r.role ?? '', name: r.name ?? null })));
    await store.insertEvents(tx, projectId, applied.map((change) => ({
      sessionId,
      ...lifecycleEvent(`participant.${change.type}`, { participant_id: change.participantId, role: change.role, name: change.name }, [change.type, change.participantId]),
    })));
    return participantCounts(tx, (await store.findSession(tx, projectId, sessionId))!);
  });
}

export async function getParticipants(ctx: AppContext, projectId: string, sessionId: string) {
  return participantCounts(ctx.db, await mustFind(ctx.db, projectId, sessionId));
}

/**
 * Asks the room server to end a running session: marks it terminating and enqueues the call and its
 * timeout. Terminating a session that has ended, or is already terminating, changes nothing.
 */
export async function terminateSession(ctx: AppContext, projectId: string, sessionId: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    const marked = await store.requestTermination(tx, projectId, sessionId);
    if (!marked) {
      await mustFind(tx, projectId, sessionId);
      return;
    }
    await store.insertEvents(tx, projectId, [{ sessionId, ...lifecycleEvent('session.terminate_requested', {}) }]);
    const payload = { project_id: projectId, session_id: sessionId };
    // Keyed by project too: another project may have a session of the same id.
    const key = `${projectId}:${sessionId}`;
    await enqueue(tx, [
      terminateJob.of({ key, payload }),
      terminateTimeoutJob.of({ key, payload, runAt: new Date(Date.now() + ctx.config.sessions.terminateTimeoutMs) }),
    ]);
  });
}

/** The terminate timeout's run: ends the session if the room server has not reported its end. */
export async function endTerminatedSession(ctx: AppContext, db: Db, projectId: string, sessionId: string): Promise<void> {
  await db.transaction((tx) => end(ctx, tx, projectId, sessionId, 'terminate_timeout'));
}

type TelemetryFilter = Parameters<typeof listSpans>[4];
const TELEMETRY_LISTS = { spans: listSpans, events: listEvents, metrics: listMetrics };

/** A page of one session's telemetry of a kind (404 for a session the project does not have). */
export async function sessionTelemetry<K extends keyof typeof TELEMETRY_LISTS>(ctx: AppContext, projectId: string, sessionId: string, kind: K, page: Page, filter: TelemetryFilter) {
  await mustFind(ctx.db, projectId, sessionId);
  return TELEMETRY_LISTS[kind](ctx.db, projectId, sessionId, page, filter) as ReturnType<(typeof TELEMETRY_LISTS)[K]>;
}

// Room sessions as reported by room servers, their participants and telemetry. Every query is keyed
// by the project id.
import { and, desc, eq, ilike, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import { integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { rowsOf, tableRows } from '../../platform/db/rows.ts';
import type { EventCause, SingleCause } from '../../platform/events/emit.ts';

// The id is the room server's, unique within the project.
export const roomSessionsTable = pgTable('room_sessions', {
  id: uuid('id').notNull(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id'),
  roomName: text('room_name').notNull(),
  kind: text('kind').$type<'room' | 'agent'>().notNull().default('room'),
  agentId: uuid('agent_id'),
  agentName: text('agent_name'),
  startedAt: timestamptz('started_at').notNull().defaultNow(),
  endedAt: timestamptz('ended_at'),
  endedReason: text('ended_reason').$type<EndedReason>(),
  participants: jsonb('participants').$type<Record<string, number>>().notNull().default({}),
  terminateRequestedAt: timestamptz('terminate_requested_at'),
  terminationStatus: text('termination_status').$type<TerminationStatus>(),
  terminationAttempts: integer('termination_attempts').notNull().default(0),
  terminationError: text('termination_error'),
  spanCount: integer('span_count').notNull().default(0),
  eventCount: integer('event_count').notNull().default(0),
  metricCount: integer('metric_count').notNull().default(0),
}, (t) => [primaryKey({ columns: [t.projectId, t.id] })]);

export type SessionRow = typeof roomSessionsTable.$inferSelect;
const sessionRows = tableRows(roomSessionsTable);
export type EndedReason = 'reported' | 'terminated' | 'terminate_timeout';
export type TerminationStatus = 'pending' | 'submitting' | 'submitted' | 'retrying' | 'failed';

const participantsTable = pgTable('session_participants', {
  projectId: uuid('project_id').notNull(),
  sessionId: uuid('session_id').notNull(),
  participantId: text('participant_id').notNull(),
  role: text('role').notNull(),
  name: text('name'),
  joinedAt: timestamptz('joined_at').notNull().defaultNow(),
  leftAt: timestamptz('left_at'),
});

/** A session event as written: what happened, when (Unix nanoseconds, as text), and its data. */
export interface NewEvent {
  sessionId: string;
  type: string;
  timeNs: string;
  data: Record<string, unknown>;
  /** Identifies the event within its session: a second write of the same digest is dropped. */
  digest: string;
}

/**
 * Inserting a session (unless the project has one of that id), as WITH items for the statement that
 * also emits its event: the session points at the project's registered room of that name, if any,
 * and its `session.started` event is written with it. The CTE `session` holds the inserted row (none
 * when the id exists); `happened` says whether there is one; `result` returns it as JSON in a column
 * `session` (read it with sessionFromJson).
 */
export function sessionStartCause(row: { id: string; projectId: string; roomName: string; participants: Record<string, number>; agent: { id: string | null; name: string } | undefined; started: Omit<NewEvent, 'sessionId'> }): EventCause<SingleCause> {
  return {
    name: 'session-start',
    build: buildSessionStart,
    values: {
      session_id: row.id, session_project_id: row.projectId, session_room_name: row.roomName, session_participants: JSON.stringify(row.participants),
      session_kind: row.agent ? 'agent' : 'room', session_agent_id: row.agent?.id ?? null, session_agent_name: row.agent?.name ?? null,
      started_type: row.started.type, started_time_ns: row.started.timeNs, started_data: JSON.stringify(row.started.data), started_digest: row.started.digest,
    },
  };
}

function buildSessionStart(): SingleCause {
  const v = (name: string) => sql.placeholder(name);
  return {
    ctes: sql`session as (
      insert into room_sessions (id, project_id, room_id, room_name, participants, kind, agent_id, agent_name, event_count)
      values (${v('session_id')}::uuid, ${v('session_project_id')}::uuid,
        (select id from rooms where project_id = ${v('session_project_id')}::uuid and name = ${v('session_room_name')}::text),
        ${v('session_room_name')}::text, ${v('session_participants')}::jsonb,
        ${v('session_kind')}::text, ${v('session_agent_id')}::uuid, ${v('session_agent_name')}::text, 1)
      on conflict (project_id, id) do nothing
      returning *
    ),
    session_started as (
      insert into session_events (project_id, session_id, type, time_ns, data, digest)
      select project_id, id, ${v('started_type')}::text, ${v('started_time_ns')}::bigint, ${v('started_data')}::jsonb, ${v('started_digest')}::text from session
    )`,
    happened: sql`exists (select 1 from session)`,
    result: sql`(select row_to_json(s) from session s) as session`,
  };
}

/** The `session` column of a start's result: the inserted row, or undefined when the id existed. */
export const sessionFromJson = (json: unknown): SessionRow | undefined => sessionRows.fromJson(json);

const inProject = (projectId: string, id: string) => and(eq(roomSessionsTable.projectId, projectId), eq(roomSessionsTable.id, id));

export async function findSession(db: Db, projectId: string, id: string): Promise<SessionRow | undefined> {
  const [row] = await db.select().from(roomSessionsTable).where(inProject(projectId, id));
  return row;
}

/** Ended sessions among these (project, id) pairs, in one query; running or unknown ones are left out. */
export async function findEndedSessions(db: Db, keys: readonly { projectId: string; sessionId: string }[]): Promise<SessionRow[]> {
  if (keys.length === 0) return [];
  return db.select().from(roomSessionsTable).where(and(
    isNotNull(roomSessionsTable.endedAt),
    or(...keys.map((k) => inProject(k.projectId, k.sessionId))),
  ));
}

/**
 * Ends a session still running, for the reason given (a terminated session ends as 'terminated'
 * when the room server reports it); undefined when there is none (missing or already ended).
 */
export async function endSession(db: Db, projectId: string, id: string, reason: 'reported' | 'terminate_timeout', participants: Record<string, number> | undefined): Promise<SessionRow | undefined> {
  const endedReason = reason === 'reported'
    ? sql`case when ${roomSessionsTable.terminateRequestedAt} is null then 'reported' else 'terminated' end`
    : sql`'terminate_timeout'`;
  const [row] = await db.update(roomSessionsTable)
    .set({ endedAt: sql`now()`, endedReason: endedReason as SQL<EndedReason>, ...(participants ? { participants } : {}) })
    .where(and(inProject(projectId, id), isNull(roomSessionsTable.endedAt)))
    .returning();
  return row;
}

export interface SessionFilter {
  active?: boolean | undefined;
  kind?: 'room' | 'agent' | undefined;
  roomId?: string | undefined;
  roomName?: string | undefined;
  agentId?: string | undefined;
}

/** Sessions of a project, newest first, and how many match. */
export async function listSessions(db: Db, projectId: string, filter: SessionFilter, page: Page) {
  const t = roomSessionsTable;
  const where = and(
    eq(t.projectId, projectId),
    filter.active === true ? isNull(t.endedAt) : filter.active === false ? isNotNull(t.endedAt) : undefined,
    filter.kind ? eq(t.kind, filter.kind) : undefined,
    filter.roomId ? eq(t.roomId, filter.roomId) : undefined,
    filter.roomName ? eq(t.roomName, filter.roomName) : undefined,
    filter.agentId ? eq(t.agentId, filter.agentId) : undefined,
    page.filter ? ilike(t.roomName, likeContains(page.filter)) : undefined,
  );
  const rows = await db.select({ session: t, total: windowTotal }).from(t).where(where)
    .orderBy(desc(t.startedAt), desc(t.id)).limit(page.limit).offset(page.offset);
  const result = await pageResult(rows, page, () => countRows(db, t, where));
  return { items: result.items.map((r) => r.session), total: result.total };
}

/** Marks a running session as terminating, once; undefined when it is not running or already terminating. */
export async function requestTermination(db: Db, projectId: string, id: string): Promise<SessionRow | undefined> {
  const [row] = await db.update(roomSessionsTable)
    .set({ terminateRequestedAt: sql`now()`, terminationStatus: 'pending' })
    .where(and(inProject(projectId, id), isNull(roomSessionsTable.endedAt), isNull(roomSessionsTable.terminateRequestedAt)))
    .returning();
  return row;
}

/** Counts an attempt of the terminate call as under way; undefined when there is nothing to send any more. */
export async function startTerminationAttempt(db: Db, projectId: string, id: string): Promise<SessionRow | undefined> {
  const [row] = await db.update(roomSessionsTable)
    .set({ terminationStatus: 'submitting', terminationAttempts: sql`${roomSessionsTable.terminationAttempts} + 1` })
    .where(and(inProject(projectId, id), isNull(roomSessionsTable.endedAt), sql`${roomSessionsTable.terminationStatus} in ('pending', 'submitting', 'retrying')`))
    .returning();
  return row;
}

export async function recordTerminationOutcome(db: Db, projectId: string, id: string, status: 'submitted' | 'retrying' | 'failed', error: string | null): Promise<void> {
  await db.update(roomSessionsTable).set({ terminationStatus: status, terminationError: error })
    .where(and(inProject(projectId, id), eq(roomSessionsTable.terminationStatus, 'submitting')));
}

export interface ParticipantChange {
  type: 'joined' | 'left';
  participantId: string;
  role: string;
  name: string | null;
}

/**
 * Applies joins and leaves in order: a participant joins once (a repeated join is ignored) and
 * leaves once; the session's counts by role count everyone who joined. Returns the changes that
 * took effect, for the session's events.
 */
export async function applyParticipantChanges(tx: Db, projectId: string, sessionId: string, changes: readonly ParticipantChange[]): Promise<ParticipantChange[]> {
  const applied: ParticipantChange[] = [];
  const ofSession = and(eq(participantsTable.projectId, projectId), eq(participantsTable.sessionId, sessionId));
  for (const change of changes) {
    if (change.type === 'joined') {
      const [row] = await tx.insert(participantsTable).values({ projectId, sessionId, participantId: change.participantId, role: change.role, name: change.name })
        .onConflictDoNothing().returning({ role: participantsTable.role });
      if (!row) continue;
      await tx.update(roomSessionsTable)
        .set({ participants: sql`jsonb_set(${roomSessionsTable.participants}, array[${change.role}], to_jsonb(coalesce((${roomSessionsTable.participants} ->> ${change.role})::int, 0) + 1))` })
        .where(inProject(projectId, sessionId));
      applied.push(change);
    } else {
      const [row] = await tx.update(participantsTable).set({ leftAt: sql`now()` })
        .where(and(ofSession, eq(participantsTable.participantId, change.participantId), isNull(participantsTable.leftAt)))
        .returning({ role: participantsTable.role, name: participantsTable.name });
      if (row) applied.push({ ...change, role: row.role, name: row.name });
    }
  }
  return applied;
}

/** Participants present now (joined, not left), by role. */
export async function activeParticipantCounts(db: Db, projectId: string, sessionId: string): Promise<Record<string, number>> {
  const rows = await db.select({ role: participantsTable.role, n: sql<number>`count(*)`.mapWith(Number) }).from(participantsTable)
    .where(and(eq(participantsTable.projectId, projectId), eq(participantsTable.sessionId, sessionId), isNull(participantsTable.leftAt)))
    .groupBy(participantsTable.role);
  return Object.fromEntries(rows.map((r) => [r.role, r.n]));
}

// Telemetry -----------------------------------------------------------------------------------------

export type TelemetryKind = 'spans' | 'events' | 'metrics';
const COUNT_COLUMN: Record<TelemetryKind, SQL> = { spans: sql`span_count`, events: sql`event_count`, metrics: sql`metric_count` };
const TELEMETRY_TABLE: Record<TelemetryKind, SQL> = { spans: sql`session_spans`, events: sql`session_events`, metrics: sql`session_metrics` };

/** A session telemetry may be attributed to: found by id, or as the session of a room name. */
export interface SessionTarget {
  id: string;
  roomName: string;
  active: boolean;
  startedAt: Date;
}

/**
 * The sessions telemetry names: those of the given ids, and for each given room name its sessions
 * that are running or ended less than `graceMs` ago (telemetry arrives after the end it describes).
 */
export async function findSessionTargets(db: Db, projectId: string, ids: readonly string[], roomNames: readonly string[], graceMs: number): Promise<SessionTarget[]> {
  if (ids.length === 0 && roomNames.length === 0) return [];
  const rows = rowsOf<{ id: string; room_name: string; active: boolean; started_ms: number }>(await db.execute(sql`
    select id::text as id, room_name, ended_at is null as active, (extract(epoch from started_at) * 1000)::float8 as started_ms
    from room_sessions
    where project_id = ${projectId}::uuid
      and (id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb)::uuid)
        or (room_name in (select jsonb_array_elements_text(${JSON.stringify(roomNames)}::jsonb))
          and (ended_at is null or ended_at > now() - ${graceMs} * interval '1 millisecond')))`));
  return rows.map((r) => ({ id: r.id, roomName: r.room_name, active: r.active, startedAt: new Date(Number(r.started_ms)) }));
}

/**
 * Locks the sessions' rows (in id order, so concurrent exports cannot deadlock) for the rest of the
 * transaction and returns how many items of the kind each may still take.
 */
export async function lockTelemetryRoom(tx: Db, projectId: string, kind: TelemetryKind, sessionIds: readonly string[], max: number): Promise<Map<string, number>> {
  const rows = rowsOf<{ id: string; n: number }>(await tx.execute(sql`
    select id::text as id, ${COUNT_COLUMN[kind]} as n from room_sessions
    where project_id = ${projectId}::uuid and id in (select jsonb_array_elements_text(${JSON.stringify(sessionIds)}::jsonb)::uuid)
    order by id
    for update`));
  return new Map(rows.map((r) => [r.id, Math.max(0, max - Number(r.n))]));
}

/** Adds what was inserted (the `inserted` CTE, one row per item with its project_id and session_id) to each session's count. */
function countInserted(kind: TelemetryKind): SQL {
  return sql`
    update room_sessions s set ${COUNT_COLUMN[kind]} = s.${COUNT_COLUMN[kind]} + c.n
    from (select project_id, session_id, count(*)::int as n from inserted group by project_id, session_id) c
    where s.project_id = c.project_id and s.id = c.session_id`;
}

export interface NewSpan {
  session_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  name: string;
  kind: number;
  start_ns: string;
  end_ns: string;
  status_code: number;
  status_message: string | null;
  attributes: Record<string, unknown>;
  events: unknown[];
  links: unknown[];
  scope_name: string | null;
  resource_attributes: Record<string, unknown>;
}

/** Inserts spans, skipping any the project already has (same trace and span id), and counts them. */
export async function insertSpans(tx: Db, projectId: string, spans: readonly NewSpan[]): Promise<void> {
  if (spans.length === 0) return;
  await tx.execute(sql`
    with inserted as (
      insert into session_spans (project_id, session_id, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, status_message, attributes, events, links, scope_name, resource_attributes)
      select ${projectId}::uuid, session_id, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code, status_message, attributes, events, links, scope_name, resource_attributes
      from jsonb_to_recordset(${JSON.stringify(spans)}::jsonb) as x(session_id uuid, trace_id text, span_id text, parent_span_id text, name text, kind smallint,
        start_ns bigint, end_ns bigint, status_code smallint, status_message text, attributes jsonb, events jsonb, links jsonb, scope_name text, resource_attributes jsonb)
      on conflict (project_id, trace_id, span_id) do nothing
      returning project_id, session_id
    )
    ${countInserted('spans')}`);
}

/**
 * Writes session events (OTLP log records, and what happened to the session), skipping any whose
 * digest the session already has, and counts them.
 */
export async function insertEvents(tx: Db, projectId: string, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const input = JSON.stringify(events.map((e) => ({ session_id: e.sessionId, type: e.type, time_ns: e.timeNs, data: e.data, digest: e.digest })));
  await tx.execute(sql`
    with inserted as (
      insert into session_events (project_id, session_id, type, time_ns, data, digest)
      select ${projectId}::uuid, session_id, type, time_ns, data, digest
      from jsonb_to_recordset(${input}::jsonb) as x(session_id uuid, type text, time_ns bigint, data jsonb, digest text)
      on conflict (project_id, session_id, digest) do nothing
      returning project_id, session_id
    )
    ${countInserted('events')}`);
}

export interface NewMetricPoint {
  session_id: string;
  kind: string;
  name: string;
  unit: string;
  temporality: number | null;
  is_monotonic: boolean | null;
  value: number | null;
  count: string | null;
  sum: number | null;
  min: number | null;
  max: number | null;
  bucket_counts: string[] | null;
  explicit_bounds: number[] | null;
  attributes: Record<string, unknown>;
  start_ns: string | null;
  time_ns: string;
  scope_name: string | null;
  resource_attributes: Record<string, unknown>;
  digest: string;
}

/** Inserts metric data points, skipping resends, and counts them. */
export async function insertMetricPoints(tx: Db, projectId: string, points: readonly NewMetricPoint[]): Promise<void> {
  if (points.length === 0) return;
  await tx.execute(sql`
    with inserted as (
      insert into session_metrics (project_id, session_id, kind, name, unit, temporality, is_monotonic, value, count, sum, min, max, bucket_counts, explicit_bounds, attributes, start_ns, time_ns, scope_name, resource_attributes, digest)
      select ${projectId}::uuid, session_id, kind, name, unit, temporality, is_monotonic, value, count, sum, min, max, bucket_counts, explicit_bounds, attributes, start_ns, time_ns, scope_name, resource_attributes, digest
      from jsonb_to_recordset(${JSON.stringify(points)}::jsonb) as x(session_id uuid, kind text, name text, unit text, temporality smallint, is_monotonic boolean,
        value float8, count bigint, sum float8, min float8, max float8, bucket_counts jsonb, explicit_bounds jsonb, attributes jsonb, start_ns bigint, time_ns bigint,
        scope_name text, resource_attributes jsonb, digest text)
      on conflict (project_id, session_id, digest) do nothing
      returning project_id, session_id
    )
    ${countInserted('metrics')}`);
}

/** One page of a session's telemetry in time order, rows as the database gives them, and the total. */
export async function listTelemetry(db: Db, projectId: string, sessionId: string, kind: TelemetryKind, page: Page, filter: { column: 'type' | 'trace_id' | 'name'; value: string } | undefined) {
  const order = kind === 'spans' ? sql`start_ns, span_id` : sql`time_ns, id`;
  const columns = {
    spans: sql`trace_id, span_id, parent_span_id, name, kind, start_ns::text as start_ns, end_ns::text as end_ns, status_code, status_message, attributes, events, links, scope_name, resource_attributes`,
    events: sql`type, time_ns::text as time_ns, data`,
    metrics: sql`kind, name, unit, temporality, is_monotonic, value, count::text as count, sum, min, max, bucket_counts, explicit_bounds, attributes, start_ns::text as start_ns, time_ns::text as time_ns, scope_name, resource_attributes`,
  }[kind];
  const where = sql`project_id = ${projectId}::uuid and session_id = ${sessionId}::uuid${filter ? sql` and ${sql.identifier(filter.column)} = ${filter.value}` : sql``}`;
  const rows = rowsOf<Record<string, unknown> & { total: number }>(await db.execute(sql`
    select ${columns}, count(*) over ()::int as total from ${TELEMETRY_TABLE[kind]}
    where ${where} order by ${order} limit ${page.limit} offset ${page.offset}`));
  return pageResult(rows.map((r) => ({ ...r, total: Number(r.total) })), page, async () => {
    const [row] = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from ${TELEMETRY_TABLE[kind]} where ${where}`));
    return Number(row?.n ?? 0);
  });
}

/**
 * Deletes up to `limit` items of a kind that arrived before `before`, and takes them off their
 * sessions' counts; returns how many were deleted (callers repeat until fewer than `limit`).
 */
export async function pruneTelemetry(db: Db, kind: TelemetryKind, before: Date, limit: number): Promise<number> {
  const [row] = rowsOf<{ n: number }>(await db.execute(sql`
    with inserted as (
      delete from ${TELEMETRY_TABLE[kind]} where ctid = any(array(
        select ctid from ${TELEMETRY_TABLE[kind]} where received_at < ${before.toISOString()}::timestamptz limit ${limit}
      ))
      returning project_id, session_id
    ),
    counted as (
      update room_sessions s set ${COUNT_COLUMN[kind]} = greatest(0, s.${COUNT_COLUMN[kind]} - c.n)
      from (select project_id, session_id, count(*)::int as n from inserted group by project_id, session_id) c
      where s.project_id = c.project_id and s.id = c.session_id
    )
    select count(*)::int as n from inserted`));
  return Number(row?.n ?? 0);
}

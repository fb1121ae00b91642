// Scheduled tasks and their runs. Every query is keyed by the project id, except the scheduler's and
// the delivery worker's, which work across projects on rows they locked or were handed.
import { and, desc, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import { bigint, boolean, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { clockSql } from '../../platform/jobs/outbox.ts';
import { rowsOf } from '../../platform/db/rows.ts';
import { roomsTable } from '../rooms/tables.ts';

export const tasksTable = pgTable('scheduled_tasks', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id').notNull(),
  name: text('name'),
  annotations: jsonb('annotations').$type<Record<string, string>>().notNull().default({}),
  schedule: text('schedule').notNull(),
  timeZone: text('time_zone').notNull().default('UTC'),
  intervalSeconds: integer('interval_seconds'),
  anchorAt: timestamptz('anchor_at').notNull().defaultNow(),
  once: boolean('once').notNull().default(false),
  active: boolean('active').notNull().default(true),
  queueName: text('queue_name').notNull(),
  payload: jsonb('payload').$type<Record<string, unknown>>().notNull().default({}),
  storageWritePath: text('storage_write_path'),
  nextRunAt: timestamptz('next_run_at'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export const runsTable = pgTable('scheduled_task_runs', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  projectId: uuid('project_id').notNull(),
  taskId: uuid('task_id').notNull(),
  roomId: uuid('room_id').notNull(),
  roomName: text('room_name').notNull(),
  queuedMessageId: uuid('queued_message_id').notNull(),
  queueName: text('queue_name').notNull(),
  payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
  storageWritePath: text('storage_write_path'),
  status: text('status').$type<RunStatus>().notNull().default('pending'),
  attemptCount: integer('attempt_count').notNull().default(0),
  error: text('error'),
  scheduledTime: timestamptz('scheduled_time').notNull(),
  startedAt: timestamptz('started_at'),
  leaseExpiresAt: timestamptz('lease_expires_at'),
  completedAt: timestamptz('completed_at'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export type RunStatus = 'pending' | 'submitting' | 'submitted' | 'retrying' | 'failed';
export type TaskRow = typeof tasksTable.$inferSelect;
export type RunRow = typeof runsTable.$inferSelect;
type NewTask = typeof tasksTable.$inferInsert;

/** A task with its room's current name and its latest run. */
export interface TaskWithRoom extends TaskRow {
  roomName: string;
  lastRun: Pick<RunRow, 'id' | 'status' | 'error' | 'startedAt' | 'completedAt'> | null;
}

const latestRun = sql`(
  select json_build_object('id', r.id, 'status', r.status, 'error', r.error, 'started_at', r.started_at, 'completed_at', r.completed_at)
  from scheduled_task_runs r where r.task_id = ${tasksTable.id} order by r.scheduled_time desc limit 1
)`;

function withRoom(row: { task: TaskRow; roomName: string; lastRun: unknown }): TaskWithRoom {
  const last = row.lastRun as { id: number; status: RunStatus; error: string | null; started_at: string | null; completed_at: string | null } | null;
  const date = (v: string | null) => (v === null ? null : new Date(v));
  return {
    ...row.task,
    roomName: row.roomName,
    lastRun: last && { id: Number(last.id), status: last.status, error: last.error, startedAt: date(last.started_at), completedAt: date(last.completed_at) },
  };
}

const selectWithRoom = (db: Db) => db.select({ task: tasksTable, roomName: roomsTable.name, lastRun: latestRun }).from(tasksTable).innerJoin(roomsTable, eq(roomsTable.id, tasksTable.roomId));

export async function insertTask(db: Db, task: NewTask): Promise<boolean> {
  const rows = await db.insert(tasksTable).values(task).onConflictDoNothing().returning({ id: tasksTable.id });
  return rows.length > 0;
}

export async function findTask(db: Db, projectId: string, id: string): Promise<TaskWithRoom | undefined> {
  const [row] = await selectWithRoom(db).where(and(eq(tasksTable.projectId, projectId), eq(tasksTable.id, id)));
  return row && withRoom(row);
}

export async function updateTask(db: Db, projectId: string, id: string, changes: Partial<NewTask>): Promise<boolean> {
  const rows = await db.update(tasksTable).set({ ...changes, updatedAt: sql`now()` })
    .where(and(eq(tasksTable.projectId, projectId), eq(tasksTable.id, id))).returning({ id: tasksTable.id });
  return rows.length > 0;
}

export async function deleteTask(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(tasksTable).where(and(eq(tasksTable.projectId, projectId), eq(tasksTable.id, id))).returning({ id: tasksTable.id });
  return rows.length > 0;
}

export async function listTasks(db: Db, projectId: string, filter: { roomId?: string | undefined; taskId?: string | undefined; active?: boolean | undefined }, page: Page) {
  const where = and(
    eq(tasksTable.projectId, projectId),
    filter.roomId ? eq(tasksTable.roomId, filter.roomId) : undefined,
    filter.taskId ? eq(tasksTable.id, filter.taskId) : undefined,
    filter.active !== undefined ? eq(tasksTable.active, filter.active) : undefined,
    page.filter ? or(ilike(tasksTable.name, likeContains(page.filter)), ilike(tasksTable.queueName, likeContains(page.filter)), ilike(roomsTable.name, likeContains(page.filter))) : undefined,
  );
  const rows = await db.select({ task: tasksTable, roomName: roomsTable.name, lastRun: latestRun, total: windowTotal }).from(tasksTable)
    .innerJoin(roomsTable, eq(roomsTable.id, tasksTable.roomId))
    .where(where).orderBy(tasksTable.createdAt, tasksTable.id).limit(page.limit).offset(page.offset);
  const result = await pageResult(rows, page, async () => {
    const [row] = await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(tasksTable).innerJoin(roomsTable, eq(roomsTable.id, tasksTable.roomId)).where(where);
    return row?.n ?? 0;
  });
  return { items: result.items.map(withRoom), total: result.total };
}

export async function listRuns(db: Db, projectId: string, taskId: string, status: RunStatus | undefined, page: Page) {
  const where = and(eq(runsTable.projectId, projectId), eq(runsTable.taskId, taskId), status ? eq(runsTable.status, status) : undefined);
  const rows = await db.select({ run: runsTable, total: windowTotal }).from(runsTable).where(where)
    .orderBy(desc(runsTable.scheduledTime)).limit(page.limit).offset(page.offset);
  const result = await pageResult(rows, page, () => countRows(db, runsTable, where));
  return { items: result.items.map((r) => r.run), total: result.total };
}

// Firing --------------------------------------------------------------------------------------------

/** A due task as the scheduler locked it, with the room's current name and the clock's time. */
export interface DueTask {
  id: string;
  projectId: string;
  roomId: string;
  roomName: string;
  schedule: string;
  timeZone: string;
  anchorAt: Date;
  once: boolean;
  dueAt: Date;
  queueName: string;
  payload: Record<string, unknown>;
  storageWritePath: string | null;
  now: Date;
}

/** Locks up to `limit` active tasks due by the clock; rows another instance is firing are skipped. */
export async function lockDueTasks(tx: Db, now: Date | undefined, limit: number): Promise<DueTask[]> {
  const rows = rowsOf<Record<string, any>>(await tx.execute(sql`
    select t.id::text as id, t.project_id::text as project_id, t.room_id::text as room_id, r.name as room_name, t.schedule, t.time_zone,
      (extract(epoch from t.anchor_at) * 1000)::float8 as anchor_ms, t.once, (extract(epoch from t.next_run_at) * 1000)::float8 as due_ms,
      t.queue_name, t.payload, t.storage_write_path, (extract(epoch from ${clockSql(now)}) * 1000)::float8 as now_ms
    from scheduled_tasks t join rooms r on r.id = t.room_id
    where t.active and t.next_run_at <= ${clockSql(now)}
    order by t.next_run_at
    limit ${limit}
    for update of t skip locked`));
  return rows.map((r) => ({
    id: r.id, projectId: r.project_id, roomId: r.room_id, roomName: r.room_name, schedule: r.schedule, timeZone: r.time_zone,
    anchorAt: new Date(Number(r.anchor_ms)), once: r.once, dueAt: new Date(Number(r.due_ms)), queueName: r.queue_name,
    payload: r.payload, storageWritePath: r.storage_write_path, now: new Date(Number(r.now_ms)),
  }));
}

export interface FiredRun {
  task_id: string;
  project_id: string;
  room_id: string;
  room_name: string;
  queued_message_id: string;
  queue_name: string;
  payload: Record<string, unknown>;
  storage_write_path: string | null;
  scheduled_time: string;
  /** The task's next due time; null ends it (a one-time task, or a cron with no more matches). */
  next_run_at: string | null;
}

/**
 * Writes the runs of fired tasks (one per task and due time: a second write of the same due time is
 * dropped) and moves each task to its next due time, deactivating those with none. Returns the new
 * runs' ids with their project.
 */
export async function recordFiredRuns(tx: Db, fired: readonly FiredRun[]): Promise<{ id: string; projectId: string }[]> {
  const rows = rowsOf<{ id: string; project_id: string }>(await tx.execute(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(fired)}::jsonb) as x(task_id uuid, project_id uuid, room_id uuid, room_name text, queued_message_id uuid,
        queue_name text, payload jsonb, storage_write_path text, scheduled_time timestamptz, next_run_at timestamptz)
    ),
    moved as (
      update scheduled_tasks t set next_run_at = i.next_run_at, active = i.next_run_at is not null
      from input i where t.id = i.task_id
    )
    insert into scheduled_task_runs (project_id, task_id, room_id, room_name, queued_message_id, queue_name, payload, storage_write_path, scheduled_time)
    select project_id, task_id, room_id, room_name, queued_message_id, queue_name, payload, storage_write_path, scheduled_time from input
    on conflict (task_id, scheduled_time) do nothing
    returning id::text as id, project_id::text as project_id`));
  return rows.map((r) => ({ id: r.id, projectId: r.project_id }));
}

// Delivering ----------------------------------------------------------------------------------------

const deliverable = sql`${runsTable.status} in ('pending', 'submitting', 'retrying')`;

/**
 * Counts a delivery attempt as under way for each run still to deliver, and returns those runs; a
 * run already submitted or failed (a duplicate job) is left alone.
 */
export async function startAttempts(db: Db, runIds: readonly string[], leaseMs: number): Promise<RunRow[]> {
  if (runIds.length === 0) return [];
  return db.update(runsTable)
    .set({
      status: 'submitting',
      attemptCount: sql`${runsTable.attemptCount} + 1`,
      startedAt: sql`coalesce(${runsTable.startedAt}, now())`,
      leaseExpiresAt: sql`now() + ${leaseMs} * interval '1 millisecond'`,
    })
    .where(and(sql`${runsTable.id} in (select jsonb_array_elements_text(${JSON.stringify(runIds)}::jsonb)::bigint)`, deliverable))
    .returning();
}

export async function recordOutcome(db: Db, projectId: string, runId: number, status: 'submitted' | 'retrying' | 'failed', error: string | null): Promise<void> {
  const finished: SQL = status === 'retrying' ? sql`null` : sql`now()`;
  await db.update(runsTable).set({ status, error, leaseExpiresAt: null, completedAt: finished as SQL<Date | null> })
    .where(and(eq(runsTable.projectId, projectId), eq(runsTable.id, runId), eq(runsTable.status, 'submitting')));
}

/** Deletes up to `limit` finished runs due before `before`; returns how many. */
export async function pruneRuns(db: Db, before: Date, limit: number): Promise<number> {
  const [row] = rowsOf<{ n: number }>(await db.execute(sql`
    with deleted as (
      delete from scheduled_task_runs where id = any(array(
        select id from scheduled_task_runs where status in ('submitted', 'failed') and scheduled_time < ${before.toISOString()}::timestamptz limit ${limit}
      ))
      returning 1
    )
    select count(*)::int as n from deleted`));
  return Number(row?.n ?? 0);
}

// Rules for scheduled tasks: a task belongs to a registered room, sends one queued message per due
// time, and is written either as a ScheduledTaskSpec (`{"spec": {...}}`, as the official SDK sends it) or in the
// earlier flat form (`{queue_name, payload, schedule, …}`; an update in that form changes only the
// fields it names). Schedules are validated when written: an invalid one is a 400 naming the problem.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { ApiError, badRequest, conflict, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { findRoomById, getRoom, getRoomToActIn, requireInRoom } from '../rooms/service.ts';
import { roomStoragePath } from '../storage/service.ts';
import { firstRun, parseSchedule, ScheduleError } from './schedule.ts';
import * as store from './store.ts';

export interface TaskSpec {
  version?: string | undefined;
  kind?: string | undefined;
  metadata?: { name?: string | null | undefined; annotations?: Record<string, string> | undefined } | undefined;
  schedule: string;
  active?: boolean | undefined;
  once?: boolean | undefined;
  queue?: { name: string; payload?: Record<string, unknown> | undefined; storage_write_path?: string | null | undefined } | null | undefined;
  container?: unknown;
}

/** A request body of create or update: the spec form, or the earlier flat form. */
export interface TaskInput {
  spec?: TaskSpec | undefined;
  time_zone?: string | undefined;
  id?: string | undefined;
  room_name?: string | undefined;
  queue_name?: string | undefined;
  payload?: Record<string, unknown> | undefined;
  schedule?: string | undefined;
  active?: boolean | undefined;
  once?: boolean | undefined;
  annotations?: Record<string, string> | undefined;
  storage_write_path?: string | null | undefined;
}

/** Everything a task is, as written by either form. */
interface TaskFields {
  name: string | null;
  annotations: Record<string, string>;
  schedule: string;
  timeZone: string;
  once: boolean;
  active: boolean;
  queueName: string;
  payload: Record<string, unknown>;
  storageWritePath: string | null;
}

export function taskView(task: store.TaskWithRoom) {
  const queue = { name: task.queueName, payload: task.payload, ...(task.storageWritePath ? { storage_write_path: task.storageWritePath } : {}) };
  return {
    id: task.id,
    project_id: task.projectId,
    room_id: task.roomId,
    room_name: task.roomName,
    spec: {
      version: 'v1' as const,
      kind: 'ScheduledTask' as const,
      metadata: { ...(task.name ? { name: task.name } : {}), annotations: task.annotations },
      schedule: task.schedule,
      active: task.active,
      once: task.once,
      queue,
    },
    queue_name: task.queueName,
    payload: task.payload,
    schedule: task.schedule,
    time_zone: task.timeZone,
    active: task.active,
    once: task.once,
    annotations: task.annotations,
    storage_write_path: task.storageWritePath,
    next_run_at: task.nextRunAt?.toISOString() ?? null,
    created_at: task.createdAt.toISOString(),
    updated_at: task.updatedAt.toISOString(),
    last_run_id: task.lastRun ? String(task.lastRun.id) : null,
    last_start_time: task.lastRun?.startedAt?.toISOString() ?? null,
    last_end_time: task.lastRun?.completedAt?.toISOString() ?? null,
    last_status: task.lastRun?.status ?? null,
    last_return_message: task.lastRun?.error ?? null,
  };
}

export function runView(run: store.RunRow) {
  return {
    id: String(run.id),
    task_id: run.taskId,
    project_id: run.projectId,
    room_id: run.roomId,
    room_name: run.roomName,
    queued_message_id: run.queuedMessageId,
    target: 'queue' as const,
    status: run.status,
    attempt_count: run.attemptCount,
    error: run.error,
    scheduled_time: run.scheduledTime.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    lease_expires_at: run.leaseExpiresAt?.toISOString() ?? null,
    completed_at: run.completedAt?.toISOString() ?? null,
  };
}

function fromSpec(spec: TaskSpec, timeZone: string): TaskFields {
  if (spec.container !== undefined && spec.container !== null) throw badRequest('spec.container: container tasks are not supported here; send a queued message with spec.queue');
  if (!spec.queue) throw badRequest('spec.queue is required: the queued message the task sends');
  return {
    name: spec.metadata?.name ?? null,
    annotations: spec.metadata?.annotations ?? {},
    schedule: spec.schedule,
    timeZone,
    once: spec.once ?? false,
    active: spec.active ?? true,
    queueName: spec.queue.name,
    payload: spec.queue.payload ?? {},
    storageWritePath: spec.queue.storage_write_path || null,
  };
}

function fromFlat(input: TaskInput, current: TaskFields | undefined): TaskFields {
  const queueName = input.queue_name ?? current?.queueName;
  const schedule = input.schedule ?? current?.schedule;
  if (queueName === undefined) throw badRequest('queue_name is required (or send {"spec": {...}})');
  if (schedule === undefined) throw badRequest('schedule is required (or send {"spec": {...}})');
  return {
    name: current?.name ?? null,
    annotations: input.annotations ?? current?.annotations ?? {},
    schedule,
    timeZone: input.time_zone ?? current?.timeZone ?? 'UTC',
    once: input.once ?? current?.once ?? false,
    active: input.active ?? current?.active ?? true,
    queueName,
    payload: input.payload ?? current?.payload ?? {},
    // The earlier SDK clears the path with an empty string.
    storageWritePath: input.storage_write_path === undefined ? current?.storageWritePath ?? null : input.storage_write_path || null,
  };
}

/**
 * The path in the room's storage that the room server writes to, as stored: normalised, and
 * inside the room's storage (a `..` or an absolute path is a 400, never passed on).
 */
function storageWritePath(roomName: string, raw: string | null): string | null {
  if (raw === null) return null;
  try {
    const folder = roomStoragePath(roomName, '');
    const path = roomStoragePath(roomName, raw).slice(folder.length + 1);
    if (!path) throw badRequest('it names no file in the room\'s storage', 'invalid_path');
    return path;
  } catch (error) {
    if (error instanceof ApiError) throw badRequest(`storage_write_path: ${error.message}`, 'invalid_path');
    throw error;
  }
}

/** Validates the schedule and works out when the task runs first (null while inactive). */
function scheduling(ctx: AppContext, fields: TaskFields, now: Date) {
  if (!fields.queueName.trim()) throw badRequest('the queue name must not be empty');
  let parsed;
  try {
    parsed = parseSchedule(fields.schedule, fields.timeZone, ctx.config.scheduledTasks.minPeriodMs, now);
  } catch (error) {
    if (error instanceof ScheduleError) throw badRequest(error.message);
    throw error;
  }
  return {
    intervalSeconds: parsed.kind === 'interval' ? parsed.seconds : null,
    anchorAt: now,
    nextRunAt: fields.active ? firstRun(parsed, now) ?? null : null,
  };
}

const fieldsOf = (task: store.TaskWithRoom): TaskFields => ({
  name: task.name, annotations: task.annotations, schedule: task.schedule, timeZone: task.timeZone, once: task.once, active: task.active,
  queueName: task.queueName, payload: task.payload, storageWritePath: task.storageWritePath,
});

async function mustFind(ctx: AppContext, projectId: string, taskId: string): Promise<store.TaskWithRoom> {
  const task = await store.findTask(ctx.db, projectId, taskId);
  if (!task) throw notFound('Scheduled task');
  return task;
}

/** Creates a task in a room (the path's, or the flat body's `room_name`). */
export async function createTask(ctx: AppContext, actor: Actor, projectId: string, roomName: string, input: TaskInput) {
  if (input.spec === undefined && input.room_name !== undefined && input.room_name !== roomName) throw badRequest('room_name in the body names another room than the path');
  // Its runs send messages into the room: only for a caller who may connect to it.
  const room = await getRoomToActIn(ctx, actor, roomName);
  const given = input.spec ? fromSpec(input.spec, input.time_zone ?? 'UTC') : fromFlat(input, undefined);
  const fields = { ...given, storageWritePath: storageWritePath(room.name, given.storageWritePath) };
  const id = input.id ?? randomUUID();
  const now = new Date();
  const inserted = await store.insertTask(ctx.db, { id, projectId, roomId: room.id, ...fields, ...scheduling(ctx, fields, now) });
  if (!inserted) throw conflict('A scheduled task with that id already exists', 'already_exists');
  const task = taskView(await mustFind(ctx, projectId, id));
  return { task_id: id, ...task };
}

/**
 * Replaces a task (spec form) or changes the fields named (flat form). A changed schedule, time
 * zone or activation starts the schedule again from now; other changes keep the next due time.
 * Runs already fired keep the message they had.
 */
export async function updateTask(ctx: AppContext, actor: Actor, projectId: string, taskId: string, input: TaskInput) {
  const current = await mustFind(ctx, projectId, taskId);
  const before = fieldsOf(current);
  const given = input.spec ? fromSpec(input.spec, input.time_zone ?? current.timeZone) : fromFlat(input, before);
  const room = input.spec === undefined && input.room_name !== undefined ? await getRoom(ctx, projectId, input.room_name) : await findRoomById(ctx.db, projectId, current.roomId);
  if (!room) throw notFound('Scheduled task');
  await requireInRoom(ctx, actor, room);
  const fields = { ...given, storageWritePath: storageWritePath(room.name, given.storageWritePath) };
  const roomId = room.id;
  const rescheduled = fields.schedule !== before.schedule || fields.timeZone !== before.timeZone || fields.active !== before.active || fields.once !== before.once;
  const timing = scheduling(ctx, fields, new Date());
  const changes = rescheduled ? { ...fields, ...timing } : { ...fields, intervalSeconds: timing.intervalSeconds };
  if (!(await store.updateTask(ctx.db, projectId, taskId, { ...changes, roomId }))) throw notFound('Scheduled task');
  return taskView(await mustFind(ctx, projectId, taskId));
}

export async function deleteTask(ctx: AppContext, projectId: string, taskId: string): Promise<void> {
  if (!(await store.deleteTask(ctx.db, projectId, taskId))) throw notFound('Scheduled task');
}

export async function listTasks(ctx: AppContext, projectId: string, filter: Parameters<typeof store.listTasks>[2], page: Page) {
  const { items, total } = await store.listTasks(ctx.db, projectId, filter, page);
  return { tasks: items.map(taskView), total };
}

export async function listRuns(ctx: AppContext, projectId: string, taskId: string, status: store.RunStatus | undefined, page: Page) {
  await mustFind(ctx, projectId, taskId);
  const { items, total } = await store.listRuns(ctx.db, projectId, taskId, status, page);
  return { runs: items.map(runView), total };
}

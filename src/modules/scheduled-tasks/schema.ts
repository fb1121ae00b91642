import { Type } from 'typebox';
import { filterQuery, ListOf, MAX_PAGE } from '../../platform/http/lists.ts';
import { JsonObject, StringMap, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';

const Schedule = Type.String({ minLength: 1, maxLength: 200, description: 'A 5-field cron expression (evaluated in `time_zone`), or an interval such as "15 minutes"' });
const TimeZone = Type.String({ minLength: 1, maxLength: 100, description: 'IANA time zone of a cron schedule; UTC when absent' });
const QueueName = Type.String({ minLength: 1, maxLength: 200 });
const StoragePath = Type.Union([Type.String({ maxLength: 1000 }), Type.Null()]);

/** The ScheduledTaskSpec of the official SDKs (@meshagent/meshagent 0.39.9). */
const ScheduledTaskSpec = Type.Object({
  version: Type.Optional(Type.Literal('v1')),
  kind: Type.Optional(Type.Literal('ScheduledTask')),
  metadata: Type.Optional(Type.Object({ name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])), annotations: Type.Optional(StringMap) })),
  schedule: Schedule,
  active: Type.Optional(Type.Boolean()),
  once: Type.Optional(Type.Boolean({ description: 'Fire at the next due time, then deactivate' })),
  queue: Type.Optional(Type.Union([Type.Object({ name: QueueName, payload: Type.Optional(JsonObject()), storage_write_path: Type.Optional(StoragePath) }), Type.Null()])),
  container: Type.Optional(Type.Unknown({ description: 'Not supported: tasks send queued messages' })),
});

/** Either `{"spec": …}` (with an optional `time_zone`) or the earlier flat fields. */
export const TaskWrite = Type.Object({
  spec: Type.Optional(ScheduledTaskSpec),
  time_zone: Type.Optional(TimeZone),
  id: Type.Optional(Type.String({ format: 'uuid', description: 'Flat form: the task id to use' })),
  room_name: Type.Optional(RoomName),
  queue_name: Type.Optional(QueueName),
  payload: Type.Optional(JsonObject()),
  schedule: Type.Optional(Schedule),
  active: Type.Optional(Type.Boolean()),
  once: Type.Optional(Type.Boolean()),
  annotations: Type.Optional(StringMap),
  storage_write_path: Type.Optional(StoragePath),
}, { examples: [{ spec: { version: 'v1', kind: 'ScheduledTask', metadata: { name: 'nightly digest', annotations: {} }, schedule: '0 6 * * *', queue: { name: 'digest', payload: { kind: 'daily' } } }, time_zone: 'Europe/Berlin' }] });

/** The earlier project-level create: the flat fields with the room named in the body. */
export const FlatTaskCreate = Type.Object({
  ...TaskWrite.properties,
  room_name: RoomName,
}, { examples: [{ room_name: 'lobby', queue_name: 'digest', payload: { kind: 'daily' }, schedule: '0 6 * * *' }] });

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const ScheduledTask = Type.Object({
  id: Uuid,
  project_id: Uuid,
  room_id: Uuid,
  room_name: Type.String(),
  spec: Type.Object({
    version: Type.Literal('v1'),
    kind: Type.Literal('ScheduledTask'),
    metadata: Type.Object({ name: Type.Optional(Type.String()), annotations: Type.Record(Type.String(), Type.String()) }),
    schedule: Type.String(),
    active: Type.Boolean(),
    once: Type.Boolean(),
    queue: Type.Object({ name: Type.String(), payload: Type.Record(Type.String(), Type.Unknown()), storage_write_path: Type.Optional(Type.String()) }),
  }),
  queue_name: Type.String(),
  payload: Type.Record(Type.String(), Type.Unknown()),
  schedule: Type.String(),
  time_zone: Type.String(),
  active: Type.Boolean(),
  once: Type.Boolean(),
  annotations: Type.Record(Type.String(), Type.String()),
  storage_write_path: Nullable(Type.String()),
  next_run_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
  /** The id of the task's latest run, as the runs list gives it. */
  last_run_id: Nullable(Type.String()),
  last_start_time: Nullable(Timestamp),
  last_end_time: Nullable(Timestamp),
  last_status: Nullable(Type.String()),
  last_return_message: Nullable(Type.String()),
});

export const CreatedTask = Type.Object({ task_id: Uuid, ...ScheduledTask.properties });

export const TaskListQuery = Type.Object({
  room_id: Type.Optional(Type.String({ format: 'uuid' })),
  task_id: Type.Optional(Type.String({ format: 'uuid' })),
  active: Type.Optional(Type.Boolean()),
  ...filterQuery('name, queue or room name'),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 100, description: 'Most items returned' })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, description: 'The same as limit (newer SDKs)' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'Items skipped' })),
});
export const TaskList = ListOf('tasks', ScheduledTask);

const RunStatus = Type.Union([Type.Literal('pending'), Type.Literal('submitting'), Type.Literal('submitted'), Type.Literal('retrying'), Type.Literal('failed')]);

export const RunListQuery = Type.Object({
  status: Type.Optional({ ...RunStatus, description: 'Only runs in this state' }),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 100, description: 'Most items returned' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'Items skipped' })),
});
export const ScheduledTaskRun = Type.Object({
  id: Type.String(),
  task_id: Uuid,
  project_id: Uuid,
  room_id: Uuid,
  room_name: Type.String(),
  queued_message_id: Uuid,
  target: Type.Literal('queue'),
  status: RunStatus,
  attempt_count: Type.Integer(),
  error: Nullable(Type.String()),
  scheduled_time: Timestamp,
  started_at: Nullable(Timestamp),
  lease_expires_at: Nullable(Timestamp),
  completed_at: Nullable(Timestamp),
});
export const RunList = ListOf('runs', ScheduledTaskRun);

import { Type } from 'typebox';
import { filterQuery, ListOf, MAX_PAGE } from '../../platform/http/lists.ts';
import { Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { AgentName } from '../agents/schema.ts';
import { RoomName } from '../rooms/schema.ts';

/** The OpenAPI tag of every route a room server calls (docs/room-servers.md). */
export const ROOM_SERVER_TAG = 'Room servers';

const Role = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^\\u0000-\\u001f\\u007f]+$', 'x-pattern-means': 'must not contain control characters' });
const Participants = Type.Record(Type.String({ maxLength: 100 }), Type.Integer({ minimum: 0, maximum: 1_000_000 }), {
  maxProperties: 50, description: 'Participant count by role, e.g. {"user": 3, "agent": 1}',
});

export const SessionStart = Type.Object({
  room_name: RoomName,
  session_id: Type.Optional(Type.String({ format: 'uuid', description: 'The room server\'s id for the session; generated when absent. Reporting the same id again returns the session without a second event.' })),
  participants: Type.Optional(Participants),
  agent_name: Type.Optional(Type.String({ ...AgentName, description: 'For the session of a managed agent: its name. The session is then listed among agent sessions.' })),
});

export const SessionEnd = Type.Object({
  participants: Type.Optional(Participants),
});

export const ParticipantReport = Type.Object({
  events: Type.Array(Type.Object({
    type: Type.Union([Type.Literal('joined'), Type.Literal('left')]),
    participant_id: Type.String({ minLength: 1, maxLength: 200, description: 'The room server\'s id of the participant, unique in the session' }),
    role: Type.Optional(Type.String({ ...Role, description: 'Required to join: user, agent, tool…' })),
    name: Type.Optional(Type.String({ maxLength: 200 })),
  }), { minItems: 1, maxItems: 1000, description: 'Joins and leaves, in the order they happened' }),
}, { examples: [{ events: [{ type: 'joined', participant_id: 'p-1', role: 'user', name: 'Ada' }] }] });

export const ParticipantCounts = Type.Object({
  participants: Type.Record(Type.String(), Type.Integer(), { description: 'Everyone who took part, by role' }),
  active: Type.Record(Type.String(), Type.Integer(), { description: 'Participants present now (joined, not left), by role' }),
});

export const RoomSession = Type.Object({
  id: Uuid,
  room_id: Type.Union([Uuid, Type.Null()], { description: 'The registered room of that name, if any' }),
  room_name: Type.String(),
  kind: Type.Union([Type.Literal('room'), Type.Literal('agent')]),
  agent_id: Type.Union([Uuid, Type.Null()]),
  agent_name: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  started_at: Timestamp,
  ended_at: Type.Union([Timestamp, Type.Null()]),
  is_active: Type.Boolean(),
  status: Type.Union([Type.Literal('active'), Type.Literal('terminating'), Type.Literal('ended')]),
  ended_reason: Type.Union([Type.Literal('reported'), Type.Literal('terminated'), Type.Literal('terminate_timeout'), Type.Null()], {
    description: '`reported`: the room server reported the end; `terminated`: it did after a terminate request; `terminate_timeout`: it did not within ATRIUM_SESSION_TERMINATE_TIMEOUT_SECONDS of one',
  }),
  participants: Participants,
  termination: Type.Union([Type.Object({
    requested_at: Timestamp,
    status: Type.Union([Type.Literal('pending'), Type.Literal('submitting'), Type.Literal('submitted'), Type.Literal('retrying'), Type.Literal('failed')], { description: 'Of the terminate call to the room server' }),
    attempt_count: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
  }), Type.Null()]),
  telemetry: Type.Object({ spans: Type.Integer(), events: Type.Integer(), metrics: Type.Integer() }, { description: 'Telemetry items kept for the session' }),
}, { $id: 'RoomSession' });

export const SessionList = ListOf('sessions', RoomSession);

const Limit = (fallback: number) => Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: fallback, description: 'Most items returned' }));
const Offset = Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'Items skipped' }));

export const RecentSessionsQuery = Type.Object({
  limit: Limit(25),
  offset: Offset,
  room_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only sessions of this registered room' })),
  room_name: Type.Optional(Type.String({ maxLength: 200, description: 'Only sessions of this room name' })),
  ...filterQuery('room name'),
});
export const ActiveSessionsQuery = Type.Object({ limit: Limit(MAX_PAGE), offset: Offset, ...filterQuery('room name') });
export const AgentSessionsQuery = Type.Object({
  limit: Limit(25),
  offset: Offset,
  agent_id: Type.Optional(Type.String({ format: 'uuid', description: 'Only sessions of this managed agent' })),
});
export const ActiveAgentSessionsQuery = Type.Object({ limit: Limit(MAX_PAGE), offset: Offset });

export const EventsQuery = Type.Object({ limit: Limit(500), offset: Offset, type: Type.Optional(Type.String({ maxLength: 100, description: 'Only events of this type, e.g. `log`' })) });
export const SpansQuery = Type.Object({ limit: Limit(500), offset: Offset, trace_id: Type.Optional(Type.String({ maxLength: 32, description: 'Only spans of this trace (hex)' })) });
export const MetricsQuery = Type.Object({ limit: Limit(500), offset: Offset, name: Type.Optional(Type.String({ maxLength: 1000, description: 'Only points of this metric' })) });

const Attributes = Type.Record(Type.String(), Type.Unknown());
const Nanos = Type.String({ description: 'Unix time in nanoseconds' });

const SessionEvent = Type.Object({
  type: Type.String({ description: '`log` (an OTLP log record), `session.started`, `session.ended`, `session.terminate_requested`, `participant.joined`, `participant.left`' }),
  created_at: Timestamp,
  time_unix_nano: Nanos,
  data: Attributes,
});
const SessionSpan = Type.Object({
  trace_id: Type.String(),
  span_id: Type.String(),
  parent_span_id: Type.Union([Type.String(), Type.Null()]),
  name: Type.String(),
  span_name: Type.String(),
  kind: Type.Integer({ description: 'OTLP span kind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer' }),
  created_at: Timestamp,
  ended_at: Timestamp,
  start_time_unix_nano: Nanos,
  end_time_unix_nano: Nanos,
  duration: Type.Integer({ description: 'Nanoseconds' }),
  status: Type.Object({ code: Type.Integer({ description: '0 unset, 1 ok, 2 error' }), message: Type.Union([Type.String(), Type.Null()]) }),
  span_attributes: Attributes,
  events: Type.Array(Type.Unknown()),
  links: Type.Array(Type.Unknown()),
  scope_name: Type.Union([Type.String(), Type.Null()]),
  resource_attributes: Attributes,
});
const Num = Type.Union([Type.Number(), Type.Null()]);
const SessionMetric = Type.Object({
  kind: Type.String({ description: '`sum`, `gauge`, `histogram`, `exponential_histogram` or `summary`' }),
  name: Type.String(),
  metric_name: Type.String(),
  unit: Type.String(),
  metric_unit: Type.String(),
  aggregation_temporality: Type.Union([Type.Integer(), Type.Null()], { description: '1 delta, 2 cumulative' }),
  is_monotonic: Type.Union([Type.Boolean(), Type.Null()]),
  value: Num,
  count: Num,
  sum: Num,
  min: Num,
  max: Num,
  bucket_counts: Type.Union([Type.Array(Type.Number()), Type.Null()]),
  explicit_bounds: Type.Union([Type.Array(Type.Number()), Type.Null()]),
  metric_attributes: Attributes,
  created_at: Timestamp,
  ended_at: Timestamp,
  start_time_unix_nano: Type.Union([Nanos, Type.Null()]),
  time_unix_nano: Nanos,
  scope_name: Type.Union([Type.String(), Type.Null()]),
  resource_attributes: Attributes,
});

export const EventList = ListOf('events', SessionEvent);
export const SpanList = ListOf('spans', SessionSpan);
export const MetricList = ListOf('metrics', SessionMetric);

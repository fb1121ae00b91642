-- Sessions as room servers report them, with their participants, their telemetry (OTLP spans, logs
-- as events, metric points) and their termination, which Atrium asks of the room server through the
-- outbox (src/modules/sessions).

alter table room_sessions
  -- 'agent': the session of a managed agent (reported with its name)
  add column kind text not null default 'room' check (kind in ('room', 'agent')),
  add column agent_id uuid references managed_agents (id) on delete set null,
  add column agent_name text,
  -- why it ended: the room server said so ('reported'), after a terminate request ('terminated'),
  -- or nobody reported the end of a terminated session in time ('terminate_timeout')
  add column ended_reason text check (ended_reason in ('reported', 'terminated', 'terminate_timeout')),
  -- the terminate call to the room server: requested, then pending → submitting → submitted | retrying → failed
  add column terminate_requested_at timestamptz,
  add column termination_status text check (termination_status in ('pending', 'submitting', 'submitted', 'retrying', 'failed')),
  add column termination_attempts integer not null default 0,
  add column termination_error text,
  -- telemetry kept for the session, bounded by ATRIUM_SESSION_TELEMETRY_MAX_ITEMS each
  add column span_count integer not null default 0,
  add column event_count integer not null default 0,
  add column metric_count integer not null default 0;
create index room_sessions_agent_idx on room_sessions (project_id, started_at desc) where kind = 'agent';

-- Participants a room server reported joining (and leaving) a session.
create table session_participants (
  session_id uuid not null references room_sessions (id) on delete cascade,
  participant_id text not null,
  role text not null,
  name text,
  joined_at timestamptz not null default now(),
  left_at timestamptz,
  primary key (session_id, participant_id)
);

-- OTLP spans. A resent span (same trace and span id) is the same span: kept once.
create table session_spans (
  project_id uuid not null references projects (id) on delete cascade,
  session_id uuid not null references room_sessions (id) on delete cascade,
  trace_id text not null,
  span_id text not null,
  parent_span_id text,
  name text not null,
  kind smallint not null,
  start_ns bigint not null,
  end_ns bigint not null,
  status_code smallint not null,
  status_message text,
  attributes jsonb not null,
  events jsonb not null,
  links jsonb not null,
  scope_name text,
  resource_attributes jsonb not null,
  received_at timestamptz not null default now(),
  primary key (project_id, trace_id, span_id)
);
create index session_spans_session_idx on session_spans (session_id, start_ns, span_id);
create index session_spans_received_idx on session_spans (received_at);

-- Session events: OTLP log records ('log'), and what the session went through (started, ended,
-- participants joining and leaving, a terminate request). `digest` identifies an event, so an
-- exporter's resend is kept once.
create table session_events (
  id bigint generated always as identity primary key,
  project_id uuid not null references projects (id) on delete cascade,
  session_id uuid not null references room_sessions (id) on delete cascade,
  type text not null,
  time_ns bigint not null,
  data jsonb not null,
  digest text not null,
  received_at timestamptz not null default now(),
  unique (session_id, digest)
);
create index session_events_session_idx on session_events (session_id, time_ns, id);
create index session_events_received_idx on session_events (received_at);

-- OTLP metric data points, one row each (sum, gauge, histogram, exponential histogram, summary).
create table session_metrics (
  id bigint generated always as identity primary key,
  project_id uuid not null references projects (id) on delete cascade,
  session_id uuid not null references room_sessions (id) on delete cascade,
  kind text not null,
  name text not null,
  unit text not null,
  -- 1 delta, 2 cumulative (sums and histograms)
  temporality smallint,
  is_monotonic boolean,
  value double precision,
  count bigint,
  sum double precision,
  min double precision,
  max double precision,
  bucket_counts jsonb,
  explicit_bounds jsonb,
  attributes jsonb not null,
  start_ns bigint,
  time_ns bigint not null,
  scope_name text,
  resource_attributes jsonb not null,
  digest text not null,
  received_at timestamptz not null default now(),
  unique (session_id, digest)
);
create index session_metrics_session_idx on session_metrics (session_id, time_ns, id);
create index session_metrics_received_idx on session_metrics (received_at);

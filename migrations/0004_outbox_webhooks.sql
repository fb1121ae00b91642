-- The transactional outbox (background jobs), webhooks with their events, deliveries and attempts,
-- and room sessions reported by room servers.

-- Work to do later, written in the same transaction as the change that causes it. A row exists only
-- while the job is pending (or dead, kept for inspection); finished jobs are deleted so the queue
-- stays small. A claimed row carries the claim's lease token, and its run_at is moved to the end of
-- the lease: if the worker dies, the row simply becomes due again.
create table jobs (
  id bigint generated always as identity primary key,
  topic text not null,
  -- optional de-duplication key: one live job per (topic, key)
  key text,
  payload jsonb not null default '{}'::jsonb,
  status text not null default 'pending' check (status in ('pending', 'dead')),
  run_at timestamptz not null default now(),
  -- claims so far (a crash mid-run counts too)
  attempts integer not null default 0,
  lease_token uuid,
  last_error text,
  created_at timestamptz not null default now()
);
create index jobs_due_idx on jobs (run_at) where status = 'pending';
create unique index jobs_topic_key_idx on jobs (topic, key) where key is not null;

create table webhooks (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  description text not null default '',
  url text not null,
  -- event types, or {*}
  events text[] not null,
  -- '' = JSON delivery; 'call' = room.call handoff
  action text not null default '',
  -- merged into the body (or the room.call arguments)
  payload jsonb,
  -- signing secrets, encrypted (SecretBox); the previous one signs too until it expires
  secret_encrypted text,
  previous_secret_encrypted text,
  previous_secret_expires_at timestamptz,
  enabled boolean not null default true,
  disabled_reason text,
  -- start of the current run of failed attempts; a long run disables the webhook
  failing_since timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhooks_project_idx on webhooks (project_id, created_at);

-- One row per event that at least one webhook subscribed to when it happened.
create table webhook_events (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  type text not null,
  data jsonb not null,
  created_at timestamptz not null default now()
);
create index webhook_events_project_idx on webhook_events (project_id, created_at);

create table webhook_deliveries (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  webhook_id uuid not null references webhooks (id) on delete cascade,
  event_id uuid not null references webhook_events (id) on delete cascade,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'cancelled')),
  attempt_count integer not null default 0,
  next_attempt_at timestamptz,
  -- what the next attempt is labelled: 'scheduled', or 'manual' after a redeliver request
  next_trigger text not null default 'scheduled',
  last_attempt_at timestamptz,
  last_http_status integer,
  last_error text,
  created_at timestamptz not null default now(),
  unique (event_id, webhook_id)
);
create index webhook_deliveries_webhook_idx on webhook_deliveries (webhook_id, created_at desc, id);

create table webhook_attempts (
  id bigint generated always as identity primary key,
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null,
  trigger text not null,
  started_at timestamptz not null,
  latency_ms integer not null,
  succeeded boolean not null,
  http_status integer,
  -- at most 1 KiB of the response body
  response_excerpt text,
  error text
);
create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, id);

-- Room sessions as room servers report them (start and end); a session read API builds on these.
create table room_sessions (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  room_id uuid references rooms (id) on delete set null,
  room_name text not null,
  started_at timestamptz not null default now(),
  ended_at timestamptz,
  -- role -> participant count, as last reported
  participants jsonb not null default '{}'::jsonb
);
create index room_sessions_project_idx on room_sessions (project_id, started_at desc);
create index room_sessions_active_idx on room_sessions (project_id, room_name) where ended_at is null;

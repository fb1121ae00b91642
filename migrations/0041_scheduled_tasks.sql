-- Scheduled tasks of rooms and their runs (src/modules/scheduled-tasks). A task falls due at
-- next_run_at; the scheduler fires due tasks with FOR UPDATE SKIP LOCKED, writing one run per due
-- time (unique on (task_id, scheduled_time)) and its delivery job in the same transaction, so each
-- due time fires once whatever the number of instances.
create table scheduled_tasks (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  room_id uuid not null references rooms (id) on delete cascade,
  name text,
  annotations jsonb not null default '{}'::jsonb,
  -- a 5-field cron expression evaluated in time_zone, or an interval such as '15 minutes'
  schedule text not null,
  time_zone text not null default 'UTC',
  -- set for interval schedules: runs fall at anchor_at + k * interval_seconds
  interval_seconds integer,
  anchor_at timestamptz not null default now(),
  once boolean not null default false,
  active boolean not null default true,
  queue_name text not null,
  payload jsonb not null default '{}'::jsonb,
  storage_write_path text,
  -- null while inactive
  next_run_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index scheduled_tasks_due_idx on scheduled_tasks (next_run_at) where active;
create index scheduled_tasks_project_idx on scheduled_tasks (project_id, created_at, id);

-- One row per due time of a task: the queued message it sends (a copy, so that changing or deleting
-- the task affects only later runs) and the delivery's progress:
-- pending → submitting → submitted | retrying → failed.
create table scheduled_task_runs (
  id bigint generated always as identity primary key,
  project_id uuid not null references projects (id) on delete cascade,
  task_id uuid not null,
  room_id uuid not null,
  room_name text not null,
  -- the message's id, the room server's idempotency key across redeliveries
  queued_message_id uuid not null,
  queue_name text not null,
  payload jsonb not null,
  storage_write_path text,
  status text not null default 'pending' check (status in ('pending', 'submitting', 'submitted', 'retrying', 'failed')),
  attempt_count integer not null default 0,
  error text,
  scheduled_time timestamptz not null,
  started_at timestamptz,
  lease_expires_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  unique (task_id, scheduled_time)
);
create index scheduled_task_runs_task_idx on scheduled_task_runs (task_id, scheduled_time desc);
create index scheduled_task_runs_finished_idx on scheduled_task_runs (scheduled_time) where status in ('submitted', 'failed');

-- Periodic platform work (src/platform/jobs/scheduler.ts): one row per schedule declared in code.
-- An instance fires a due row by enqueueing its run in the outbox and moving next_due_at to the next
-- match, in one transaction, so each due time is enqueued once whatever the number of instances.
create table schedules (
  name text primary key,
  -- 5-field cron, UTC; rewritten at boot when the code's pattern changes
  cron text not null,
  next_due_at timestamptz not null,
  updated_at timestamptz not null default now()
);

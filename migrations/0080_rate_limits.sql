-- Fixed-window rate-limit counters shared by every instance on this database: one row per limited
-- key (an account, a client address), reset in place when its window has ended. Rows of ended
-- windows are pruned in the background.
create table rate_limits (
  key text primary key,
  count integer not null,
  window_ends timestamptz not null
);
create index rate_limits_window_ends on rate_limits (window_ends);

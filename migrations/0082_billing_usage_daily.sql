-- The usage rollup per UTC day as well as per hour: a report by day, week or month over whole days
-- reads 24 times fewer rows (a month of one busy project is thousands of daily rows instead of
-- hundreds of thousands of hourly ones). Both are written in the statement that prices usage.
create table billing_usage_daily (
  project_id uuid not null references projects (id) on delete cascade,
  day timestamptz not null,
  provider text not null,
  model text not null,
  usage_type text not null,
  user_key text not null,
  room text not null,
  quantity bigint not null default 0,
  cost_micros bigint not null default 0,
  requests bigint not null default 0,
  primary key (project_id, day, provider, model, usage_type, user_key, room)
);

insert into billing_usage_daily (project_id, day, provider, model, usage_type, user_key, room, quantity, cost_micros, requests)
select project_id, date_trunc('day', hour, 'UTC'), provider, model, usage_type, user_key, room, sum(quantity), sum(cost_micros), sum(requests)
from billing_usage_rollup
group by 1, 2, 3, 4, 5, 6, 7;

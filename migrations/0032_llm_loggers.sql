-- LLM loggers: copy the events of LLM proxy calls whose JMESPath filter matches into a feed.
create table llm_loggers (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  -- a logger goes with its destination feed
  destination_feed_id uuid not null references feeds (id) on delete cascade,
  filter_expression text not null,
  paused boolean not null default false,
  annotations jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index llm_loggers_project_idx on llm_loggers (project_id, created_at);
create index llm_loggers_feed_idx on llm_loggers (destination_feed_id);

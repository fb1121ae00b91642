-- Routes: a domain of the deployment, claimed by one project, sent to a room (or a managed agent).
-- The domain is the key: two projects cannot claim one.

create table routes (
  domain text primary key,
  project_id uuid not null references projects (id) on delete cascade,
  room_id uuid references rooms (id) on delete cascade,
  agent_name text,
  spec jsonb not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((room_id is null) <> (agent_name is null))
);
create index routes_project_idx on routes (project_id, domain);
create index routes_room_idx on routes (room_id, domain);

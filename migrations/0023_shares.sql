-- Shares: links into one room of a project. Whoever holds a share's token connects to that room with
-- the share's grants, until the share expires or is deleted; only the token's hash is kept.
create table shares (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  room_id uuid not null references rooms (id) on delete cascade,
  -- the ApiScope a connect through the share grants
  grants jsonb not null,
  -- the caller's other settings, kept as given
  settings jsonb not null default '{}'::jsonb,
  expires_at timestamptz,
  token_hash bytea not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index shares_project_idx on shares (project_id, created_at);

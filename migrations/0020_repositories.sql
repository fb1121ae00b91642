-- Image repositories of a project (OCI repository names). Tokens for them are not stored: they are
-- signed JWTs that the registry verifies against the published keys.
create table repositories (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  description text not null default '',
  annotations jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, name)
);

-- OAuth clients registered by project owners so their end users sign in through Atrium.

create table oauth_clients (
  client_id text primary key,
  project_id uuid not null references projects (id) on delete cascade,
  -- label shown in the console (SPEC "name")
  name text not null default '',
  -- SHA-256 of the client secret; null for public clients (PKCE only)
  secret_hash bytea,
  redirect_uris text[] not null default '{}',
  grant_types text[] not null,
  response_types text[] not null,
  -- space-separated scopes the client may obtain
  scope text not null,
  -- logo_url, theme and other non-secret entries
  metadata jsonb not null default '{}'::jsonb,
  official boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index oauth_clients_project_idx on oauth_clients (project_id, created_at);

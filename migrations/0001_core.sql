-- Identity, projects and membership, credentials, rooms and managed agents.

create table users (
  id uuid primary key,
  email text not null,
  first_name text not null default '',
  last_name text not null default '',
  password_hash text,
  email_verified_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table projects (
  id uuid primary key,
  name text not null,
  owner_user_id uuid references users (id) on delete set null,
  settings jsonb not null default '{}'::jsonb,
  enabled boolean not null default true,
  created_at timestamptz not null default now()
);

create table project_members (
  project_id uuid not null references projects (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  roles text[] not null,
  created_at timestamptz not null default now(),
  primary key (project_id, user_id)
);
create index project_members_user_idx on project_members (user_id);

create table api_keys (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  description text not null default '',
  -- null: the key acts as a project admin; otherwise only with these roles
  roles text[],
  secret_hash bytea not null,
  -- the secret itself, encrypted: participant tokens an application mints with the SDK are HS256-signed with it
  secret_encrypted text not null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now()
);
create index api_keys_project_idx on api_keys (project_id, created_at);

create table personal_access_tokens (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  name text not null,
  secret_hash bytea not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz
);
create index personal_access_tokens_user_idx on personal_access_tokens (user_id);

create table signing_keys (
  kid text primary key,
  alg text not null,
  public_jwk jsonb not null,
  private_jwk_encrypted text not null,
  created_at timestamptz not null default now(),
  retired_at timestamptz
);

create table rooms (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  metadata jsonb not null default '{}'::jsonb,
  annotations jsonb not null default '{}'::jsonb,
  -- initial permissions: user id -> ApiScope granted when that user connects
  permissions jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, name)
);

create table managed_agents (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  configuration jsonb not null,
  permissions jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, name)
);

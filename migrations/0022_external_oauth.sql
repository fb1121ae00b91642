-- External OAuth registrations: how a project's (or one room's) agents obtain tokens from an outside
-- OAuth provider. The client secret is kept encrypted with the service key and never returned.
create table external_oauth_registrations (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  -- null: a registration of the whole project; otherwise of this room only
  room_id uuid references rooms (id) on delete cascade,
  -- the participant identity the registration is for; '' for every participant
  delegated_to text not null default '',
  client_id text not null,
  client_secret_encrypted text,
  -- the provider's endpoints, scopes and PKCE choice, without any secret
  oauth jsonb not null default '{}'::jsonb,
  connector jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index external_oauth_registrations_scope_idx on external_oauth_registrations (project_id, room_id, created_at);

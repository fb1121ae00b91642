-- Resource policies: the roles a subject holds directly on one resource of a project. Resources are
-- named by type and id (rooms, repositories, and whatever other families plug in), so no foreign key
-- reaches them: a family removes the bindings of a resource it deletes. Subjects are references that
-- take their bindings with them when they go.
create table resource_policy_bindings (
  project_id uuid not null references projects (id) on delete cascade,
  resource_type text not null,
  resource_id text not null,
  subject_type text not null check (subject_type in ('user', 'service_account', 'userset')),
  -- the user id, the API key id, or the userset's relation to the project ('member' | 'developer')
  subject_key text not null,
  -- users: leaving the project drops their bindings
  user_id uuid,
  -- service accounts (project API keys): revoking the key drops its bindings
  api_key_id uuid references api_keys (id) on delete cascade,
  roles text[] not null check (cardinality(roles) > 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project_id, resource_type, resource_id, subject_type, subject_key),
  foreign key (project_id, user_id) references project_members (project_id, user_id) on delete cascade,
  check ((subject_type = 'user') = (user_id is not null)),
  check ((subject_type = 'service_account') = (api_key_id is not null))
);

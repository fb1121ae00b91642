-- Invitations to join a project, sent by email to an address that has no account yet. The link's
-- secret is kept only as its hash; accepting creates the account (the link proves the address) and
-- the membership with the roles named here.
create table project_invitations (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  email text not null,
  roles text[] not null,
  secret_hash bytea not null,
  invited_by uuid,
  sent_count integer not null default 1,
  last_sent_at timestamptz not null default now(),
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
-- One pending invitation per address and project: inviting again updates it.
create unique index project_invitations_email_idx on project_invitations (project_id, email);
create index project_invitations_project_idx on project_invitations (project_id, created_at);

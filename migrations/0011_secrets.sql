-- Secrets of a project (room_id null) or of one room, their values encrypted with the service key.
-- A room secret is keyed also by the identity it is for and the identity it is delegated to (''
-- for none), so one secret id can hold a value per participant.

create table secrets (
  row_id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  room_id uuid references rooms (id) on delete cascade,
  id text not null,
  for_identity text not null default '',
  delegated_to text not null default '',
  name text not null,
  type text not null,
  value_encrypted text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index secrets_project_id_key on secrets (project_id, id) where room_id is null;
create unique index secrets_project_name_key on secrets (project_id, name) where room_id is null;
create unique index secrets_room_id_key on secrets (room_id, id, for_identity, delegated_to) where room_id is not null;
create unique index secrets_room_name_key on secrets (room_id, for_identity, delegated_to, name) where room_id is not null;

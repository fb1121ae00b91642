-- Mailboxes: an address under a mail domain the operator allows, claimed by one project of the
-- deployment, delivering to a queue of one of its rooms.

create table mailboxes (
  address text primary key,
  project_id uuid not null references projects (id) on delete cascade,
  room_id uuid not null references rooms (id) on delete cascade,
  queue text not null,
  public boolean not null default false,
  annotations jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index mailboxes_project_idx on mailboxes (project_id, address);
create index mailboxes_room_idx on mailboxes (room_id, address);

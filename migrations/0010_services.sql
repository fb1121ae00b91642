-- Services: project-wide (room_id null) or scoped to one room. The spec is the ServiceSpec as shown;
-- a service rendered from a template with obscure variables also keeps the spec to run, encrypted.

create table services (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  room_id uuid references rooms (id) on delete cascade,
  name text not null,
  spec jsonb not null,
  spec_sealed text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Names are unique among the project's services and among each room's.
create unique index services_project_name_key on services (project_id, name) where room_id is null;
create unique index services_room_name_key on services (room_id, name) where room_id is not null;
create index services_project_room_idx on services (project_id, room_id, name);

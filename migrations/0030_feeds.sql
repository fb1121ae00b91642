-- Feeds, their messages, and subscriptions that fan the messages out into room storage.

create table feeds (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  name text not null,
  description text not null default '',
  -- fixed at creation
  visibility text not null check (visibility in ('public', 'project', 'private')),
  paused boolean not null default false,
  annotations jsonb not null default '{}'::jsonb,
  -- a JSON Schema object, true or false; null accepts any JSON value
  message_schema jsonb,
  -- bumped whenever message_schema changes, so a validator is compiled once per version
  schema_version integer not null default 1,
  -- the seq of the feed's latest message: publishers take seqs from here under the row lock, so
  -- seqs commit in order and a reader never sees a later one before an earlier one
  last_seq bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (project_id, name)
);

-- Accepted messages, kept until every subscription of the feed has delivered them.
create table feed_messages (
  feed_id uuid not null references feeds (id) on delete cascade,
  seq bigint not null,
  id uuid not null,
  -- the message as compact JSON text: written to the files as it is
  data text not null,
  created_at timestamptz not null default now(),
  primary key (feed_id, seq)
);

create table feed_subscriptions (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  feed_id uuid not null references feeds (id) on delete cascade,
  room_id uuid not null references rooms (id) on delete cascade,
  -- folder inside the room's storage, normalised ('' is the room's root)
  path text not null,
  -- null: the default format
  filename_datetime_format text,
  annotations jsonb not null default '{}'::jsonb,
  -- every message up to this seq is in the room's files
  delivered_seq bigint not null,
  -- the batch being written: (delivered_seq, pending_to_seq] into pending_file (a project storage
  -- path); set before the file is written and cleared in the transaction that advances
  -- delivered_seq, so a crash in between rewrites the same file with the same lines
  pending_to_seq bigint,
  pending_file text,
  -- when the next file is due; null while nothing waits (a flush job exists exactly when set)
  flush_due_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index feed_subscriptions_feed_idx on feed_subscriptions (feed_id);
create index feed_subscriptions_project_idx on feed_subscriptions (project_id, created_at);
create index feed_subscriptions_room_idx on feed_subscriptions (room_id);

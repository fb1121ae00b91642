-- The audit log: who did what, when, with which credential (docs/audit-log.md). An entry is written
-- in the transaction of the change it records; refusals are written in groups after their answer.
-- It is append-only: the database refuses UPDATE and DELETE, except to the retention job, which
-- says so for its own transaction (`set local atrium.audit_retention = 'on'`). There is no foreign
-- key to projects: an entry outlives what it names until retention removes it.
create table audit_log (
  -- Ordered by `seq`, the order entries were committed in per instance; ids are for references.
  seq bigint generated always as identity primary key,
  id uuid not null unique,
  at timestamptz not null default now(),
  -- null for the deployment's own events (the first-run setup, signing-key rotation)
  project_id uuid,
  -- who: a user, an API key, a participant token, or nobody known (a failed sign-in)
  actor_type text not null,
  actor_id text,
  actor_name text,
  -- with which credential: api_key, user (a personal token), oauth, participant, session (sign-in pages)
  credential_kind text,
  credential_id text,
  oauth_client_id text,
  -- the action on its target, `<type>.<action>` (`room.create`, `feed.publish`, `signin.password`)
  action text not null,
  target_type text,
  target_id text,
  -- succeeded, refused (by the authority check), failed (a failed sign-in)
  outcome text not null check (outcome in ('succeeded', 'refused', 'failed')),
  reason text,
  request_id text,
  client_address text,
  user_agent text
);

create index audit_log_project on audit_log (project_id, seq desc);
create index audit_log_at on audit_log (at);

create function audit_log_append_only() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' and current_setting('atrium.audit_retention', true) = 'on' then
    return old;
  end if;
  raise exception 'audit_log is append-only: entries are removed by the retention job alone'
    using errcode = 'restrict_violation';
end
$$;

create trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_append_only();

create function audit_log_no_truncate() returns trigger language plpgsql as $$
begin
  raise exception 'audit_log is append-only: entries are removed by the retention job alone'
    using errcode = 'restrict_violation';
end
$$;

create trigger audit_log_no_truncate before truncate on audit_log
  for each statement execute function audit_log_no_truncate();

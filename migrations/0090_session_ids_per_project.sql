-- A session's id is the one its room server reports, and unique within its project only: a project
-- that reports an id another project used gets a session of its own, not a conflict that would tell
-- it the id exists elsewhere (and let it take ids another project will report). Every table that
-- refers to a session does so by (project_id, session_id).
alter table session_participants add column project_id uuid;
update session_participants p set project_id = s.project_id from room_sessions s where s.id = p.session_id;
alter table session_participants alter column project_id set not null;

alter table session_participants drop constraint session_participants_session_id_fkey;
alter table session_spans drop constraint session_spans_session_id_fkey;
alter table session_events drop constraint session_events_session_id_fkey;
alter table session_metrics drop constraint session_metrics_session_id_fkey;

alter table room_sessions drop constraint room_sessions_pkey;
alter table room_sessions add primary key (project_id, id);

alter table session_participants drop constraint session_participants_pkey;
alter table session_participants add primary key (project_id, session_id, participant_id);
alter table session_participants add foreign key (project_id, session_id) references room_sessions (project_id, id) on delete cascade;
alter table session_spans add foreign key (project_id, session_id) references room_sessions (project_id, id) on delete cascade;

-- An exporter's resend is the same item within its session of its project.
alter table session_events drop constraint session_events_session_id_digest_key;
alter table session_events add unique (project_id, session_id, digest);
alter table session_events add foreign key (project_id, session_id) references room_sessions (project_id, id) on delete cascade;
alter table session_metrics drop constraint session_metrics_session_id_digest_key;
alter table session_metrics add unique (project_id, session_id, digest);
alter table session_metrics add foreign key (project_id, session_id) references room_sessions (project_id, id) on delete cascade;

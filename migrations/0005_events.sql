-- Domain events belong to the platform (src/platform/events); webhooks are one of their consumers.
alter table webhook_events rename to events;
alter index webhook_events_project_idx rename to events_project_idx;
alter table events rename constraint webhook_events_pkey to events_pkey;
alter table events rename constraint webhook_events_project_id_fkey to events_project_id_fkey;

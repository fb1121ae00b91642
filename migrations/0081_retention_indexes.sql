-- Indexes for background pruning (retention), so that each bounded batch finds its oldest rows
-- without scanning the table.
create index webhook_deliveries_finished_created_idx on webhook_deliveries (created_at) where status <> 'pending';
create index events_created_idx on events (created_at);
create index jobs_dead_created_idx on jobs (created_at) where status = 'dead';

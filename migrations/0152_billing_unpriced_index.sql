-- The usage report lists the models called without a price in its range: these partial indexes
-- hold only the rollup rows that counted such calls, so finding them reads a handful of rows
-- instead of the range's whole rollup (a month of a busy project is hundreds of thousands).
create index billing_usage_rollup_unpriced_idx on billing_usage_rollup (project_id, hour) where unpriced_requests > 0;
create index billing_usage_daily_unpriced_idx on billing_usage_daily (project_id, day) where unpriced_requests > 0;

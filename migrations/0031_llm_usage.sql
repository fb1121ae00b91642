-- One record per call through the LLM proxy, written once the answer completed: what billing prices
-- (append-only; the request id makes writing it twice a no-op). Field meanings: docs/llm-proxy.md.
create table llm_usage (
  request_id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  -- who called: the credential kind and id, and the user, OAuth client or participant behind it
  credential_kind text not null,
  credential_id text not null,
  user_id uuid,
  client_id text,
  participant text,
  provider text not null,
  endpoint text not null,
  model text,
  stream boolean not null,
  -- HTTP status the caller got
  status integer not null,
  -- completed | client_aborted | upstream_cut | upstream_error
  outcome text not null,
  -- provider: the provider's own usage fields; none: it reported none (cut, aborted, error)
  usage_source text not null,
  input_tokens bigint not null default 0,
  cached_input_tokens bigint not null default 0,
  cache_write_tokens bigint not null default 0,
  output_tokens bigint not null default 0,
  reasoning_tokens bigint not null default 0,
  latency_ms integer not null,
  ttfb_ms integer,
  upstream_request_id text,
  annotations jsonb not null default '{}'::jsonb,
  started_at timestamptz not null,
  completed_at timestamptz not null default now()
);
create index llm_usage_project_idx on llm_usage (project_id, started_at);

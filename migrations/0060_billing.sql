-- Billing: a prepaid wallet per project, its append-only ledger, in-flight reservations of LLM
-- calls, the hourly usage rollup the usage report reads, auto-recharge, checkouts and payment
-- events. Amounts are integers in micro-units of the currency (1 USD = 1,000,000). docs/billing.md.

-- The balance is the ledger's sum, cached here and updated in the transaction that appends to the
-- ledger; `reserved_micros` is the sum of the project's reservations.
create table billing_wallets (
  project_id uuid primary key references projects (id) on delete cascade,
  balance_micros bigint not null default 0,
  reserved_micros bigint not null default 0,
  updated_at timestamptz not null default now()
);

-- Append-only: never updated or deleted (corrections are reversal entries).
create table billing_ledger (
  seq bigint generated always as identity primary key,
  id uuid not null unique,
  project_id uuid not null references projects (id) on delete cascade,
  -- credit_purchase | auto_recharge | subscription_grant | usage_debit | adjustment | reversal
  entry_type text not null,
  amount_micros bigint not null,
  balance_after_micros bigint not null,
  idempotency_key text not null,
  reference text,
  reference_type text,
  description text not null,
  reverses_entry_id uuid,
  created_at timestamptz not null default now(),
  unique (project_id, idempotency_key)
);
create index billing_ledger_project_idx on billing_ledger (project_id, seq desc);

-- What in-flight LLM calls hold against the balance; removed when the call is priced.
create table billing_reservations (
  request_id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  amount_micros bigint not null,
  created_at timestamptz not null default now()
);
create index billing_reservations_age_idx on billing_reservations (created_at);

-- Priced usage per project and UTC hour, by provider, model, usage type, user and room.
create table billing_usage_rollup (
  project_id uuid not null references projects (id) on delete cascade,
  hour timestamptz not null,
  provider text not null,
  model text not null,
  usage_type text not null,
  user_key text not null,
  room text not null,
  quantity bigint not null default 0,
  cost_micros bigint not null default 0,
  requests bigint not null default 0,
  primary key (project_id, hour, provider, model, usage_type, user_key, room)
);

create table billing_auto_recharge (
  project_id uuid primary key references projects (id) on delete cascade,
  enabled boolean not null,
  amount_micros bigint not null,
  threshold_micros bigint not null,
  monthly_budget_micros bigint,
  consecutive_failures integer not null default 0,
  paused_reason text,
  last_recharge_at timestamptz,
  updated_at timestamptz not null default now()
);

-- Auto-recharge attempts; at most one pending per project.
create table billing_recharges (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  period text not null,
  amount_micros bigint not null,
  -- pending | succeeded | failed
  status text not null,
  provider_ref text,
  error text,
  created_at timestamptz not null default now(),
  settled_at timestamptz
);
create unique index billing_recharges_one_pending on billing_recharges (project_id) where status = 'pending';
create index billing_recharges_period_idx on billing_recharges (project_id, period);

-- Checkout sessions (credits, subscriptions) of the payment provider.
create table billing_checkouts (
  id uuid primary key,
  project_id uuid not null references projects (id) on delete cascade,
  -- credits | subscription
  kind text not null,
  amount_micros bigint not null,
  quantity integer not null,
  success_url text not null,
  cancel_url text not null,
  provider text not null,
  provider_ref text,
  -- open | completed | canceled
  status text not null default 'open',
  created_at timestamptz not null default now(),
  completed_at timestamptz
);

-- The card (or other payment method) saved at checkout, charged by auto-recharge.
create table billing_payment_methods (
  project_id uuid primary key references projects (id) on delete cascade,
  provider text not null,
  provider_ref text not null,
  label text not null,
  created_at timestamptz not null default now()
);

create table billing_subscriptions (
  project_id uuid primary key references projects (id) on delete cascade,
  plan text not null,
  status text not null,
  monthly_credit_micros bigint not null,
  provider text not null,
  provider_ref text,
  current_period_start timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Each payment provider event is processed once.
create table billing_payment_events (
  provider text not null,
  event_id text not null,
  type text not null,
  processed_at timestamptz not null default now(),
  primary key (provider, event_id)
);

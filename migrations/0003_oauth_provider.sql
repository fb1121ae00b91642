-- The OAuth authorization server's storage and end-user sign-in.

-- Every oidc-provider model (sessions, interactions, grants, codes, refresh tokens, device codes…)
-- in one table, keyed by model name and id. The payload is the library's own JSON, kept whole so
-- library upgrades that add fields need no migration; the columns beside it are copied out of it
-- for the lookups the library makes.
create table oauth_provider_models (
  model text not null,
  id text not null,
  payload jsonb not null,
  grant_id text,
  account_id text,
  uid text,
  user_code text,
  expires_at timestamptz,
  -- set once, by a conditional update: the second redemption of a code or refresh token finds it set
  consumed_at timestamptz,
  primary key (model, id)
);
create index oauth_provider_models_grant_idx on oauth_provider_models (grant_id) where grant_id is not null;
create index oauth_provider_models_account_idx on oauth_provider_models (account_id) where account_id is not null;
create index oauth_provider_models_uid_idx on oauth_provider_models (model, uid) where uid is not null;
create index oauth_provider_models_user_code_idx on oauth_provider_models (model, user_code) where user_code is not null;
create index oauth_provider_models_expires_idx on oauth_provider_models (expires_at) where expires_at is not null;

-- Single-use secrets sent by email: confirmation links, password-reset links and one-time sign-in
-- codes. Only a hash is stored; each belongs to the sign-in flow (interaction) that asked for it.
create table auth_email_tokens (
  id uuid primary key,
  purpose text not null check (purpose in ('confirm', 'reset', 'code')),
  user_id uuid not null references users (id) on delete cascade,
  secret_hash bytea not null,
  flow text not null,
  -- a sign-up's password, applied to the account only when this confirmation link is used
  password_hash text,
  attempts integer not null default 0,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index auth_email_tokens_user_idx on auth_email_tokens (user_id, purpose, created_at);

-- Accounts at upstream OpenID Connect providers linked to local users.
create table user_identities (
  provider text not null,
  subject text not null,
  user_id uuid not null references users (id) on delete cascade,
  email text,
  created_at timestamptz not null default now(),
  primary key (provider, subject)
);
create index user_identities_user_idx on user_identities (user_id);

-- Development mail outbox: with no SMTP server configured, the embedded quick start keeps mail
-- here and shows it at /dev/mail.
create table dev_mail_outbox (
  id uuid primary key,
  recipient text not null,
  subject text not null,
  text_body text not null,
  html_body text,
  created_at timestamptz not null default now()
);
create index dev_mail_outbox_created_idx on dev_mail_outbox (created_at);

-- Second factors of accounts: an authenticator app (TOTP), passkeys (WebAuthn) and recovery codes;
-- the WebAuthn challenges in flight; sign-ins waiting for their second factor; and the project
-- policy that requires a second factor of admins.

-- One authenticator app per account. `secret` is the confirmed one (encrypted: the service needs it
-- to compute codes); `pending_secret` an enrolment not yet confirmed with a first code. `last_step`
-- is the newest time step whose code was accepted: a code is accepted once (no replay in its window).
create table user_totp (
  user_id uuid primary key references users (id) on delete cascade,
  secret text,
  pending_secret text,
  last_step bigint not null default 0,
  enabled_at timestamptz,
  updated_at timestamptz not null default now()
);

create table user_passkeys (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  -- base64url of the credential id, as the browser reports it
  credential_id text not null,
  public_key bytea not null,
  sign_count bigint not null default 0,
  transports text[] not null default '{}',
  -- synced ('multiDevice') or bound to one authenticator ('singleDevice')
  device_type text not null,
  backed_up boolean not null default false,
  name text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create unique index user_passkeys_credential_key on user_passkeys (credential_id);
create index user_passkeys_user_idx on user_passkeys (user_id);

-- Recovery codes: SHA-256 of each (they are random, high-entropy), each usable once.
create table user_recovery_codes (
  id uuid primary key,
  user_id uuid not null references users (id) on delete cascade,
  code_hash bytea not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index user_recovery_codes_user_idx on user_recovery_codes (user_id);

-- A WebAuthn challenge between the options and the browser's answer; used once.
create table webauthn_challenges (
  id uuid primary key,
  purpose text not null,
  challenge text not null,
  user_id uuid references users (id) on delete cascade,
  flow text,
  expires_at timestamptz not null
);
create index webauthn_challenges_expiry_idx on webauthn_challenges (expires_at);

-- A sign-in flow whose first factor passed: the account and how it proved itself so far. The
-- flow's own cookie binds it to the browser; the row ends when the second factor is given.
create table signin_pending_factors (
  flow text primary key,
  user_id uuid not null references users (id) on delete cascade,
  amr text[] not null,
  expires_at timestamptz not null
);

alter table projects add column admins_need_second_factor boolean not null default false;

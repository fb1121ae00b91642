-- Billing's books, tightened (docs/billing.md "The invariants"):
-- the usage rollups count the calls priced without a price, and those billed at their reservation
-- because their provider reported no usage, so reports and the console can show them;
-- a checkout keeps its currency, to be matched with what its provider says was paid;
-- and the ledger refuses a DELETE as it refuses an UPDATE: an entry goes only with its project.
alter table billing_usage_rollup add column unpriced_requests bigint not null default 0;
alter table billing_usage_rollup add column estimated_requests bigint not null default 0;
alter table billing_usage_daily add column unpriced_requests bigint not null default 0;
alter table billing_usage_daily add column estimated_requests bigint not null default 0;

alter table billing_checkouts add column currency text;

-- A project's deletion cascades to its entries after the project row is gone: those deletes pass.
create function billing_ledger_no_delete() returns trigger language plpgsql as $$
begin
  if exists (select 1 from projects where id = old.project_id) then
    raise exception 'billing_ledger is append-only: correct an entry with a reversal entry'
      using errcode = 'restrict_violation';
  end if;
  return old;
end
$$;

create trigger billing_ledger_no_delete before delete on billing_ledger
  for each row execute function billing_ledger_no_delete();

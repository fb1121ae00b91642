-- The ledger is append-only: a correction is a reversal entry, never an update (docs/billing.md).
-- The code never updates an entry; this makes the database refuse it too. Entries still go with
-- their project (its deletion cascades).
create function billing_ledger_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'billing_ledger is append-only: correct an entry with a reversal entry'
    using errcode = 'restrict_violation';
end
$$;

create trigger billing_ledger_no_update before update on billing_ledger
  for each row execute function billing_ledger_append_only();

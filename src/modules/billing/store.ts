// Billing's SQL. The ledger is append-only; every write to it updates the wallet in the same
// transaction (callers pass a transaction). Every query is keyed by the project id. Amounts travel
// as text and are cast to bigint, so no float ever touches them.
import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../platform/db/engine.ts';
import { CompiledSql } from '../../platform/db/statements.ts';
import { rowsOf } from '../../platform/db/rows.ts';
import { likeContains, type Page } from '../../platform/http/lists.ts';

const big = (value: bigint) => sql`${value.toString()}::bigint`;
async function rows<T>(db: Db, query: SQL): Promise<T[]> {
  return rowsOf<T>(await db.execute(query));
}

export type EntryType = 'credit_purchase' | 'auto_recharge' | 'subscription_grant' | 'usage_debit' | 'adjustment' | 'reversal';

export interface NewEntry {
  projectId: string;
  type: EntryType;
  amountMicros: bigint;
  idempotencyKey: string;
  reference?: string | null;
  referenceType?: string | null;
  description: string;
  reversesEntryId?: string | null;
}

export interface EntryRow {
  id: string;
  entry_type: string;
  amount_micros: string;
  balance_after_micros: string;
  reference: string | null;
  reference_type: string | null;
  description: string;
  created_at: string | Date;
}

/**
 * Appends entries and moves their wallets by their amounts, once per (project, idempotency key): a
 * replay (or a second copy in `entries`) changes nothing. Returns the entries posted, in order.
 * Two statements however many entries: the projects' wallet rows are locked first (in id order, so
 * concurrent posters cannot deadlock), which makes the check for keys already posted and each
 * entry's balance-after (the wallet plus the running sum) exact under concurrency.
 */
export async function postEntries(tx: Db, entries: readonly NewEntry[]): Promise<{ entry: NewEntry; id: string; balanceMicros: bigint }[]> {
  const unique = new Map<string, { entry: NewEntry; id: string }>();
  for (const entry of entries) {
    const key = `${entry.projectId} ${entry.idempotencyKey}`;
    if (!unique.has(key)) unique.set(key, { entry, id: randomUUID() });
  }
  if (unique.size === 0) return [];
  await lockWallets(tx, entries.map((e) => e.projectId));
  const input = JSON.stringify([...unique.values()].map(({ entry: e, id }, n) => ({
    n, id, project_id: e.projectId, entry_type: e.type, amount_micros: e.amountMicros.toString(), idempotency_key: e.idempotencyKey,
    reference: e.reference ?? null, reference_type: e.referenceType ?? null, description: e.description, reverses_entry_id: e.reversesEntryId ?? null,
  })));
  const posted = await rows<{ id: string; after: string }>(tx, sql`
    with input as (
      select * from jsonb_to_recordset(${input}::jsonb) as x(n int, id uuid, project_id uuid, entry_type text, amount_micros bigint,
        idempotency_key text, reference text, reference_type text, description text, reverses_entry_id uuid)
    ), fresh as (
      select i.*, w.balance_micros + sum(i.amount_micros) over (partition by i.project_id order by i.n) as balance_after_micros
      from input i join billing_wallets w on w.project_id = i.project_id
      where not exists (select 1 from billing_ledger l where l.project_id = i.project_id and l.idempotency_key = i.idempotency_key)
    ), entry as (
      insert into billing_ledger (id, project_id, entry_type, amount_micros, balance_after_micros, idempotency_key, reference, reference_type, description, reverses_entry_id)
      select id, project_id, entry_type, amount_micros, balance_after_micros, idempotency_key, reference, reference_type, description, reverses_entry_id
      from fresh order by n
      returning id, project_id, amount_micros, balance_after_micros
    ), moved as (
      update billing_wallets w set balance_micros = w.balance_micros + m.total, updated_at = now()
      from (select project_id, sum(amount_micros) as total from entry group by project_id) m where w.project_id = m.project_id
    )
    select id::text, balance_after_micros::text as after from entry`);
  const after = new Map(posted.map((r) => [r.id, BigInt(r.after)]));
  return [...unique.values()].filter(({ id }) => after.has(id)).map(({ entry, id }) => ({ entry, id, balanceMicros: after.get(id)! }));
}

/** Appends one entry (see `postEntries`); undefined when its idempotency key was posted before. */
export async function postEntry(tx: Db, entry: NewEntry): Promise<{ id: string; balanceMicros: bigint } | undefined> {
  const [posted] = await postEntries(tx, [entry]);
  return posted && { id: posted.id, balanceMicros: posted.balanceMicros };
}

export async function findEntry(db: Db, projectId: string, id: string): Promise<(EntryRow & { idempotency_key: string }) | undefined> {
  const [row] = await rows<EntryRow & { idempotency_key: string }>(db, sql`
    select id::text, entry_type, amount_micros::text, balance_after_micros::text, reference, reference_type, description, created_at, idempotency_key
    from billing_ledger where project_id = ${projectId}::uuid and id = ${id}::uuid`);
  return row;
}

export async function listEntries(db: Db, projectId: string, page: Page): Promise<{ items: EntryRow[]; total: number }> {
  const where = page.filter
    ? sql`project_id = ${projectId}::uuid and (entry_type ilike ${likeContains(page.filter)} or description ilike ${likeContains(page.filter)})`
    : sql`project_id = ${projectId}::uuid`;
  const items = await rows<EntryRow & { total: string }>(db, sql`
    select id::text, entry_type, amount_micros::text, balance_after_micros::text, reference, reference_type, description, created_at, count(*) over () as total
    from billing_ledger where ${where} order by seq desc limit ${page.limit} offset ${page.offset}`);
  const total = items[0] ? Number(items[0].total) : Number((await rows<{ n: string }>(db, sql`select count(*) as n from billing_ledger where ${where}`))[0]!.n);
  return { items, total };
}

export interface WalletRow {
  balance: bigint;
  reserved: bigint;
}

/**
 * Locks the projects' wallet rows (creating missing ones) until the transaction ends, in id order.
 * Every transaction that posts to the ledger takes them first, before any other billing row, so that
 * two of them cannot deadlock: a debit's auto-recharge check and a recharge's settlement both wait
 * for the wallet, then go on alone.
 */
export async function lockWallets(tx: Db, projectIds: readonly string[]): Promise<void> {
  const projects = [...new Set(projectIds)].sort();
  await tx.execute(sql`
    insert into billing_wallets (project_id) select p::uuid from jsonb_array_elements_text(${JSON.stringify(projects)}::jsonb) p
    on conflict (project_id) do update set updated_at = now()`);
}

export async function wallet(db: Db, projectId: string): Promise<WalletRow> {
  const [row] = await rows<{ balance: string; reserved: string }>(db, sql`
    select balance_micros::text as balance, reserved_micros::text as reserved from billing_wallets where project_id = ${projectId}::uuid`);
  return { balance: BigInt(row?.balance ?? 0), reserved: BigInt(row?.reserved ?? 0) };
}

/** Projects whose wallet differs from their ledger's sum, or whose reservations differ from their rows (should be none). */
export async function ledgerMismatches(db: Db, projectId?: string): Promise<{ project_id: string; wallet: string; ledger: string; reserved: string; reservations: string }[]> {
  return rows(db, sql`
    select w.project_id::text, w.balance_micros::text as wallet, coalesce(l.total, 0)::text as ledger,
      w.reserved_micros::text as reserved, coalesce(r.total, 0)::text as reservations
    from billing_wallets w
    left join (select project_id, sum(amount_micros) as total from billing_ledger group by project_id) l on l.project_id = w.project_id
    left join (select project_id, sum(amount_micros) as total from billing_reservations group by project_id) r on r.project_id = w.project_id
    where (${projectId ?? null}::uuid is null or w.project_id = ${projectId ?? null}::uuid)
      and (w.balance_micros <> coalesce(l.total, 0) or w.reserved_micros <> coalesce(r.total, 0))
    union all
    select l.project_id::text, '0', sum(l.amount_micros)::text, '0', '0' from billing_ledger l
    where not exists (select 1 from billing_wallets w where w.project_id = l.project_id)
      and (${projectId ?? null}::uuid is null or l.project_id = ${projectId ?? null}::uuid)
    group by l.project_id`);
}

/**
 * Admission: reserves `amount` for a call when the balance minus what is already reserved is
 * above zero, in one statement (the row lock serialises concurrent admissions of a project).
 */
export async function reserve(db: Db, projectId: string, requestId: string, amountMicros: bigint): Promise<boolean> {
  const reserved = await rows<{ request_id: string }>(db, sql`
    with w as (
      update billing_wallets set reserved_micros = reserved_micros + ${big(amountMicros)}
      where project_id = ${projectId}::uuid and balance_micros - reserved_micros > 0
      returning project_id
    )
    insert into billing_reservations (request_id, project_id, amount_micros)
    select ${requestId}::uuid, project_id, ${big(amountMicros)} from w
    returning request_id`);
  return reserved.length > 0;
}

/** Releases calls' reservations (nothing for a call that has none, or was released already). */
export async function release(tx: Db, requestIds: readonly string[]): Promise<void> {
  if (requestIds.length === 0) return;
  await tx.execute(sql`
    with r as (
      delete from billing_reservations where request_id in (select id::uuid from jsonb_array_elements_text(${JSON.stringify(requestIds)}::jsonb) id)
      returning project_id, amount_micros
    ),
    s as (select project_id, sum(amount_micros) as total from r group by project_id)
    update billing_wallets w set reserved_micros = w.reserved_micros - s.total from s where w.project_id = s.project_id`);
}

/** Releases reservations older than `seconds` (calls whose record never came). */
export async function releaseStale(db: Db, seconds: number): Promise<number> {
  const released = await rows<{ n: string }>(db, sql`
    with r as (delete from billing_reservations where created_at < now() - make_interval(secs => ${seconds}) returning project_id, amount_micros),
    s as (select project_id, sum(amount_micros) as total, count(*) as n from r group by project_id),
    u as (update billing_wallets w set reserved_micros = w.reserved_micros - s.total from s where w.project_id = s.project_id returning 1)
    select coalesce(sum(n), 0)::text as n from s`);
  return Number(released[0]?.n ?? 0);
}

export interface RollupLine {
  projectId: string;
  hour: Date;
  provider: string;
  model: string;
  usageType: string;
  userKey: string;
  room: string;
  quantity: bigint;
  costMicros: bigint;
}

const DAY_MS = 86_400_000;

// The lines come summed per hourly row (`rollupRows`): one statement may touch a row only once.
const addLines = new CompiledSql(sql`
  with line as (
    select * from jsonb_to_recordset(${sql.placeholder('lines')}::jsonb) as x(project_id uuid, hour timestamptz, provider text, model text,
      usage_type text, user_key text, room text, quantity bigint, cost_micros bigint, requests bigint)
  ), hourly as (
    insert into billing_usage_rollup as r (project_id, hour, provider, model, usage_type, user_key, room, quantity, cost_micros, requests)
    select project_id, hour, provider, model, usage_type, user_key, room, quantity, cost_micros, requests
    from line
    on conflict (project_id, hour, provider, model, usage_type, user_key, room) do update
    set quantity = r.quantity + excluded.quantity, cost_micros = r.cost_micros + excluded.cost_micros, requests = r.requests + excluded.requests
  )
  insert into billing_usage_daily as d (project_id, day, provider, model, usage_type, user_key, room, quantity, cost_micros, requests)
  select project_id, date_trunc('day', hour, 'UTC'), provider, model, usage_type, user_key, room, sum(quantity), sum(cost_micros), sum(requests)
  from line group by 1, 2, 3, 4, 5, 6, 7
  on conflict (project_id, day, provider, model, usage_type, user_key, room) do update
  set quantity = d.quantity + excluded.quantity, cost_micros = d.cost_micros + excluded.cost_micros, requests = d.requests + excluded.requests`);

/**
 * Lines summed per row of the hourly rollup, with how many lines each sums. A settlement prices
 * hundreds of calls whose lines mostly share a row (one project, model and user in the same hour),
 * so the statement carries a handful of rows instead of four lines per call (docs/contributing/performance-journal.md).
 */
function rollupRows(lines: readonly RollupLine[]): { line: RollupLine; requests: number }[] {
  const rows = new Map<string, { line: RollupLine; requests: number }>();
  for (const line of lines) {
    const key = `${line.projectId}\0${line.hour.getTime()}\0${line.provider}\0${line.model}\0${line.usageType}\0${line.userKey}\0${line.room}`;
    const row = rows.get(key);
    if (!row) rows.set(key, { line: { ...line }, requests: 1 });
    else {
      row.line.quantity += line.quantity;
      row.line.costMicros += line.costMicros;
      row.requests += 1;
    }
  }
  return [...rows.values()];
}

/** Adds priced lines to the hourly and the daily rollup, in one statement. */
export async function addToRollup(tx: Db, lines: readonly RollupLine[]): Promise<void> {
  if (lines.length === 0) return;
  await addLines.run(tx, {
    lines: JSON.stringify(rollupRows(lines).map(({ line: l, requests }) => ({
      project_id: l.projectId, hour: l.hour.toISOString(), provider: l.provider, model: l.model, usage_type: l.usageType, user_key: l.userKey, room: l.room,
      quantity: l.quantity.toString(), cost_micros: l.costMicros.toString(), requests,
    }))),
  });
}

export const REPORT_DIMENSIONS = { model: 'model', provider: 'provider', user: 'user_key', room: 'room', usage_type: 'usage_type' } as const;
export type Dimension = keyof typeof REPORT_DIMENSIONS;

export interface UsageQuery {
  start: Date;
  end: Date;
  interval: 'hour' | 'day' | 'week' | 'month';
  report: readonly Dimension[];
  users?: readonly string[] | undefined;
  room?: string | undefined;
  provider?: string | undefined;
  model?: string | undefined;
  usageType?: string | undefined;
}

export interface UsageRow {
  bucket: string | Date;
  usage_type: string;
  quantity: string;
  cost: string;
  requests: string;
  [dimension: string]: unknown;
}

/**
 * The rollup summed per bucket, requested dimension and usage type; from the daily rollup when the
 * buckets are days or longer and the range is whole UTC days, else from the hourly one.
 */
export async function usageReport(db: Db, projectId: string, query: UsageQuery): Promise<UsageRow[]> {
  const daily = query.interval !== 'hour' && query.start.getTime() % DAY_MS === 0 && query.end.getTime() % DAY_MS === 0;
  const [table, at] = daily ? [sql.raw('billing_usage_daily'), sql.raw('day')] : [sql.raw('billing_usage_rollup'), sql.raw('hour')];
  const dims = query.report.filter((d) => d !== 'usage_type').map((d) => sql.raw(`${REPORT_DIMENSIONS[d]} as "${d}"`));
  const groups = query.report.filter((d) => d !== 'usage_type').map((d) => sql.raw(REPORT_DIMENSIONS[d]));
  const filters: SQL[] = [sql`project_id = ${projectId}::uuid`, sql`${at} >= ${query.start.toISOString()}::timestamptz`, sql`${at} < ${query.end.toISOString()}::timestamptz`];
  if (query.users?.length) filters.push(sql`user_key in (${sql.join(query.users.map((u) => sql`${u}`), sql`, `)})`);
  if (query.room !== undefined) filters.push(sql`room = ${query.room}`);
  if (query.provider !== undefined) filters.push(sql`provider = ${query.provider}`);
  if (query.model !== undefined) filters.push(sql`model = ${query.model}`);
  if (query.usageType !== undefined) filters.push(sql`usage_type = ${query.usageType}`);
  return rows<UsageRow>(db, sql`
    select date_trunc(${query.interval}, ${at}, 'UTC') as bucket, ${sql.join([...dims, sql`usage_type`], sql`, `)},
      sum(quantity)::text as quantity, sum(cost_micros)::text as cost, sum(requests)::text as requests
    from ${table} where ${sql.join(filters, sql` and `)}
    group by ${sql.join([sql`1`, ...groups, sql`usage_type`], sql`, `)}`);
}

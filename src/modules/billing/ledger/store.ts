// The ledger's tables and SQL: wallets (the ledger's sum, cached), the append-only entries, and the
// reservations of calls in flight. Every write to the ledger moves its wallet in the same
// transaction (callers pass one); every query is keyed by the project id. Amounts are bigints.
import { randomUUID } from 'node:crypto';
import { and, desc, eq, getTableColumns, ilike, or, sql } from 'drizzle-orm';
import { bigint, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../../platform/db/columns.ts';
import type { Db } from '../../../platform/db/engine.ts';
import { rowsOf } from '../../../platform/db/rows.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../../platform/http/lists.ts';

export const walletsTable = pgTable('billing_wallets', {
  projectId: uuid('project_id').primaryKey(),
  balanceMicros: bigint('balance_micros', { mode: 'bigint' }).notNull().default(0n),
  reservedMicros: bigint('reserved_micros', { mode: 'bigint' }).notNull().default(0n),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export const ledgerTable = pgTable('billing_ledger', {
  seq: bigint('seq', { mode: 'bigint' }).primaryKey(),
  id: uuid('id').notNull(),
  projectId: uuid('project_id').notNull(),
  entryType: text('entry_type').$type<EntryType>().notNull(),
  amountMicros: bigint('amount_micros', { mode: 'bigint' }).notNull(),
  balanceAfterMicros: bigint('balance_after_micros', { mode: 'bigint' }).notNull(),
  idempotencyKey: text('idempotency_key').notNull(),
  reference: text('reference'),
  referenceType: text('reference_type'),
  description: text('description').notNull(),
  reversesEntryId: uuid('reverses_entry_id'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export const reservationsTable = pgTable('billing_reservations', {
  requestId: uuid('request_id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  amountMicros: bigint('amount_micros', { mode: 'bigint' }).notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export type EntryType = 'credit_purchase' | 'auto_recharge' | 'subscription_grant' | 'usage_debit' | 'adjustment' | 'reversal';
export type EntryRow = typeof ledgerTable.$inferSelect;

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

export interface Posted {
  entry: NewEntry;
  id: string;
  balanceMicros: bigint;
}

/**
 * Appends entries and moves their wallets by their amounts, once per (project, idempotency key): a
 * replay (or a second copy in `entries`) changes nothing. Returns the entries posted, in order.
 * Two statements however many entries: the projects' wallet rows are locked first (in id order, so
 * concurrent posters cannot deadlock), which makes the check for keys already posted and each
 * entry's balance-after (the wallet plus the running sum) exact under concurrency.
 */
export async function postEntries(tx: Db, entries: readonly NewEntry[]): Promise<Posted[]> {
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
  const posted = rowsOf<{ id: string; after: string }>(await tx.execute(sql`
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
    select id::text, balance_after_micros::text as after from entry`));
  const after = new Map(posted.map((r) => [r.id, BigInt(r.after)]));
  return [...unique.values()].filter(({ id }) => after.has(id)).map(({ entry, id }) => ({ entry, id, balanceMicros: after.get(id)! }));
}

export async function findEntry(db: Db, projectId: string, id: string): Promise<EntryRow | undefined> {
  const [row] = await db.select().from(ledgerTable).where(and(eq(ledgerTable.projectId, projectId), eq(ledgerTable.id, id)));
  return row;
}

export async function listEntries(db: Db, projectId: string, page: Page) {
  const where = and(
    eq(ledgerTable.projectId, projectId),
    page.filter ? or(ilike(ledgerTable.entryType, likeContains(page.filter)), ilike(ledgerTable.description, likeContains(page.filter))) : undefined,
  );
  const rows = await db.select({ ...getTableColumns(ledgerTable), total: windowTotal }).from(ledgerTable).where(where)
    .orderBy(desc(ledgerTable.seq)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, ledgerTable, where));
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

export interface Wallet {
  balance: bigint;
  reserved: bigint;
}

export async function wallet(db: Db, projectId: string): Promise<Wallet> {
  const [row] = await db.select({ balance: walletsTable.balanceMicros, reserved: walletsTable.reservedMicros }).from(walletsTable).where(eq(walletsTable.projectId, projectId));
  return row ?? { balance: 0n, reserved: 0n };
}

export interface Mismatch {
  project_id: string;
  wallet: string;
  ledger: string;
  reserved: string;
  reservations: string;
}

/** Projects whose wallet differs from their ledger's sum, or whose reservations differ from their rows (should be none). */
export async function ledgerMismatches(db: Db, projectId?: string): Promise<Mismatch[]> {
  return rowsOf(await db.execute(sql`
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
    group by l.project_id`));
}

/**
 * Admission: reserves `amount` for a call when the balance minus what is already reserved is
 * above zero, in one statement (the row lock serialises concurrent admissions of a project).
 */
export async function reserve(db: Db, projectId: string, requestId: string, amountMicros: bigint): Promise<boolean> {
  const amount = amountMicros.toString();
  const reserved = rowsOf<{ request_id: string }>(await db.execute(sql`
    with w as (
      update billing_wallets set reserved_micros = reserved_micros + ${amount}::bigint
      where project_id = ${projectId}::uuid and balance_micros - reserved_micros > 0
      returning project_id
    )
    insert into billing_reservations (request_id, project_id, amount_micros)
    select ${requestId}::uuid, project_id, ${amount}::bigint from w
    returning request_id`));
  return reserved.length > 0;
}

/** Releases calls' reservations (nothing for a call that has none, or was released already); what each had reserved. */
export async function release(tx: Db, requestIds: readonly string[]): Promise<Map<string, bigint>> {
  if (requestIds.length === 0) return new Map();
  // The ids as one JSON parameter: one statement text whatever their number (a list of
  // parameters would prepare a statement per length).
  const ids = sql`(select id::uuid from jsonb_array_elements_text(${JSON.stringify(requestIds)}::jsonb) id)`;
  const released = await tx.delete(reservationsTable).where(sql`${reservationsTable.requestId} in ${ids}`)
    .returning({ requestId: reservationsTable.requestId, projectId: reservationsTable.projectId, amountMicros: reservationsTable.amountMicros });
  if (released.length === 0) return new Map();
  const byProject = new Map<string, bigint>();
  for (const r of released) byProject.set(r.projectId, (byProject.get(r.projectId) ?? 0n) + r.amountMicros);
  await tx.execute(sql`
    update billing_wallets w set reserved_micros = w.reserved_micros - s.total
    from jsonb_to_recordset(${JSON.stringify([...byProject].map(([project_id, total]) => ({ project_id, total: total.toString() })))}::jsonb) as s(project_id uuid, total bigint)
    where w.project_id = s.project_id`);
  return new Map(released.map((r) => [r.requestId, r.amountMicros]));
}

/** Releases reservations older than `seconds` (calls whose record never came). */
export async function releaseStale(db: Db, seconds: number): Promise<number> {
  const released = rowsOf<{ n: string }>(await db.execute(sql`
    with r as (delete from billing_reservations where created_at < now() - make_interval(secs => ${seconds}) returning project_id, amount_micros),
    s as (select project_id, sum(amount_micros) as total, count(*) as n from r group by project_id),
    u as (update billing_wallets w set reserved_micros = w.reserved_micros - s.total from s where w.project_id = s.project_id returning 1)
    select coalesce(sum(n), 0)::text as n from s`));
  return Number(released[0]?.n ?? 0);
}

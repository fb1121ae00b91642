// The transactional outbox: jobs are rows written by `enqueue` inside the caller's transaction, so
// the work to do commits (or rolls back) together with the change that caused it. The same
// statement sends a NOTIFY for the jobs due at once, which PostgreSQL delivers on commit to every
// instance listening (PGlite in-process), so an idle worker starts at once instead of at its next
// poll. A job due later wakes nobody: a worker finds it when it next looks (poll or another wake-up).
//
// The SQL the worker runs on these rows (claim, renew, finish) lives here as well, so the table has
// one owner.
import { sql, type SQL } from 'drizzle-orm';
import { bigint, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../db/columns.ts';
import type { Db } from '../db/engine.ts';
import { rowsOf } from '../db/rows.ts';

export const JOBS_CHANNEL = 'atrium_jobs';

export const jobsTable = pgTable('jobs', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  topic: text('topic').notNull(),
  key: text('key'),
  payload: jsonb('payload').$type<Record<string, unknown>>().notNull().default({}),
  status: text('status').$type<'pending' | 'dead'>().notNull().default('pending'),
  runAt: timestamptz('run_at').notNull().defaultNow(),
  attempts: integer('attempts').notNull().default(0),
  leaseToken: uuid('lease_token'),
  lastError: text('last_error'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export interface NewJob {
  /** Which handler runs it, e.g. `webhooks.deliver`. */
  topic: string;
  /** De-duplication key: at most one live job per (topic, key). */
  key?: string | undefined;
  payload?: Record<string, unknown> | undefined;
  /** Not before this time; now (the database's clock) when absent. */
  runAt?: Date | undefined;
}

export interface EnqueueOptions {
  /**
   * What to do when a job with the same (topic, key) exists: `ignore` keeps it (the default);
   * `reschedule` moves it to the new run time and payload unless a worker is running it right now.
   */
  onConflict?: 'ignore' | 'reschedule';
}

/**
 * Adds jobs inside the caller's transaction. Returns how many rows were inserted or rescheduled:
 * fewer than given means a keyed job already existed (and, with `reschedule`, was running).
 */
export async function enqueue(tx: Db, jobs: NewJob | readonly NewJob[], options: EnqueueOptions = {}): Promise<number> {
  const list = Array.isArray(jobs) ? (jobs as readonly NewJob[]) : [jobs as NewJob];
  if (list.length === 0) return 0;
  const input = JSON.stringify(list.map((j) => ({ topic: j.topic, key: j.key ?? null, payload: j.payload ?? {}, run_at: j.runAt?.toISOString() ?? null })));
  const onConflict = options.onConflict === 'reschedule'
    ? sql`do update set run_at = excluded.run_at, payload = excluded.payload, status = 'pending', last_error = null, lease_token = null
          where jobs.lease_token is null or jobs.run_at < now()`
    : sql`do nothing`;
  // One round trip: insert, then notify once per topic due now (PostgreSQL folds duplicates per transaction).
  const result = await tx.execute(sql`
    with input as (
      select * from jsonb_to_recordset(${input}::jsonb) as x(topic text, key text, payload jsonb, run_at timestamptz)
    ),
    written as (
      insert into jobs (topic, key, payload, run_at)
      select topic, key, payload, coalesce(run_at, now()) from input
      on conflict (topic, key) where key is not null ${onConflict}
      returning topic, run_at
    ),
    notified as (
      select pg_notify(${JOBS_CHANNEL}, topic) from (select distinct topic from written where run_at <= now()) t
    )
    select (select count(*) from written)::int as written, (select count(*) from notified)::int as notified`);
  return Number(rowsOf<{ written: number }>(result)[0]?.written ?? 0);
}

/**
 * Enqueueing in the same statement as the caller's own writes, for hot paths where a round trip
 * matters: `ctes` are the caller's WITH items (they may insert and return rows), `jobs` is a
 * select over them yielding (topic, key, payload) rows, each due now — or, with `runAt`,
 * (topic, key, payload, run_at) rows, due at run_at (now when null; only jobs due now notify).
 * Keyed duplicates are skipped, as with `enqueue`. The statement returns one row: {written, notified}, plus the caller's `extra`
 * columns (a select list over the CTEs) when given.
 */
export function enqueueWithSql(ctes: SQL, jobs: SQL, extra?: SQL, options: { runAt?: boolean } = {}): SQL {
  return sql`
    with ${ctes},
    written as (
      insert into jobs (topic, key, payload, run_at)
      select topic, key, payload, ${options.runAt ? sql`coalesce(run_at, now())` : sql`now()`} from (${jobs}) as j
      on conflict (topic, key) where key is not null do nothing
      returning topic, run_at
    ),
    notified as (
      select pg_notify(${JOBS_CHANNEL}, topic) from (select distinct topic from written where run_at <= now()) t
    )
    select (select count(*) from written)::int as written, (select count(*) from notified)::int as notified${extra ? sql`, ${extra}` : sql``}`;
}

/** A job as a worker sees it after claiming it. */
export interface ClaimedJob {
  id: string;
  topic: string;
  key: string | null;
  payload: Record<string, unknown>;
  /** Claims so far, this one included. */
  attempts: number;
  createdAt: Date;
  leaseToken: string;
}

/** The clock of a claim or a tick: the database's (shared by all instances) unless a test injects one. */
export const clockSql = (now: Date | undefined) => (now ? sql`${now.toISOString()}::timestamptz` : sql`now()`);

/**
 * Claims up to `limit` due jobs of the given topics: rows locked by another claimer are skipped, so
 * instances never wait for or take each other's rows. The lease is the new run_at.
 */
export async function claimJobs(db: Db, input: { topics: readonly string[]; limit: number; now: Date | undefined; leaseMs: number; leaseToken: string }): Promise<ClaimedJob[]> {
  const now = clockSql(input.now);
  const result = await db.execute(sql`
    update jobs set lease_token = ${input.leaseToken}::uuid, run_at = ${now} + ${input.leaseMs} * interval '1 millisecond', attempts = attempts + 1
    where id = any(array(
      select id from jobs
      where status = 'pending' and run_at <= ${now}
        and topic in (select jsonb_array_elements_text(${JSON.stringify(input.topics)}::jsonb))
      order by run_at
      limit ${input.limit}
      for update skip locked
    ))
    returning id::text as id, topic, key, payload, attempts, (extract(epoch from created_at) * 1000)::float8 as created_ms`);
  return rowsOf<{ id: string; topic: string; key: string | null; payload: Record<string, unknown>; attempts: number; created_ms: number }>(result).map((r) => ({
    id: r.id,
    topic: r.topic,
    key: r.key,
    payload: r.payload,
    attempts: Number(r.attempts),
    createdAt: new Date(Number(r.created_ms)),
    leaseToken: input.leaseToken,
  }));
}

/**
 * Extends the leases of jobs still running. Rows locked right now are being settled (and so are
 * finished): they are skipped rather than waited for, which also rules out a deadlock between a
 * renewal and a settlement taking the same rows in another order.
 */
export async function renewLeases(db: Db, jobs: readonly { id: string; leaseToken: string }[], now: Date | undefined, leaseMs: number): Promise<void> {
  if (jobs.length === 0) return;
  await db.execute(sql`
    update jobs set run_at = ${clockSql(now)} + ${leaseMs} * interval '1 millisecond'
    where id = any(array(
      select j.id from jobs j
      join jsonb_to_recordset(${JSON.stringify(jobs.map((j) => ({ id: j.id, token: j.leaseToken })))}::jsonb) as x(id bigint, token uuid)
        on j.id = x.id and j.lease_token = x.token
      for update of j skip locked
    ))`);
}

export type JobSettlement =
  | { id: string; leaseToken: string; kind: 'done' }
  | { id: string; leaseToken: string; kind: 'retry' | 'dead' | 'release'; runAt: Date; error: string | null };

/**
 * Applies outcomes in one statement, each only while the job still holds the same lease (a worker
 * whose lease expired must not overwrite the new owner's state). Returns the ids that were ours.
 */
export async function settleJobs(tx: Db, settlements: readonly JobSettlement[]): Promise<Set<string>> {
  if (settlements.length === 0) return new Set();
  const input = JSON.stringify(settlements.map((s) => ({
    id: s.id,
    token: s.leaseToken,
    kind: s.kind,
    run_at: s.kind === 'done' ? null : s.runAt.toISOString(),
    error: s.kind === 'done' ? null : s.error,
  })));
  const result = await tx.execute(sql`
    with input as (
      select * from jsonb_to_recordset(${input}::jsonb) as x(id bigint, token uuid, kind text, run_at timestamptz, error text)
    ),
    deleted as (
      delete from jobs j using input i
      where j.id = i.id and j.lease_token = i.token and i.kind = 'done'
      returning j.id
    ),
    updated as (
      update jobs j set
        run_at = i.run_at,
        lease_token = null,
        status = case when i.kind = 'dead' then 'dead' else 'pending' end,
        last_error = coalesce(i.error, j.last_error)
      from input i
      where j.id = i.id and j.lease_token = i.token and i.kind <> 'done'
      returning j.id
    )
    select id::text as id from deleted union all select id::text as id from updated`);
  return new Set(rowsOf<{ id: string }>(result).map((r) => r.id));
}

/** Reclaims the space of finished jobs (rows and index entries); for engines without autovacuum. */
export async function vacuumJobs(db: Db): Promise<void> {
  await db.execute(sql`vacuum jobs`);
}

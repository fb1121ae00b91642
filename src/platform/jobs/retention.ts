// Retention: rows that pile up per event (dead jobs, events no delivery needs any more, ended
// rate-limit windows, development mail, and — declared by their modules — webhook deliveries,
// session telemetry, task runs) are deleted by schedules in bounded batches. Each batch is its own
// short statement, so pruning never holds long locks, and a run stops after `maxBatches` and
// leaves the rest to the next one. What was pruned is counted in
// `atrium_retention_pruned_rows_total{table}`.
import { sql } from 'drizzle-orm';
import { Counter } from 'prom-client';
import type { Db } from '../db/engine.ts';
import { registry } from '../http/metrics.ts';
import { RateCounters } from '../limits/counters.ts';
import { rowsOf } from '../db/rows.ts';
import type { Schedule } from './scheduler.ts';

export const prunedRows = new Counter({
  name: 'atrium_retention_pruned_rows_total',
  help: 'Rows deleted by background retention, by table',
  labelNames: ['table'] as const,
  registers: [registry],
});

/** Statements per table per run: a run deletes at most this many batches, the next run goes on. */
export const RETENTION_MAX_BATCHES = 100;

export interface RetentionLimits {
  /** Rows older than this (milliseconds) go. */
  retentionMs: number;
  /** Rows per statement. */
  batchSize: number;
  /** Statements per table per run. */
  maxBatches: number;
}

/** Runs `deleteBatch` until it deletes fewer than a batch (or `maxBatches` ran); counts the rows. */
export async function pruneInBatches(table: string, limits: Pick<RetentionLimits, 'batchSize' | 'maxBatches'>, deleteBatch: (limit: number) => Promise<number>, signal?: AbortSignal): Promise<number> {
  let total = 0;
  for (let i = 0; i < limits.maxBatches && !signal?.aborted; i++) {
    const n = await deleteBatch(limits.batchSize);
    total += n;
    if (n > 0) prunedRows.inc({ table }, n);
    if (n < limits.batchSize) break;
  }
  return total;
}

const deleted = async (db: Db, query: ReturnType<typeof sql>) => Number(rowsOf<{ n: number }>(await db.execute(query))[0]?.n ?? 0);

/** The platform's own tables, pruned for rows older than `now - retentionMs`; rows per table. */
export async function prunePlatform(db: Db, now: Date, limits: RetentionLimits, signal?: AbortSignal): Promise<Record<string, number>> {
  const before = new Date(now.getTime() - limits.retentionMs).toISOString();
  const out: Record<string, number> = {};
  // Jobs that exhausted their attempts; finished jobs are deleted when they finish.
  out.jobs = await pruneInBatches('jobs', limits, (n) => deleted(db, sql`
    with gone as (delete from jobs where id in (select id from jobs where status = 'dead' and created_at < ${before}::timestamptz order by created_at limit ${n}) returning 1)
    select count(*)::int as n from gone`), signal);
  // Events whose deliveries are all gone (pruned, or never any): nothing reads them any more.
  out.events = await pruneInBatches('events', limits, (n) => deleted(db, sql`
    with gone as (delete from events where id in (
      select e.id from events e where e.created_at < ${before}::timestamptz
        and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)
      order by e.created_at limit ${n}) returning 1)
    select count(*)::int as n from gone`), signal);
  out.dev_mail_outbox = await pruneInBatches('dev_mail_outbox', limits, (n) => deleted(db, sql`
    with gone as (delete from dev_mail_outbox where id in (select id from dev_mail_outbox where created_at < ${before}::timestamptz order by created_at limit ${n}) returning 1)
    select count(*)::int as n from gone`), signal);
  // Ended windows are useless at once; an hour's grace keeps clock skew between instances harmless.
  const counters = new RateCounters(db);
  out.rate_limits = await pruneInBatches('rate_limits', limits, (n) => counters.prune(new Date(now.getTime() - 3600_000), n), signal);
  return out;
}

/** The platform's retention schedule (hourly), for the module that hosts platform schedules. */
export function platformRetentionSchedule(limits: () => RetentionLimits): Schedule {
  return {
    name: 'platform.retention',
    cron: '17 * * * *',
    run: async ({ db, signal }, dueAt) => void (await prunePlatform(db, dueAt, limits(), signal)),
  };
}

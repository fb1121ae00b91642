// The usage rollups: priced usage per project and UTC hour (and per UTC day), by provider, model,
// usage type, user and room, upserted as calls are priced, so a report never scans raw calls.
import { and, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import { bigint, pgTable, text, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../../platform/db/columns.ts';
import type { Db } from '../../../platform/db/engine.ts';
import { CompiledSql, preparedPerDb } from '../../../platform/db/statements.ts';

const rollupColumns = (at: 'hour' | 'day') => ({
  projectId: uuid('project_id').notNull(),
  at: timestamptz(at).notNull(),
  provider: text('provider').notNull(),
  model: text('model').notNull(),
  usageType: text('usage_type').notNull(),
  userKey: text('user_key').notNull(),
  room: text('room').notNull(),
  quantity: bigint('quantity', { mode: 'bigint' }).notNull().default(0n),
  costMicros: bigint('cost_micros', { mode: 'bigint' }).notNull().default(0n),
  requests: bigint('requests', { mode: 'bigint' }).notNull().default(0n),
  /** Calls priced without a price for their model. */
  unpricedRequests: bigint('unpriced_requests', { mode: 'bigint' }).notNull().default(0n),
  /** Calls whose usage never came, billed at what they reserved. */
  estimatedRequests: bigint('estimated_requests', { mode: 'bigint' }).notNull().default(0n),
});

export const hourlyTable = pgTable('billing_usage_rollup', rollupColumns('hour'));
export const dailyTable = pgTable('billing_usage_daily', rollupColumns('day'));

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
  /** 1 on one line of a call priced without a price (or billed at its reservation), to count such calls. */
  unpriced?: 1;
  estimated?: 1;
}

const DAY_MS = 86_400_000;

// The lines come summed per hourly row (`rollupRows`): one statement may touch a row only once.
const addLines = new CompiledSql(sql`
  with line as (
    select * from jsonb_to_recordset(${sql.placeholder('lines')}::jsonb) as x(project_id uuid, hour timestamptz, provider text, model text,
      usage_type text, user_key text, room text, quantity bigint, cost_micros bigint, requests bigint, unpriced bigint, estimated bigint)
  ), hourly as (
    insert into billing_usage_rollup as r (project_id, hour, provider, model, usage_type, user_key, room, quantity, cost_micros, requests, unpriced_requests, estimated_requests)
    select project_id, hour, provider, model, usage_type, user_key, room, quantity, cost_micros, requests, unpriced, estimated
    from line
    on conflict (project_id, hour, provider, model, usage_type, user_key, room) do update
    set quantity = r.quantity + excluded.quantity, cost_micros = r.cost_micros + excluded.cost_micros, requests = r.requests + excluded.requests,
      unpriced_requests = r.unpriced_requests + excluded.unpriced_requests, estimated_requests = r.estimated_requests + excluded.estimated_requests
  )
  insert into billing_usage_daily as d (project_id, day, provider, model, usage_type, user_key, room, quantity, cost_micros, requests, unpriced_requests, estimated_requests)
  select project_id, date_trunc('day', hour, 'UTC'), provider, model, usage_type, user_key, room, sum(quantity), sum(cost_micros), sum(requests), sum(unpriced), sum(estimated)
  from line group by 1, 2, 3, 4, 5, 6, 7
  on conflict (project_id, day, provider, model, usage_type, user_key, room) do update
  set quantity = d.quantity + excluded.quantity, cost_micros = d.cost_micros + excluded.cost_micros, requests = d.requests + excluded.requests,
    unpriced_requests = d.unpriced_requests + excluded.unpriced_requests, estimated_requests = d.estimated_requests + excluded.estimated_requests`);

interface RollupRow {
  line: RollupLine;
  requests: number;
  unpriced: number;
  estimated: number;
}

/**
 * Lines summed per row of the hourly rollup, with how many lines each sums. A settlement prices
 * hundreds of calls whose lines mostly share a row (one project, model and user in the same hour),
 * so the statement carries a handful of rows instead of four lines per call (docs/contributing/performance-journal.md).
 */
function rollupRows(lines: readonly RollupLine[]): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  for (const line of lines) {
    const key = `${line.projectId}\0${line.hour.getTime()}\0${line.provider}\0${line.model}\0${line.usageType}\0${line.userKey}\0${line.room}`;
    const row = rows.get(key);
    if (!row) rows.set(key, { line: { ...line }, requests: 1, unpriced: line.unpriced ?? 0, estimated: line.estimated ?? 0 });
    else {
      row.line.quantity += line.quantity;
      row.line.costMicros += line.costMicros;
      row.requests += 1;
      row.unpriced += line.unpriced ?? 0;
      row.estimated += line.estimated ?? 0;
    }
  }
  return [...rows.values()];
}

/** Adds priced lines to the hourly and the daily rollup, in one statement. */
export async function addToRollup(tx: Db, lines: readonly RollupLine[]): Promise<void> {
  if (lines.length === 0) return;
  await addLines.run(tx, {
    lines: JSON.stringify(rollupRows(lines).map(({ line: l, requests, unpriced, estimated }) => ({
      project_id: l.projectId, hour: l.hour.toISOString(), provider: l.provider, model: l.model, usage_type: l.usageType, user_key: l.userKey, room: l.room,
      quantity: l.quantity.toString(), cost_micros: l.costMicros.toString(), requests, unpriced, estimated,
    }))),
  });
}

/** The report's dimensions, a closed list, and the column each reads. */
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
  bucket: Date;
  usageType: string;
  dimensions: Partial<Record<Dimension, string>>;
  quantity: bigint;
  costMicros: bigint;
  unpriced: bigint;
  estimated: bigint;
}

const INTERVALS = { hour: 'hour', day: 'day', week: 'week', month: 'month' } as const;
/** The grouped dimensions in one order, whatever order the report names them in: one statement per set. */
const DIMENSION_ORDER: readonly Grouped[] = ['model', 'provider', 'user', 'room'];

const total = (column: AnyPgColumn) => sql<string>`sum(${column})`.mapWith((v: string) => BigInt(v));

type Grouped = Exclude<Dimension, 'usage_type'>;
type Filter = 'users' | 'room' | 'provider' | 'model' | 'usageType';
const FILTERS: readonly Filter[] = ['users', 'room', 'provider', 'model', 'usageType'];

/**
 * The report's statement for one shape (rollup, interval, grouped dimensions, filters present),
 * built and prepared once: a report is a few hundred rows, and building the statement's text each
 * time cost more CPU than reading them. Values travel as placeholders (the users as one JSON list).
 */
function reportStatement(daily: boolean, interval: UsageQuery['interval'], grouped: readonly Grouped[], filters: readonly Filter[]) {
  const table = daily ? dailyTable : hourlyTable;
  const columns = { model: table.model, provider: table.provider, user: table.userKey, room: table.room } as const;
  // The interval is one of four words, written into the text: a bound parameter would make the
  // select's expression and the group's differ, to PostgreSQL.
  const bucket = sql<Date>`date_trunc(${sql.raw(`'${INTERVALS[interval]}'`)}, ${table.at}, 'UTC')`.mapWith((v: string | Date) => new Date(v));
  const where: Record<Filter, SQL> = {
    users: sql`${table.userKey} in (select jsonb_array_elements_text(${sql.placeholder('users')}::jsonb))`,
    room: eq(table.room, sql.placeholder('room')),
    provider: eq(table.provider, sql.placeholder('provider')),
    model: eq(table.model, sql.placeholder('model')),
    usageType: eq(table.usageType, sql.placeholder('usageType')),
  };
  const name = `billing_report_${daily ? 'd' : 'h'}_${interval}_${grouped.join('_')}_${filters.join('_')}`;
  return preparedPerDb((db) => db.select({
    bucket, usageType: table.usageType, ...Object.fromEntries(grouped.map((d) => [d, columns[d]])),
    quantity: total(table.quantity), costMicros: total(table.costMicros), unpriced: total(table.unpricedRequests), estimated: total(table.estimatedRequests),
  }).from(table)
    .where(and(eq(table.projectId, sql.placeholder('projectId')), gte(table.at, sql`${sql.placeholder('start')}::timestamptz`), lt(table.at, sql`${sql.placeholder('end')}::timestamptz`), ...filters.map((f) => where[f])))
    .groupBy(bucket, table.usageType, ...grouped.map((d) => columns[d])).prepare(name));
}

const reportStatements = new Map<string, ReturnType<typeof reportStatement>>();

/**
 * The rollup summed per bucket, requested dimension and usage type; from the daily rollup when the
 * buckets are days or longer and the range is whole UTC days, else from the hourly one.
 */
export async function usageRows(db: Db, projectId: string, query: UsageQuery): Promise<UsageRow[]> {
  const daily = query.interval !== 'hour' && query.start.getTime() % DAY_MS === 0 && query.end.getTime() % DAY_MS === 0;
  const grouped = DIMENSION_ORDER.filter((d) => query.report.includes(d));
  const values: Record<string, unknown> = { projectId, start: query.start.toISOString(), end: query.end.toISOString() };
  if (query.users?.length) values.users = JSON.stringify(query.users);
  for (const filter of ['room', 'provider', 'model', 'usageType'] as const) if (query[filter] !== undefined) values[filter] = query[filter];
  const filters = FILTERS.filter((f) => values[f] !== undefined);
  const key = `${daily}|${query.interval}|${grouped.join(',')}|${filters.join(',')}`;
  let statement = reportStatements.get(key);
  if (!statement) reportStatements.set(key, statement = reportStatement(daily, query.interval, grouped, filters));
  const rows = await statement(db).execute(values) as (Omit<UsageRow, 'dimensions'> & Record<string, unknown>)[];
  return rows.map(({ bucket, usageType, quantity, costMicros, unpriced, estimated, ...dimensions }) => (
    { bucket, usageType, dimensions: dimensions as UsageRow['dimensions'], quantity, costMicros, unpriced, estimated }));
}

/** The models a rollup counted calls without a price for, in a range: built once per table (each report runs it). */
const unpricedIn = (table: typeof hourlyTable | typeof dailyTable, name: string) => preparedPerDb((db) => db
  .select({ provider: table.provider, model: table.model, requests: total(table.unpricedRequests) }).from(table)
  // `unpriced_requests > 0` as a partial index has it (migration 0152): the rows with unpriced calls alone are read.
  .where(and(eq(table.projectId, sql.placeholder('projectId')), gte(table.at, sql`${sql.placeholder('start')}::timestamptz`),
    lt(table.at, sql`${sql.placeholder('end')}::timestamptz`), sql`${table.unpricedRequests} > 0`))
  .groupBy(table.provider, table.model).orderBy(table.provider, table.model).prepare(name));
const unpricedHourly = unpricedIn(hourlyTable, 'billing_unpriced_hourly');
const unpricedDaily = unpricedIn(dailyTable, 'billing_unpriced_daily');

/** Models called without a price in a range (whole hours, or whole days from the daily rollup), with how many calls. */
export async function unpricedModels(db: Db, projectId: string, start: Date, end: Date): Promise<{ provider: string; model: string; requests: bigint }[]> {
  const statement = start.getTime() % DAY_MS === 0 && end.getTime() % DAY_MS === 0 ? unpricedDaily : unpricedHourly;
  return statement(db).execute({ projectId, start: start.toISOString(), end: end.toISOString() });
}

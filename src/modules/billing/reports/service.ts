// Usage reports: priced usage per UTC calendar bucket, grouped by a closed list of dimensions and
// filtered, read from the hourly or daily rollup that pricing keeps up to date; and which models
// were called without a price.
import type { AppContext } from '../../../context.ts';
import { badRequest } from '../../../platform/http/errors.ts';
import { fromMicros } from '../money.ts';
import { UNREPORTED } from '../pricing/prices.ts';
import * as store from './store.ts';

export { addToRollup, type RollupLine } from './store.ts';

const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

export interface UsageInput {
  start?: string | undefined;
  end?: string | undefined;
  interval?: Interval | undefined;
  report?: string | undefined;
  users?: string | undefined;
  room?: string | undefined;
  provider?: string | undefined;
  model?: string | undefined;
  usage_type?: string | undefined;
}

/** The start of the UTC calendar bucket holding `at`. */
export function bucketStart(at: Date, interval: Interval): Date {
  const d = new Date(at);
  if (interval === 'hour') return new Date(Math.floor(d.getTime() / 3_600_000) * 3_600_000);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (interval === 'day') return new Date(day);
  if (interval === 'week') return new Date(day - ((d.getUTCDay() + 6) % 7) * 86_400_000);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
}

export function nextBucket(start: Date, interval: Interval): Date {
  if (interval === 'hour') return new Date(start.getTime() + 3_600_000);
  if (interval === 'day') return new Date(start.getTime() + 86_400_000);
  if (interval === 'week') return new Date(start.getTime() + 7 * 86_400_000);
  return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

const MAX_BUCKETS = 5000;
const DIMENSIONS = Object.keys(store.REPORT_DIMENSIONS) as store.Dimension[];

function parseTime(value: string | undefined, field: string, fallback: Date): Date {
  if (value === undefined || value === '') return fallback;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw badRequest(`${field} must be an ISO 8601 date or date-time`);
  return at;
}

/** The report's dimensions from its comma-separated list; 400 for a name not on the closed list. */
function dimensionsOf(report: string | undefined): store.Dimension[] {
  const names = (report ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const name of names) if (!(DIMENSIONS as string[]).includes(name)) throw badRequest(`report must be a comma-separated list of ${DIMENSIONS.join(', ')}`);
  return [...new Set(names)] as store.Dimension[];
}

interface Cell {
  quantities: Record<string, number>;
  costs: Record<string, bigint>;
  requests: number;
  unpriced: number;
  estimated: number;
}
const emptyCell = (): Cell => ({ quantities: {}, costs: {}, requests: 0, unpriced: 0, estimated: 0 });

/**
 * Usage per bucket (UTC calendar-aligned), grouped by the `report` dimensions, filtered; every
 * bucket of the range appears for every group seen (empty ones with zeros), oldest first. Each row
 * counts its calls without a price (`unpriced_requests`) and those billed at their reservation
 * (`estimated_requests`); `unpriced` lists the models called without a price in the range.
 */
export async function usageReport(ctx: AppContext, projectId: string, input: UsageInput) {
  const interval = input.interval ?? 'day';
  const now = new Date();
  const end = parseTime(input.end, 'end', now);
  const start = parseTime(input.start, 'start', new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)));
  if (start >= end) throw badRequest('start must be before end');
  const dims = dimensionsOf(input.report);
  const first = bucketStart(start, interval);
  const buckets: Date[] = [];
  for (let b = first; b < end; b = nextBucket(b, interval)) {
    buckets.push(b);
    if (buckets.length > MAX_BUCKETS) throw badRequest(`The range holds more than ${MAX_BUCKETS} buckets of one ${interval}: shorten it or use a longer interval`);
  }
  const users = input.users ? input.users.split(',').map((u) => u.trim()).filter(Boolean) : undefined;
  // Whole hours: the rollup's grain.
  const from = bucketStart(start, 'hour');
  const [found, unpriced] = await Promise.all([
    store.usageRows(ctx.db, projectId, { start: from, end, interval, report: dims, users, room: input.room, provider: input.provider, model: input.model, usageType: input.usage_type }),
    store.unpricedModels(ctx.db, projectId, from, end),
  ]);
  const keyOf = (row: store.UsageRow) => JSON.stringify(dims.map((d) => (d === 'usage_type' ? row.usageType : row.dimensions[d]) ?? null));
  const cells = new Map<string, Map<number, Cell>>();
  for (const row of found) {
    const key = keyOf(row);
    const at = bucketStart(row.bucket, interval).getTime();
    let byBucket = cells.get(key);
    if (!byBucket) cells.set(key, byBucket = new Map());
    let cell = byBucket.get(at);
    if (!cell) byBucket.set(at, cell = emptyCell());
    cell.quantities[row.usageType] = (cell.quantities[row.usageType] ?? 0) + Number(row.quantity);
    cell.costs[row.usageType] = (cell.costs[row.usageType] ?? 0n) + row.costMicros;
    if (row.usageType === 'request' || row.usageType === UNREPORTED) cell.requests += Number(row.quantity);
    cell.unpriced += Number(row.unpriced);
    cell.estimated += Number(row.estimated);
  }
  if (cells.size === 0) cells.set(JSON.stringify(dims.map(() => null)), new Map());
  const usage = [];
  for (const bucket of buckets) {
    const bucketEnd = nextBucket(bucket, interval);
    for (const [key, byBucket] of [...cells].sort(([a], [b]) => a.localeCompare(b))) {
      const cell = byBucket.get(bucket.getTime()) ?? emptyCell();
      const values = JSON.parse(key) as (string | null)[];
      const cost = Object.values(cell.costs).reduce((sum, c) => sum + c, 0n);
      usage.push({
        start: bucket.toISOString(),
        end: bucketEnd.toISOString(),
        ...Object.fromEntries(dims.map((d, i) => [d, values[i] === '' ? null : values[i]])),
        requests: cell.requests,
        unpriced_requests: cell.unpriced,
        estimated_requests: cell.estimated,
        quantities: cell.quantities,
        costs: Object.fromEntries(Object.entries(cell.costs).map(([t, c]) => [t, fromMicros(c)])),
        cost: fromMicros(cost),
        total: fromMicros(cost),
      });
    }
  }
  return {
    usage,
    unpriced: unpriced.map((u) => ({ provider: u.provider, model: u.model, requests: Number(u.requests) })),
    currency: ctx.config.billing.currency, interval, start: start.toISOString(), end: end.toISOString(),
  };
}

// Session telemetry: OTLP exports attributed to sessions and stored (spans as spans, log records as
// session events, metric data points as metrics), read back as the SDK's items, and pruned.
//
// Attribution: the credential names the project (a room server's API key); the resource attributes
// name the session — `atrium.session.id`, or `atrium.room.name` for the room's running session (or
// the one that ended last, within a few minutes, since exporters flush after the end they describe).
// Items that name no session of the project are rejected, as are items beyond the per-session bound;
// both are reported as an OTLP partial success, which exporters do not retry.
//
// Idempotence: a span is identified by its trace and span id; log records and data points have no id,
// so their content identifies them. A resent export is stored once, and the bound counts it once.
import type { AppContext } from '../../context.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { Page } from '../../platform/http/lists.ts';
import type { JobContext } from '../../platform/jobs/worker.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import {
  ROOM_NAME_ATTRIBUTE, SESSION_ID_ATTRIBUTE, anyValue, attributes, digestOf, nanos, validId,
  type KeyValues, type LogsRequest, type MetricsRequest, type Signal, type TraceRequest,
} from './otlp.ts';
import * as store from './store.ts';

/** How long after its end a session still takes telemetry sent by room name. */
const LATE_TELEMETRY_GRACE_MS = 10 * 60_000;
/** Rows deleted per statement when pruning, so no statement holds locks for long. */
const PRUNE_BATCH = 5000;

export interface IngestResult {
  /** Items not stored (no such session, over the bound, malformed); 0 for a full success. */
  rejected: number;
  /** Why, when some were rejected. */
  message: string | undefined;
}

interface Group<T> {
  resource: Record<string, unknown>;
  items: T[];
}

const nowNanos = () => (BigInt(Date.now()) * 1_000_000n).toString();

/**
 * Stores the items of each resource group in the session the group names, within each session's
 * bound; `invalid` items were already found malformed. `write` inserts the accepted items in the
 * transaction that holds the sessions' counts.
 */
async function ingest<T>(ctx: AppContext, projectId: string, kind: store.TelemetryKind, groups: readonly Group<T>[], invalid: number,
  write: (tx: Db, accepted: { sessionId: string; item: T }[]) => Promise<void>): Promise<IngestResult> {
  const problems = new Map<string, number>();
  const reject = (reason: string, n: number) => {
    if (n > 0) problems.set(reason, (problems.get(reason) ?? 0) + n);
  };
  reject('malformed (a missing or invalid id or time)', invalid);

  const wanted = groups.map((g) => sessionReference(g.resource));
  const ids = [...new Set(wanted.flatMap((w) => (w.id ? [w.id] : [])))];
  const names = [...new Set(wanted.flatMap((w) => (w.id === undefined && w.roomName ? [w.roomName] : [])))];
  const targets = await store.findSessionTargets(ctx.db, projectId, ids, names, LATE_TELEMETRY_GRACE_MS);
  const byId = new Map(targets.map((t) => [t.id, t]));
  const byName = new Map<string, store.SessionTarget>();
  for (const target of targets) {
    const current = byName.get(target.roomName);
    // A running session wins; among equals, the latest started.
    if (!current || (target.active && !current.active) || (target.active === current.active && target.startedAt > current.startedAt)) byName.set(target.roomName, target);
  }

  const candidates: { sessionId: string; item: T }[] = [];
  groups.forEach((group, i) => {
    const ref = wanted[i]!;
    const sessionId = ref.id !== undefined ? byId.get(ref.id)?.id : ref.roomName !== undefined ? byName.get(ref.roomName)?.id : undefined;
    if (sessionId) {
      for (const item of group.items) candidates.push({ sessionId, item });
    } else if (ref.invalid) {
      reject(`${SESSION_ID_ATTRIBUTE} is not a session id`, group.items.length);
    } else if (ref.id === undefined && ref.roomName === undefined) {
      reject(`the resource names no session (set the ${SESSION_ID_ATTRIBUTE} or ${ROOM_NAME_ATTRIBUTE} resource attribute)`, group.items.length);
    } else {
      reject('no such session in this project', group.items.length);
    }
  });

  if (candidates.length > 0) {
    await ctx.db.transaction(async (tx) => {
      const room = await store.lockTelemetryRoom(tx, projectId, kind, [...new Set(candidates.map((c) => c.sessionId))], ctx.config.sessions.telemetryMaxPerSession);
      const accepted = candidates.filter((c) => {
        const left = room.get(c.sessionId) ?? 0;
        if (left <= 0) return false;
        room.set(c.sessionId, left - 1);
        return true;
      });
      reject(`over the session's limit of ${ctx.config.sessions.telemetryMaxPerSession} ${kind}`, candidates.length - accepted.length);
      await write(tx, accepted);
    });
  }
  const rejected = [...problems.values()].reduce((a, b) => a + b, 0);
  return { rejected, message: rejected === 0 ? undefined : [...problems].map(([reason, n]) => `${n} ${reason}`).join('; ') };
}

function sessionReference(resource: Record<string, unknown>): { id?: string; roomName?: string; invalid?: true } {
  const id = resource[SESSION_ID_ATTRIBUTE];
  const roomName = resource[ROOM_NAME_ATTRIBUTE];
  if (id !== undefined && id !== null) return typeof id === 'string' && isUuid(id) ? { id: id.toLowerCase() } : { invalid: true };
  return typeof roomName === 'string' && roomName.length > 0 ? { roomName } : {};
}

export async function ingestTraces(ctx: AppContext, projectId: string, request: TraceRequest): Promise<IngestResult> {
  let invalid = 0;
  const groups: Group<Omit<store.NewSpan, 'session_id'>>[] = (request.resourceSpans ?? []).map((rs) => {
    const resource = attributes(rs.resource?.attributes);
    const items: Omit<store.NewSpan, 'session_id'>[] = [];
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        const traceId = validId(span.traceId, 16);
        const spanId = validId(span.spanId, 8);
        const start = nanos(span.startTimeUnixNano);
        const end = nanos(span.endTimeUnixNano);
        if (!traceId || !spanId || start === undefined || end === undefined) {
          invalid += 1;
          continue;
        }
        items.push({
          trace_id: traceId,
          span_id: spanId,
          parent_span_id: validId(span.parentSpanId, 8) ?? null,
          name: span.name ?? '',
          kind: span.kind ?? 0,
          start_ns: start,
          end_ns: end,
          status_code: span.status?.code ?? 0,
          status_message: span.status?.message || null,
          attributes: attributes(span.attributes),
          events: (span.events ?? []).map((e) => ({ time_unix_nano: nanos(e.timeUnixNano) ?? '0', name: e.name ?? '', attributes: attributes(e.attributes) })),
          links: (span.links ?? []).map((l) => ({ trace_id: validId(l.traceId, 16) ?? null, span_id: validId(l.spanId, 8) ?? null, attributes: attributes(l.attributes) })),
          scope_name: ss.scope?.name || null,
          resource_attributes: resource,
        });
      }
    }
    return { resource, items };
  });
  return ingest(ctx, projectId, 'spans', groups, invalid, (tx, accepted) =>
    store.insertSpans(tx, projectId, accepted.map(({ sessionId, item }) => ({ session_id: sessionId, ...item }))));
}

export async function ingestLogs(ctx: AppContext, projectId: string, request: LogsRequest): Promise<IngestResult> {
  let invalid = 0;
  const groups: Group<Omit<store.NewEvent, 'sessionId'>>[] = (request.resourceLogs ?? []).map((rl) => {
    const resource = attributes(rl.resource?.attributes);
    const items: Omit<store.NewEvent, 'sessionId'>[] = [];
    for (const sl of rl.scopeLogs ?? []) {
      for (const record of sl.logRecords ?? []) {
        const time = nanos(record.timeUnixNano);
        const observed = nanos(record.observedTimeUnixNano);
        if (time === undefined || observed === undefined) {
          invalid += 1;
          continue;
        }
        const data = {
          body: anyValue(record.body),
          severity_text: record.severityText ?? null,
          severity_number: record.severityNumber ?? 0,
          event_name: record.eventName || null,
          trace_id: validId(record.traceId, 16) ?? null,
          span_id: validId(record.spanId, 8) ?? null,
          scope_name: sl.scope?.name || null,
          log_attributes: attributes(record.attributes),
          resource_attributes: resource,
        };
        // The time the event happened, else when it was observed, else now.
        const timeNs = time !== '0' ? time : observed !== '0' ? observed : nowNanos();
        items.push({ type: 'log', timeNs, data, digest: digestOf([time, observed, data]) });
      }
    }
    return { resource, items };
  });
  return ingest(ctx, projectId, 'events', groups, invalid, (tx, accepted) =>
    store.insertEvents(tx, projectId, accepted.map(({ sessionId, item }) => ({ sessionId, ...item }))));
}

type MetricIn = NonNullable<NonNullable<NonNullable<MetricsRequest['resourceMetrics']>[number]['scopeMetrics']>[number]['metrics']>[number];
type PointValues = Pick<store.NewMetricPoint, 'value' | 'count' | 'sum' | 'min' | 'max' | 'bucket_counts' | 'explicit_bounds'>;

const num = (v: string | number | undefined): number | null => {
  if (v === undefined) return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
};
const count = (v: string | number | undefined): string | null => (v === undefined ? null : nanos(v) ?? null);
const NO_VALUES: PointValues = { value: null, count: null, sum: null, min: null, max: null, bucket_counts: null, explicit_bounds: null };

/** The data points of one metric, each with the values its kind carries. */
interface MetricPoints {
  kind: string;
  temporality: number | null;
  isMonotonic: boolean | null;
  points: { attributes: KeyValues; start: string | number | undefined; time: string | number | undefined; values: PointValues }[];
}

function metricPoints(metric: MetricIn): MetricPoints | undefined {
  if (metric.gauge || metric.sum) {
    const source = (metric.gauge ?? metric.sum)!;
    return {
      kind: metric.gauge ? 'gauge' : 'sum',
      temporality: metric.sum?.aggregationTemporality ?? null,
      isMonotonic: metric.sum?.isMonotonic ?? null,
      points: (source.dataPoints ?? []).map((p) => ({ attributes: p.attributes, start: p.startTimeUnixNano, time: p.timeUnixNano, values: { ...NO_VALUES, value: p.asDouble !== undefined ? num(p.asDouble) : num(p.asInt) } })),
    };
  }
  if (metric.histogram) {
    return {
      kind: 'histogram', temporality: metric.histogram.aggregationTemporality ?? null, isMonotonic: null,
      points: (metric.histogram.dataPoints ?? []).map((p) => ({
        attributes: p.attributes, start: p.startTimeUnixNano, time: p.timeUnixNano,
        values: { value: null, count: count(p.count), sum: num(p.sum), min: num(p.min), max: num(p.max), bucket_counts: (p.bucketCounts ?? []).map((c) => count(c) ?? '0'), explicit_bounds: (p.explicitBounds ?? []).map((b) => num(b) ?? 0) },
      })),
    };
  }
  if (metric.exponentialHistogram) {
    return {
      kind: 'exponential_histogram', temporality: metric.exponentialHistogram.aggregationTemporality ?? null, isMonotonic: null,
      points: (metric.exponentialHistogram.dataPoints ?? []).map((p) => ({
        attributes: p.attributes, start: p.startTimeUnixNano, time: p.timeUnixNano,
        values: { ...NO_VALUES, count: count(p.count), sum: num(p.sum), min: num(p.min), max: num(p.max) },
      })),
    };
  }
  if (metric.summary) {
    return {
      kind: 'summary', temporality: null, isMonotonic: null,
      points: (metric.summary.dataPoints ?? []).map((p) => {
        const quantiles = p.quantileValues ?? [];
        const at = (q: number) => num(quantiles.find((v) => num(v.quantile) === q)?.value);
        return { attributes: p.attributes, start: p.startTimeUnixNano, time: p.timeUnixNano, values: { ...NO_VALUES, count: count(p.count), sum: num(p.sum), min: at(0), max: at(1) } };
      }),
    };
  }
  return undefined;
}

export async function ingestMetrics(ctx: AppContext, projectId: string, request: MetricsRequest): Promise<IngestResult> {
  let invalid = 0;
  const groups: Group<Omit<store.NewMetricPoint, 'session_id'>>[] = (request.resourceMetrics ?? []).map((rm) => {
    const resource = attributes(rm.resource?.attributes);
    const items: Omit<store.NewMetricPoint, 'session_id'>[] = [];
    for (const sm of rm.scopeMetrics ?? []) {
      for (const metric of sm.metrics ?? []) {
        const read = metricPoints(metric);
        if (!read) continue;
        for (const point of read.points) {
          const start = point.start === undefined ? null : nanos(point.start);
          const time = nanos(point.time);
          if (start === undefined || time === undefined) {
            invalid += 1;
            continue;
          }
          const pointAttributes = attributes(point.attributes);
          const row = {
            kind: read.kind,
            name: metric.name ?? '',
            unit: metric.unit ?? '',
            temporality: read.temporality,
            is_monotonic: read.isMonotonic,
            ...point.values,
            attributes: pointAttributes,
            start_ns: start,
            time_ns: time !== '0' ? time : nowNanos(),
            scope_name: sm.scope?.name || null,
            resource_attributes: resource,
          };
          items.push({ ...row, digest: digestOf([row.kind, row.name, start, time, pointAttributes, point.values]) });
        }
      }
    }
    return { resource, items };
  });
  return ingest(ctx, projectId, 'metrics', groups, invalid, (tx, accepted) =>
    store.insertMetricPoints(tx, projectId, accepted.map(({ sessionId, item }) => ({ session_id: sessionId, ...item }))));
}

export const ingestBySignal = { traces: ingestTraces, metrics: ingestMetrics, logs: ingestLogs } as const satisfies Record<Signal, unknown>;

// Reading ------------------------------------------------------------------------------------------

const iso = (ns: string | null) => (ns === null ? null : new Date(Number(BigInt(ns) / 1_000_000n)).toISOString());

type Row = Record<string, any>;

const spanView = (r: Row) => ({
  trace_id: r.trace_id,
  span_id: r.span_id,
  parent_span_id: r.parent_span_id,
  name: r.name,
  span_name: r.name,
  kind: r.kind,
  created_at: iso(r.start_ns)!,
  ended_at: iso(r.end_ns)!,
  start_time_unix_nano: r.start_ns,
  end_time_unix_nano: r.end_ns,
  duration: Number(BigInt(r.end_ns) - BigInt(r.start_ns)),
  status: { code: r.status_code, message: r.status_message },
  span_attributes: r.attributes,
  events: r.events,
  links: r.links,
  scope_name: r.scope_name,
  resource_attributes: r.resource_attributes,
});

const eventView = (r: Row) => ({ type: r.type, created_at: iso(r.time_ns)!, time_unix_nano: r.time_ns, data: r.data });

const metricView = (r: Row) => ({
  kind: r.kind,
  name: r.name,
  metric_name: r.name,
  unit: r.unit,
  metric_unit: r.unit,
  aggregation_temporality: r.temporality,
  is_monotonic: r.is_monotonic,
  value: r.value,
  count: r.count === null ? null : Number(r.count),
  sum: r.sum,
  min: r.min,
  max: r.max,
  bucket_counts: r.bucket_counts === null ? null : (r.bucket_counts as string[]).map(Number),
  explicit_bounds: r.explicit_bounds,
  metric_attributes: r.attributes,
  created_at: iso(r.start_ns ?? r.time_ns)!,
  ended_at: iso(r.time_ns)!,
  start_time_unix_nano: r.start_ns,
  time_unix_nano: r.time_ns,
  scope_name: r.scope_name,
  resource_attributes: r.resource_attributes,
});

type Filter = Parameters<typeof store.listTelemetry>[5];

async function listPage<T>(db: Db, projectId: string, sessionId: string, kind: store.TelemetryKind, page: Page, filter: Filter, view: (r: Row) => T) {
  const { items, total } = await store.listTelemetry(db, projectId, sessionId, kind, page, filter);
  return { items: items.map(view), total };
}

/** One page of a session's telemetry, oldest first, as API items. */
export const listSpans = (db: Db, projectId: string, sessionId: string, page: Page, filter: Filter) => listPage(db, projectId, sessionId, 'spans', page, filter, spanView);
export const listEvents = (db: Db, projectId: string, sessionId: string, page: Page, filter: Filter) => listPage(db, projectId, sessionId, 'events', page, filter, eventView);
export const listMetrics = (db: Db, projectId: string, sessionId: string, page: Page, filter: Filter) => listPage(db, projectId, sessionId, 'metrics', page, filter, metricView);

/** The retention schedule's run: deletes every kind of telemetry older than the retention period. */
export async function pruneTelemetry(ctx: AppContext, { db }: JobContext, now: Date): Promise<void> {
  const before = new Date(now.getTime() - ctx.config.sessions.telemetryRetentionMs);
  for (const kind of ['spans', 'events', 'metrics'] as const) {
    while ((await store.pruneTelemetry(db, kind, before, PRUNE_BATCH)) === PRUNE_BATCH);
  }
}

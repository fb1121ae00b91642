// Room-server benchmarks (called by bench/run.ts; also runs alone: `node bench/room-servers.ts`),
// on PostgreSQL, the engine the targets are set for:
//   - OTLP span ingest: `connections` clients post OTLP/HTTP JSON trace exports of 512 spans each
//     (fresh trace and span ids every time, so nothing is a resend) to /otlp/v1/traces for one
//     session, back to back, for the measured duration; spans accepted per second (target ≥ 10,000).
//   - scheduled-task firing: 10,000 one-time tasks due in the same minute, delivered to a room server
//     stand-in in this process; delay from the due time to each message's arrival, and duplicates
//     (target: all submitted within 15 s of the due time, none twice).
import { randomBytes, randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AddressInfo } from 'node:net';
import type { AtriumProcess, BenchContext, Engine } from './lib.ts';

const BATCH = 512;
const TASKS = Number(process.env.BENCH_SCHEDULED_TASKS ?? 10_000);
/** Tasks are due at a minute boundary at least this far after the start of their creation. */
const CREATION_ALLOWANCE_MS = 45_000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(url: string, token: string, body: string): Promise<{ status: number; text: string; retryAfter: string | undefined }> {
  return new Promise((resolve) => {
    const request = http.request(url, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: response.headers['retry-after'] }));
    });
    request.on('error', (error) => resolve({ status: 0, text: error.message, retryAfter: undefined }));
    request.end(body);
  });
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** One OTLP JSON export of BATCH spans of one trace, as an exporter would send it. */
function traceExport(sessionId: string): string {
  const traceId = randomBytes(16).toString('hex');
  const start = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: BATCH }, (_, i) => ({
    traceId,
    spanId: randomBytes(8).toString('hex'),
    name: i === 0 ? 'turn' : 'tool.call',
    kind: 1,
    startTimeUnixNano: String(start + BigInt(i) * 1000n),
    endTimeUnixNano: String(start + BigInt(i) * 1000n + 500_000n),
    attributes: [{ key: 'tool', value: { stringValue: 'search' } }, { key: 'n', value: { intValue: String(i) } }],
    status: { code: 1 },
  }));
  return JSON.stringify({
    resourceSpans: [{
      resource: { attributes: [{ key: 'atrium.session.id', value: { stringValue: sessionId } }, { key: 'service.name', value: { stringValue: 'bench-room-server' } }] },
      scopeSpans: [{ scope: { name: 'bench' }, spans }],
    }],
  });
}

async function api(atrium: AtriumProcess, method: string, path: string, json?: unknown): Promise<any> {
  const response = await fetch(`${atrium.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${atrium.tenant.api_key}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: json === undefined ? null : JSON.stringify(json),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

interface IngestResult {
  seconds: number;
  exports: number;
  spansAccepted: number;
  spansPerSecond: number;
  exportP50Ms: number;
  exportP99Ms: number;
  failures: number;
  /** Failed exports by status and the start of the answer, to see why. */
  failureKinds: Record<string, number>;
  /** 429 answers, each retried after its Retry-After. */
  throttled: number;
}

async function ingest(context: BenchContext, engine: Engine): Promise<IngestResult> {
  const atrium = await context.startAtrium(engine, { ATRIUM_SESSION_TELEMETRY_MAX_ITEMS: '99999999' });
  try {
    const project = `/accounts/projects/${atrium.tenant.project_id}`;
    const session = await api(atrium, 'POST', `${project}/sessions`, { room_name: 'bench' });
    const url = `${atrium.url}/otlp/v1/traces`;
    const send = async (seconds: number) => {
      const latencies: number[] = [];
      let accepted = 0;
      let failures = 0;
      let throttled = 0;
      const failureKinds: Record<string, number> = {};
      const start = performance.now();
      const end = start + seconds * 1000;
      await Promise.all(Array.from({ length: context.connections }, async () => {
        while (performance.now() < end) {
          const body = traceExport(session.id);
          const t0 = performance.now();
          let r = await post(url, atrium.tenant.api_key, body);
          // As OpenTelemetry's exporters do: a 429 (Atrium's back-pressure beyond its concurrent
          // exports) is retried after Retry-After, and counts against the export's latency.
          while (r.status === 429 && performance.now() < end) {
            throttled += 1;
            await sleep(1000 * Number(r.retryAfter ?? 1));
            r = await post(url, atrium.tenant.api_key, body);
          }
          latencies.push(performance.now() - t0);
          if (r.status === 429) break;
          if (r.status === 200 && r.text === '{}') accepted += BATCH;
          else {
            failures += 1;
            const kind = `${r.status} ${r.text.slice(0, 120)}`;
            failureKinds[kind] = (failureKinds[kind] ?? 0) + 1;
          }
        }
      }));
      latencies.sort((a, b) => a - b);
      const elapsed = (performance.now() - start) / 1000;
      return { seconds: round(elapsed, 2), exports: latencies.length, spansAccepted: accepted, spansPerSecond: round(accepted / elapsed, 0), exportP50Ms: round(percentile(latencies, 50)), exportP99Ms: round(percentile(latencies, 99)), failures, failureKinds, throttled };
    };
    context.log(`room servers ${engine}: OTLP warm-up ${context.warmup}s`);
    await send(context.warmup);
    context.log(`room servers ${engine}: OTLP ${context.duration}s with ${context.connections} clients, ${BATCH} spans per export`);
    const result = await send(context.duration);
    const stored = await api(atrium, 'GET', `${project}/sessions/${session.id}`);
    context.log(`room servers ${engine}: ${JSON.stringify(result)}; the session holds ${stored.telemetry.spans} spans`);
    return result;
  } finally {
    await atrium.stop();
  }
}

interface FiringResult {
  tasks: number;
  createdPerSecond: number;
  dueAt: string;
  received: number;
  duplicates: number;
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  allWithin15s: boolean;
}

async function firing(context: BenchContext, engine: Engine): Promise<FiringResult> {
  const arrivals = new Map<string, number[]>();
  const roomServer = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { task_id: string };
      const list = arrivals.get(message.task_id);
      if (list) list.push(at);
      else arrivals.set(message.task_id, [at]);
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  roomServer.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => roomServer.listen(0, '127.0.0.1', resolve));
  const atrium = await context.startAtrium(engine, { ATRIUM_ROOM_SERVER_URL: `http://127.0.0.1:${(roomServer.address() as AddressInfo).port}` });
  try {
    const project = `/accounts/projects/${atrium.tenant.project_id}`;
    await api(atrium, 'POST', `${project}/rooms`, { name: 'bench' });
    // Every task runs once, at one minute far enough ahead for all of them to be created first.
    const due = new Date(Math.ceil((Date.now() + CREATION_ALLOWANCE_MS) / 60_000) * 60_000);
    const schedule = `${due.getUTCMinutes()} ${due.getUTCHours()} * * *`;
    context.log(`room servers ${engine}: creating ${TASKS} tasks due at ${due.toISOString()} ("${schedule}" UTC, once)`);
    const createStart = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: context.connections }, async () => {
      while (next < TASKS) {
        next += 1;
        const r = await post(`${atrium.url}${project}/rooms/bench/scheduled-tasks`, atrium.tenant.api_key, JSON.stringify({ spec: { schedule, once: true, queue: { name: 'bench', payload: { id: randomUUID() } } } }));
        if (r.status !== 201) throw new Error(`creating a task: ${r.status} ${r.text}`);
      }
    }));
    const createdPerSecond = round(TASKS / ((performance.now() - createStart) / 1000), 0);
    if (Date.now() >= due.getTime()) throw new Error(`creating ${TASKS} tasks took past their due time ${due.toISOString()}`);
    context.log(`room servers ${engine}: ${createdPerSecond} tasks created/s; waiting for ${due.toISOString()}`);
    const deadline = due.getTime() + 60_000;
    while (arrivals.size < TASKS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    // Late duplicates would arrive shortly after: give them a moment.
    await new Promise((r) => setTimeout(r, 2000));
    const delays = [...arrivals.values()].map((list) => list[0]! - due.getTime()).sort((a, b) => a - b);
    const duplicates = [...arrivals.values()].reduce((n, list) => n + list.length - 1, 0);
    const result = {
      tasks: TASKS,
      createdPerSecond,
      dueAt: due.toISOString(),
      received: arrivals.size,
      duplicates,
      delayP50Ms: round(percentile(delays, 50), 0),
      delayP99Ms: round(percentile(delays, 99), 0),
      delayMaxMs: round(delays.at(-1) ?? 0, 0),
      allWithin15s: arrivals.size === TASKS && (delays.at(-1) ?? Infinity) <= 15_000,
    };
    context.log(`room servers ${engine}: ${JSON.stringify(result)}`);
    return result;
  } finally {
    await atrium.stop();
    roomServer.closeAllConnections();
    await new Promise<void>((resolve) => roomServer.close(() => resolve()));
  }
}

export async function run(context: BenchContext): Promise<object> {
  if (!context.engines.includes('postgres')) return { skipped: 'the room-server targets are set for PostgreSQL, which was not measured' };
  try {
    const otlp = await ingest(context, 'postgres');
    const tasks = await firing(context, 'postgres');
    const notes = [
      `OTLP span ingest on PostgreSQL: ${context.connections} clients posting OTLP/HTTP JSON exports of ${BATCH} spans (one trace, fresh ids each time) to one session, back to back, for ${context.duration} s after ${context.warmup} s of warm-up; the load generator, Atrium and PostgreSQL share the machine.`,
      '',
      '| spans accepted/s | exports | export p50 ms | export p99 ms | failed exports | 429s retried |',
      '|---:|---:|---:|---:|---:|---:|',
      `| ${otlp.spansPerSecond} | ${otlp.exports} | ${otlp.exportP50Ms} | ${otlp.exportP99Ms} | ${otlp.failures} | ${otlp.throttled} |`,
      '',
      `Target (≥ 10,000 spans/s): **${otlp.spansPerSecond >= 10_000 && otlp.failures === 0 ? 'met' : 'missed'}**.`,
      ...Object.entries(otlp.failureKinds).map(([kind, n]) => `- ${n} exports failed with: \`${kind.replaceAll('`', "'")}\``),
      '',
      `Scheduled-task firing on PostgreSQL: ${tasks.tasks} one-time tasks (created at ${tasks.createdPerSecond}/s) due at ${tasks.dueAt}, each delivered to a room server stand-in in the benchmark process; delay = arrival − due time.`,
      '',
      '| tasks | received | duplicates | delay p50 ms | delay p99 ms | max ms |',
      '|---:|---:|---:|---:|---:|---:|',
      `| ${tasks.tasks} | ${tasks.received} | ${tasks.duplicates} | ${tasks.delayP50Ms} | ${tasks.delayP99Ms} | ${tasks.delayMaxMs} |`,
      '',
      `Target (all submitted within 15 s of the due time, none twice): **${tasks.allWithin15s && tasks.duplicates === 0 ? 'met' : 'missed'}**.`,
    ].join('\n');
    return { notes, otlp, tasks };
  } finally {
    agent.destroy();
  }
}

// Standalone, with the settings of `npm run bench`.
if (import.meta.main) await (await import('./lib.ts')).runAlone(run, ['postgres']);

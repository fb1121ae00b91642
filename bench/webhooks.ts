// Webhook delivery benchmark (called by bench/run.ts; also runs alone: `node bench/webhooks.ts`).
//
// Per engine, an `atrium serve` child process gets a signed webhook pointing at a local receiver in
// this process. Room servers' session-start reports (POST /accounts/projects/{id}/sessions) are the
// triggering requests: each commits a room.started event, whose delivery the receiver timestamps.
//   - sustained: triggers sent open-loop at the engine's target rate (TARGETS; BENCH_WEBHOOK_RATE
//     overrides it) for the measured duration; delivered events/s, delay from sending the trigger to
//     the delivery's arrival (p50/p99/max), and lost = acknowledged triggers never delivered (after a
//     drain wait).
//   - burst: as many triggers as `connections` concurrent clients can send, for the same duration;
//     the delivery rate then shows the engine's ceiling.
// Next to them, the receiver's own maximum request rate (autocannon straight at it) in the same run.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BenchContext, Engine, ScenarioResult } from './lib.ts';

/** What sustained delivery should reach per engine (the target set for it): the rate offered, and the p99 delay allowed. */
const TARGETS: Record<Engine, { rate: number; p99Ms: number }> = {
  postgres: { rate: 2000, p99Ms: 100 },
  pglite: { rate: 1000, p99Ms: 1000 },
};
const rateFor = (engine: Engine) => Number(process.env.BENCH_WEBHOOK_RATE ?? TARGETS[engine].rate);
/** Longest wait for stragglers after the triggers stop. */
const DRAIN_MS = 30_000;

interface Receiver {
  url: string;
  arrivals: Map<string, number[]>;
  close(): Promise<void>;
}

/** Records when each session's delivery arrived; answers 200 at once. `/max` is autocannon's path. */
async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number[]>();
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      if (req.url === '/hook') {
        const id = /"session_id": "([0-9a-f-]{36})"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
        if (id) {
          const list = arrivals.get(id);
          if (list) list.push(at);
          else arrivals.set(id, [at]);
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(url: string, token: string, body: string): Promise<number> {
  return new Promise((resolve) => {
    const request = http.request(url, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
    request.end(body);
  });
}

interface Trigger {
  sentAt: number;
  acked: boolean;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** CPU time (user + system) of a process in ms, from /proc (Linux); undefined elsewhere. */
function cpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

interface PhaseResult {
  phase: string;
  seconds: number;
  triggersSent: number;
  triggersAcknowledged: number;
  triggerRatePerSecond: number;
  delivered: number;
  lost: number;
  duplicates: number;
  deliveriesPerSecond: number;
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  /** Deliveries still to make when the last trigger was answered, and how fast they then went. */
  backlogAtTriggerEnd: number;
  backlogDeliveriesPerSecond: number | undefined;
  /** CPU time of the Atrium process per delivered event (trigger request + delivery), in µs. */
  serverCpuUsPerEvent: number | undefined;
}

async function phase(name: string, receiver: Receiver, send: (trigger: (id: string) => Promise<void>) => Promise<void>, url: string, token: string, pid: number): Promise<PhaseResult> {
  const triggers = new Map<string, Trigger>();
  const pending = new Set<Promise<void>>();
  const trigger = (id: string) => {
    const t: Trigger = { sentAt: performance.now(), acked: false };
    triggers.set(id, t);
    const p = post(url, token, JSON.stringify({ room_name: 'bench', session_id: id })).then((status) => {
      t.acked = status === 201;
      pending.delete(p);
    });
    pending.add(p);
    return p;
  };
  const cpuBefore = cpuMs(pid);
  const start = performance.now();
  await send(trigger);
  await Promise.all(pending);
  const sendEnd = performance.now();
  const deliveredBySendEnd = [...triggers.keys()].filter((id) => (receiver.arrivals.get(id)?.[0] ?? Infinity) <= sendEnd).length;
  const acked = [...triggers].filter(([, t]) => t.acked);
  const deadline = Date.now() + DRAIN_MS;
  while (acked.some(([id]) => !receiver.arrivals.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const delays: number[] = [];
  let last = start;
  let duplicates = 0;
  for (const [id, t] of acked) {
    const arrivals = receiver.arrivals.get(id);
    if (!arrivals) continue;
    delays.push(arrivals[0]! - t.sentAt);
    last = Math.max(last, arrivals[0]!);
    duplicates += arrivals.length - 1;
  }
  const cpuAfter = cpuMs(pid);
  delays.sort((a, b) => a - b);
  const seconds = (last - start) / 1000;
  return {
    phase: name,
    seconds: round(seconds, 2),
    triggersSent: triggers.size,
    triggersAcknowledged: acked.length,
    triggerRatePerSecond: round(triggers.size / ((sendEnd - start) / 1000), 0),
    delivered: delays.length,
    lost: acked.length - delays.length,
    duplicates,
    deliveriesPerSecond: round(delays.length / seconds, 0),
    delayP50Ms: round(percentile(delays, 50)),
    delayP99Ms: round(percentile(delays, 99)),
    delayMaxMs: round(delays.at(-1) ?? 0),
    backlogAtTriggerEnd: delays.length - deliveredBySendEnd,
    backlogDeliveriesPerSecond: last > sendEnd && delays.length - deliveredBySendEnd > 100 ? round((delays.length - deliveredBySendEnd) / ((last - sendEnd) / 1000), 0) : undefined,
    serverCpuUsPerEvent: cpuBefore !== undefined && cpuAfter !== undefined && delays.length > 0 ? Math.round(((cpuAfter - cpuBefore) * 1000) / delays.length) : undefined,
  };
}

/** Sends at `rate` per second for `seconds`, whatever the answers' pace (open loop). */
function openLoop(rate: number, seconds: number) {
  return (trigger: (id: string) => Promise<void>) => new Promise<void>((resolve) => {
    const start = performance.now();
    let sent = 0;
    const total = Math.round(rate * seconds);
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      while (sent < due) {
        sent += 1;
        void trigger(randomUUID());
      }
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 2);
  });
}

/** `connections` clients sending back to back for `seconds` (closed loop). */
function closedLoop(connections: number, seconds: number) {
  return async (trigger: (id: string) => Promise<void>) => {
    const end = performance.now() + seconds * 1000;
    await Promise.all(Array.from({ length: connections }, async () => {
      while (performance.now() < end) await trigger(randomUUID());
    }));
  };
}

async function benchEngine(context: BenchContext, engine: Engine, receiver: Receiver): Promise<PhaseResult[]> {
  const atrium = await context.startAtrium(engine, { ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' });
  try {
    const { project_id: projectId, api_key: token } = atrium.tenant;
    const created = await fetch(`${atrium.url}/accounts/projects/${projectId}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', url: `${receiver.url}/hook`, events: ['room.started'], secret: true }),
    });
    if (created.status !== 201) throw new Error(`creating the webhook failed: ${created.status} ${await created.text()}`);
    const url = `${atrium.url}/accounts/projects/${projectId}/sessions`;
    const rate = rateFor(engine);
    context.log(`webhooks ${engine}: warm-up ${context.warmup}s at ${rate}/s`);
    await phase('warm-up', receiver, openLoop(rate, context.warmup), url, token, atrium.pid);
    context.log(`webhooks ${engine}: sustained ${context.duration}s at ${rate}/s`);
    const sustained = await phase(`sustained ${rate}/s`, receiver, openLoop(rate, context.duration), url, token, atrium.pid);
    context.log(`webhooks ${engine}: ${JSON.stringify(sustained)}`);
    context.log(`webhooks ${engine}: burst ${context.duration}s with ${context.connections} clients`);
    const burst = await phase(`burst (${context.connections} clients)`, receiver, closedLoop(context.connections, context.duration), url, token, atrium.pid);
    context.log(`webhooks ${engine}: ${JSON.stringify(burst)}`);
    return [sustained, burst];
  } finally {
    await atrium.stop();
  }
}

export async function run(context: BenchContext): Promise<object> {
  const receiver = await startReceiver();
  try {
    context.log('webhooks: the receiver\'s own maximum request rate');
    const sample = JSON.stringify({ event: 'room.started', data: { room_name: 'bench', room_url: 'ws://127.0.0.1/rooms/bench', session_id: randomUUID() } });
    const receiverMax: ScenarioResult = await context.measure(receiver.url, {
      name: 'receiver alone: POST (autocannon)', method: 'POST', path: '/max', body: sample, headers: { 'content-type': 'application/json' },
    });
    const engines: { engine: Engine; phases: PhaseResult[] }[] = [];
    for (const engine of context.engines) engines.push({ engine, phases: await benchEngine(context, engine, receiver) });
    const table = [
      '| engine | phase | triggers/s sent | delivered/s | delay p50 ms | delay p99 ms | max ms | acknowledged | lost | duplicates | backlog at end → drained/s | Atrium CPU µs/event |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...engines.flatMap((e) => e.phases.map((p) => `| ${e.engine} | ${p.phase} | ${p.triggerRatePerSecond} | ${p.deliveriesPerSecond} | ${p.delayP50Ms} | ${p.delayP99Ms} | ${p.delayMaxMs} | ${p.triggersAcknowledged} | ${p.lost} | ${p.duplicates} | ${p.backlogAtTriggerEnd} → ${p.backlogDeliveriesPerSecond ?? '–'} | ${p.serverCpuUsPerEvent ?? '–'} |`)),
    ].join('\n');
    const targets = engines.map(({ engine, phases: [sustained] }) => {
      const { rate, p99Ms } = TARGETS[engine];
      const met = sustained!.deliveriesPerSecond >= rate * 0.98 && sustained!.triggerRatePerSecond >= rate * 0.98 && sustained!.delayP99Ms <= p99Ms && sustained!.lost === 0;
      return `Target on ${engine} (≥ ${rate.toLocaleString('en')} deliveries/s sustained, p99 ≤ ${p99Ms.toLocaleString('en')} ms, nothing lost): **${met ? 'met' : 'missed'}**.`;
    });
    const notes = [
      'Delivery of signed room.started webhooks from an `atrium serve` child to a receiver in the benchmark process. Delay = from sending the triggering session report to the delivery\'s arrival. The receiver row above is autocannon straight at the same receiver. "Backlog at end → drained/s": deliveries still owed when the last trigger was answered, and the rate at which they went out once the server no longer had triggers to serve (the delivery engine on its own). Atrium CPU µs/event covers the triggering request and its delivery (the database\'s own CPU is not included); 1,000,000 / it is the rate one core could sustain.',
      '',
      table,
      '',
      targets.join('\n\n'),
    ].join('\n');
    return { scenarios: [receiverMax], notes, engines };
  } finally {
    await receiver.close();
    agent.destroy();
  }
}

// Standalone, with the settings of `npm run bench`.
if (import.meta.main) await (await import('./lib.ts')).runAlone(run, ['postgres', 'pglite']);

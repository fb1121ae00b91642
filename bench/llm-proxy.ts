// LLM proxy overhead (called by bench/run.ts): the OpenAI chat completions route of an `atrium
// serve` child on PostgreSQL in front of the fake upstream of the tests (test/support/llm-upstream.ts,
// in this process), against the same requests sent straight to the fake, side by side in one run:
//   - plain: a non-streamed call, autocannon with `connections` callers; added latency = proxy − direct
//     at p50 and p99 (the targets: ≤ 2 ms and ≤ 10 ms);
//   - one caller: the same pair with a single caller, the proxy's own added latency without queueing;
//   - streamed: time to the first byte of a streamed call, `connections` callers in a loop for the
//     measured duration, turns taken with the direct calls;
//   - at a model's pace: the plain and streamed pairs again with a fake model that takes
//     BENCH_LLM_THINK_MS (250, ± 20 % so that the callers do not move in lockstep) to answer, as
//     real ones do, and the callers starting one after another over that time, so that 50 callers
//     keep 50 calls in flight instead of saturating the machine:
//     the latency the proxy adds to a call, not its throughput. The plain calls' added latency and
//     the streamed calls' time to first byte are taken per call, less the time the model says it
//     took (`openai-processing-ms`).
// Every proxied call also writes its usage record (after the answer), as in production.
// A bare Node proxy (bench/llm-proxy-bare.ts: Fastify and an undici pool, nothing else) stands beside
// them with one caller and at a model's pace: what any proxy in Node adds on this machine, so that
// Atrium's own share is the difference.
import { join } from 'node:path';
import { request } from 'undici';
import { startFakeUpstream } from '../test/support/llm-upstream.ts';
import { cleanEnv, freePort, repoRoot, spawnChild, stopChild, waitReady, type BenchContext, type Engine, type ScenarioResult } from './lib.ts';

const THINK_MS = Number(process.env.BENCH_LLM_THINK_MS ?? 250);
const chatBody = (model: string, stream = false) => JSON.stringify({ model, ...(stream ? { stream } : {}), messages: [{ role: 'user', content: 'Hello' }] });
const BODY = chatBody('fake-bench');
const PACED_MODEL = `fake-wait-${THINK_MS}`;

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * Callers of a model start one after another over one answer's time, as independent users do,
 * rather than all in the same millisecond: a slice that starts with every caller at once measures
 * its own burst (50 calls queued behind each other) more than the proxy.
 */
const staggered = async (caller: number, callers: number) => {
  await new Promise((resolve) => setTimeout(resolve, (caller * THINK_MS) / callers));
};

/**
 * `callers` loops of plain calls to a `fake-wait-*` model for `seconds`; each call's latency less
 * the time the model took (its `openai-processing-ms`): what the hops added, jitter removed.
 */
async function pacedOverheads(url: string, headers: Record<string, string>, callers: number, seconds: number): Promise<number[]> {
  const until = performance.now() + seconds * 1000;
  const samples: number[] = [];
  await Promise.all(Array.from({ length: callers }, async (_, caller) => {
    await staggered(caller, callers);
    while (performance.now() < until) {
      const started = performance.now();
      const response = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: chatBody(PACED_MODEL) });
      await response.body.arrayBuffer();
      const took = performance.now() - started;
      const processing = Number(response.headers['openai-processing-ms']);
      if (!Number.isFinite(processing)) throw new Error(`no openai-processing-ms from ${url} (status ${response.statusCode})`);
      samples.push(took - processing);
    }
  }));
  return samples.sort((a, b) => a - b);
}

/**
 * `callers` loops of streamed calls for `seconds`; the time to each answer's first byte, for a
 * `fake-wait-*` model less the time it waited before answering (as pacedOverheads does).
 */
async function firstBytes(url: string, headers: Record<string, string>, model: string, callers: number, seconds: number): Promise<number[]> {
  const streamBody = chatBody(model, true);
  const until = performance.now() + seconds * 1000;
  const samples: number[] = [];
  await Promise.all(Array.from({ length: callers }, async (_, caller) => {
    if (model === PACED_MODEL) await staggered(caller, callers);
    while (performance.now() < until) {
      const started = performance.now();
      const { body, headers: answered, statusCode } = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: streamBody });
      const processing = model === PACED_MODEL ? Number(answered['openai-processing-ms']) : 0;
      if (!Number.isFinite(processing)) throw new Error(`no openai-processing-ms from ${url} (status ${statusCode})`);
      let first = true;
      for await (const _chunk of body) {
        if (first) samples.push(performance.now() - started - processing);
        first = false;
      }
    }
  }));
  return samples.sort((a, b) => a - b);
}

async function startBareProxy(upstreamUrl: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawnChild([process.execPath, join(repoRoot, 'bench', 'llm-proxy-bare.ts')], cleanEnv({ BARE_PORT: String(port), BARE_UPSTREAM: `${upstreamUrl}/v1` }));
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, `${url}/healthz`, 'bare LLM proxy');
  return { url, pid: child.pid!, stop: () => stopChild(child) };
}

export async function run(context: BenchContext): Promise<object> {
  const engine: Engine = context.engines.includes('postgres') ? 'postgres' : 'pglite';
  const upstream = await startFakeUpstream();
  const atrium = await context.startAtrium(engine, { ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`, ATRIUM_OPENAI_API_KEY: 'sk-bench' });
  const bare = await startBareProxy(upstream.url);
  try {
    const auth = { authorization: `Bearer ${atrium.tenant.api_key}`, 'content-type': 'application/json' };
    context.log(`llm-proxy: plain calls, direct vs proxied (${engine})`);
    const [direct, proxied] = await context.measureSideBySide([
      { url: upstream.url, scenario: { name: 'chat completion, direct to the fake upstream', method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: BODY } },
      { url: atrium.url, scenario: { name: 'chat completion through the proxy', method: 'POST', path: '/openai/v1/chat/completions', headers: auth, body: BODY, pid: atrium.pid } },
    ]);
    // The same with one caller: the proxy's own cost per call, without the queue that 50 callers
    // build on two shared cores.
    const [directAlone, bareAlone, proxiedAlone] = await context.measureSideBySide([
      { url: upstream.url, scenario: { name: 'one caller: chat completion, direct', method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: BODY, connections: 1 } },
      { url: bare.url, scenario: { name: 'one caller: chat completion through a bare Node proxy', method: 'POST', path: '/openai/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: BODY, pid: bare.pid, connections: 1 } },
      { url: atrium.url, scenario: { name: 'one caller: chat completion through the proxy', method: 'POST', path: '/openai/v1/chat/completions', headers: auth, body: BODY, pid: atrium.pid, connections: 1 } },
    ]);
    context.log(`llm-proxy: ${context.connections} callers at a model's pace (${THINK_MS} ms per answer)`);
    const [directPaced, proxiedPaced] = await context.measureSideBySide([
      { url: upstream.url, scenario: { name: `model answering in ${THINK_MS} ms ± 20 %: chat completion, direct`, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: chatBody(PACED_MODEL) } },
      { url: atrium.url, scenario: { name: `model answering in ${THINK_MS} ms ± 20 %: chat completion through the proxy`, method: 'POST', path: '/openai/v1/chat/completions', headers: auth, body: chatBody(PACED_MODEL), pid: atrium.pid } },
    ]);
    context.log('llm-proxy: time to first byte of streamed calls');
    const slice = Math.max(1, context.duration / context.rounds);
    const ttfb = { direct: [] as number[], proxied: [] as number[], directPaced: [] as number[], barePaced: [] as number[], proxiedPaced: [] as number[] };
    const overheads = { direct: [] as number[], bare: [] as number[], proxied: [] as number[] };
    const directUrl = `${upstream.url}/v1/chat/completions`;
    const bareUrl = `${bare.url}/openai/v1/chat/completions`;
    const proxiedUrl = `${atrium.url}/openai/v1/chat/completions`;
    const bearer = { authorization: auth.authorization };
    for (let round = 0; round < context.rounds; round += 1) {
      ttfb.direct.push(...await firstBytes(directUrl, {}, 'fake-bench', context.connections, slice));
      ttfb.proxied.push(...await firstBytes(proxiedUrl, bearer, 'fake-bench', context.connections, slice));
    }
    // The paced rounds after all the saturated ones, not between them: a saturated slice leaves the
    // proxy a backlog (its records, their pricing, and the garbage of a thousand calls a second)
    // that the paced calls measured after it would pay for, though paced callers never cause it.
    for (let round = 0; round < context.rounds; round += 1) {
      ttfb.directPaced.push(...await firstBytes(directUrl, {}, PACED_MODEL, context.connections, slice));
      ttfb.barePaced.push(...await firstBytes(bareUrl, {}, PACED_MODEL, context.connections, slice));
      ttfb.proxiedPaced.push(...await firstBytes(proxiedUrl, bearer, PACED_MODEL, context.connections, slice));
      overheads.direct.push(...await pacedOverheads(directUrl, {}, context.connections, slice));
      overheads.bare.push(...await pacedOverheads(bareUrl, {}, context.connections, slice));
      overheads.proxied.push(...await pacedOverheads(proxiedUrl, bearer, context.connections, slice));
    }
    for (const list of [...Object.values(ttfb), ...Object.values(overheads)]) list.sort((a, b) => a - b);
    const addedAt = (p: number, proxiedList: number[], directList: number[]) => round2(percentile(proxiedList, p) - percentile(directList, p));
    // What a proxy adds over a baseline with one caller, and at a model's pace. Paced calls are
    // taken per call, the model's own time off (see pacedOverheads): the p50 of two samples of a
    // ±20 % jitter differs by several milliseconds from run to run, which hid the proxy's share.
    const over = (alone: [ScenarioResult, ScenarioResult], paced: [number[], number[]], pacedTtfb: [number[], number[]]) => ({
      aloneP50Ms: round2(alone[0].p50 - alone[1].p50),
      aloneP99Ms: round2(alone[0].p99 - alone[1].p99),
      pacedP50Ms: addedAt(50, ...paced),
      pacedP99Ms: addedAt(99, ...paced),
      pacedTtfbP50Ms: addedAt(50, ...pacedTtfb),
      pacedTtfbP99Ms: addedAt(99, ...pacedTtfb),
    });
    const added = {
      plainP50Ms: round2(proxied!.p50 - direct!.p50),
      plainP99Ms: round2(proxied!.p99 - direct!.p99),
      ttfbP50Ms: addedAt(50, ttfb.proxied, ttfb.direct),
      ttfbP99Ms: addedAt(99, ttfb.proxied, ttfb.direct),
      ...over([proxiedAlone!, directAlone!], [overheads.proxied, overheads.direct], [ttfb.proxiedPaced, ttfb.directPaced]),
    };
    // What the bare Node proxy adds under the same conditions, and Atrium's proxy beyond it.
    const bareAdded = over([bareAlone!, directAlone!], [overheads.bare, overheads.direct], [ttfb.barePaced, ttfb.directPaced]);
    const overBare = over([proxiedAlone!, bareAlone!], [overheads.proxied, overheads.bare], [ttfb.proxiedPaced, ttfb.barePaced]);
    const streamed = (list: number[]) => ({ calls: list.length, p50: round2(percentile(list, 50)), p99: round2(percentile(list, 99)) });
    return {
      scenarios: [direct, proxied, directAlone, bareAlone, proxiedAlone, directPaced, proxiedPaced],
      streamed: { callers: context.connections, direct: streamed(ttfb.direct), proxied: streamed(ttfb.proxied), directPaced: streamed(ttfb.directPaced), barePaced: streamed(ttfb.barePaced), proxiedPaced: streamed(ttfb.proxiedPaced) },
      pacedOverheads: { direct: streamed(overheads.direct), bare: streamed(overheads.bare), proxied: streamed(overheads.proxied) },
      added,
      bareAdded,
      overBare,
      notes: `Added by the proxy (${engine}, ${context.connections} callers, targets p50 ≤ 2 ms and p99 ≤ 10 ms), at a model's pace (the fake answers after ${THINK_MS} ms ± 20 %, so ${context.connections} calls are in flight): `
        + `plain p50 ${added.pacedP50Ms} ms, p99 ${added.pacedP99Ms} ms (${overheads.proxied.length} calls, each less the model's own time; direct ${round2(percentile(overheads.direct, 50))} / ${round2(percentile(overheads.direct, 99))} ms, proxied ${round2(percentile(overheads.proxied, 50))} / ${round2(percentile(overheads.proxied, 99))} ms); `
        + `streamed time to first byte, also less the model's own time, p50 ${added.pacedTtfbP50Ms} ms, p99 ${added.pacedTtfbP99Ms} ms. `
        + `Saturated (the fake answers at once and ${context.connections} callers send as fast as they can, which measures throughput): plain p50 ${added.plainP50Ms} ms, p99 ${added.plainP99Ms} ms; `
        + `streamed time to first byte p50 ${added.ttfbP50Ms} ms, p99 ${added.ttfbP99Ms} ms: there the added latency is queueing, since each proxied call costs the server about a millisecond of CPU `
        + '(the usage record, its event and its pricing are written after the answer) and two cores shared with the load generator, the fake upstream and PostgreSQL serve about a thousand calls a second. '
        + `With one caller (no queue): plain p50 ${added.aloneP50Ms} ms, p99 ${added.aloneP99Ms} ms. `
        + `A bare Node proxy (Fastify and an undici pool, nothing else) under the same conditions adds, at a model's pace, p50 ${bareAdded.pacedP50Ms} ms and p99 ${bareAdded.pacedP99Ms} ms `
        + `(streamed first byte ${bareAdded.pacedTtfbP50Ms} / ${bareAdded.pacedTtfbP99Ms} ms), and with one caller p50 ${bareAdded.aloneP50Ms} ms: `
        + `Atrium's proxy adds p50 ${overBare.pacedP50Ms} ms and p99 ${overBare.pacedP99Ms} ms beyond it at a model's pace, p50 ${overBare.aloneP50Ms} ms with one caller.`,
    };
  } finally {
    await bare.stop();
    await atrium.stop();
    await upstream.close();
  }
}

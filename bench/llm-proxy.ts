// LLM proxy overhead (called by bench/run.ts): the OpenAI chat completions route of an `atrium
// serve` child on PostgreSQL in front of the fake upstream of the tests (test/support/llm-upstream.ts,
// in this process), against the same requests sent straight to the fake, side by side in one run:
//   - plain: a non-streamed call, autocannon with `connections` callers; added latency = proxy − direct
//     at p50 and p99 (the targets: ≤ 2 ms and ≤ 10 ms);
//   - one caller: the same pair with a single caller, the proxy's own added latency without queueing;
//   - streamed: time to the first byte of a streamed call, `connections` callers in a loop for the
//     measured duration, turns taken with the direct calls.
// Every proxied call also writes its usage record (after the answer), as in production.
import { request } from 'undici';
import { startFakeUpstream } from '../test/support/llm-upstream.ts';
import type { BenchContext, Engine } from './lib.ts';

const BODY = JSON.stringify({ model: 'fake-bench', messages: [{ role: 'user', content: 'Hello' }] });
const STREAM_BODY = JSON.stringify({ model: 'fake-bench', stream: true, messages: [{ role: 'user', content: 'Hello' }] });

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const round2 = (n: number) => Math.round(n * 100) / 100;

/** `callers` loops of streamed calls for `seconds`; the time to each answer's first byte. */
async function firstBytes(url: string, headers: Record<string, string>, callers: number, seconds: number): Promise<number[]> {
  const until = performance.now() + seconds * 1000;
  const samples: number[] = [];
  await Promise.all(Array.from({ length: callers }, async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const { body } = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: STREAM_BODY });
      let first = true;
      for await (const _chunk of body) {
        if (first) samples.push(performance.now() - started);
        first = false;
      }
    }
  }));
  return samples.sort((a, b) => a - b);
}

export async function run(context: BenchContext): Promise<object> {
  const engine: Engine = context.engines.includes('postgres') ? 'postgres' : 'pglite';
  const upstream = await startFakeUpstream();
  const atrium = await context.startAtrium(engine, { ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`, ATRIUM_OPENAI_API_KEY: 'sk-bench' });
  try {
    const auth = { authorization: `Bearer ${atrium.tenant.api_key}`, 'content-type': 'application/json' };
    context.log(`llm-proxy: plain calls, direct vs proxied (${engine})`);
    const [direct, proxied] = await context.measureSideBySide([
      { url: upstream.url, scenario: { name: 'chat completion, direct to the fake upstream', method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: BODY } },
      { url: atrium.url, scenario: { name: 'chat completion through the proxy', method: 'POST', path: '/openai/v1/chat/completions', headers: auth, body: BODY, pid: atrium.pid } },
    ]);
    // The same with one caller: the proxy's own cost per call, without the queue that 50 callers
    // build on two shared cores.
    const [directAlone, proxiedAlone] = await context.measureSideBySide([
      { url: upstream.url, scenario: { name: 'one caller: chat completion, direct', method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: BODY, connections: 1 } },
      { url: atrium.url, scenario: { name: 'one caller: chat completion through the proxy', method: 'POST', path: '/openai/v1/chat/completions', headers: auth, body: BODY, pid: atrium.pid, connections: 1 } },
    ]);
    context.log('llm-proxy: time to first byte of streamed calls');
    const slice = Math.max(1, context.duration / context.rounds);
    const ttfb = { direct: [] as number[], proxied: [] as number[] };
    for (let round = 0; round < context.rounds; round += 1) {
      ttfb.direct.push(...await firstBytes(`${upstream.url}/v1/chat/completions`, {}, context.connections, slice));
      ttfb.proxied.push(...await firstBytes(`${atrium.url}/openai/v1/chat/completions`, { authorization: auth.authorization }, context.connections, slice));
    }
    for (const list of Object.values(ttfb)) list.sort((a, b) => a - b);
    const added = {
      plainP50Ms: round2(proxied!.p50 - direct!.p50),
      plainP99Ms: round2(proxied!.p99 - direct!.p99),
      ttfbP50Ms: round2(percentile(ttfb.proxied, 50) - percentile(ttfb.direct, 50)),
      ttfbP99Ms: round2(percentile(ttfb.proxied, 99) - percentile(ttfb.direct, 99)),
      aloneP50Ms: round2(proxiedAlone!.p50 - directAlone!.p50),
      aloneP99Ms: round2(proxiedAlone!.p99 - directAlone!.p99),
    };
    return {
      scenarios: [direct, proxied, directAlone, proxiedAlone],
      streamed: {
        callers: context.connections,
        direct: { calls: ttfb.direct.length, p50: round2(percentile(ttfb.direct, 50)), p99: round2(percentile(ttfb.direct, 99)) },
        proxied: { calls: ttfb.proxied.length, p50: round2(percentile(ttfb.proxied, 50)), p99: round2(percentile(ttfb.proxied, 99)) },
      },
      added,
      notes: `Added by the proxy (${engine}, ${context.connections} callers): plain p50 ${added.plainP50Ms} ms, p99 ${added.plainP99Ms} ms; `
        + `streamed time to first byte p50 ${added.ttfbP50Ms} ms, p99 ${added.ttfbP99Ms} ms (targets: p50 ≤ 2 ms, p99 ≤ 10 ms). `
        + `With one caller (no queue): plain p50 ${added.aloneP50Ms} ms, p99 ${added.aloneP99Ms} ms. At 50 callers the added latency is mostly queueing: `
        + 'each proxied call costs the server about a millisecond of CPU (the usage record and its event are written after the answer), so on two cores shared with the load generator, the fake upstream and PostgreSQL, 50 callers wait for one another.',
    };
  } finally {
    await atrium.stop();
    await upstream.close();
  }
}

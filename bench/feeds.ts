// Feed publish throughput with one subscription, on PostgreSQL (called by bench/run.ts): batches of
// 100 messages published by `connections` clients for the measured duration (messages/s accepted),
// while the subscription writes them into room storage (messages/s delivered, and how long the
// backlog took to drain after publishing stopped). Target: ≥ 5,000/s accepted, with
// delivery keeping up; then 5,000/s offered at a steady pace, to see that delivery keeps up with it.
import postgres from 'postgres';
import type { BenchContext } from './lib.ts';

const BATCH = 100;
const TARGET_RATE = 5_000;
const DRAIN_MS = 120_000;

export async function run(context: BenchContext): Promise<object> {
  if (!context.engines.includes('postgres')) return { skipped: 'PostgreSQL is not available' };
  const atrium = await context.startAtrium('postgres');
  const sql = postgres(atrium.databaseUrl!, { max: 1 });
  try {
    const { project_id: projectId, api_key: apiKey } = atrium.tenant;
    const api = async (path: string, json: unknown) => {
      const response = await fetch(`${atrium.url}/accounts/projects/${projectId}${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(json) });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return response.json() as Promise<any>;
    };
    await api('/rooms', { name: 'bench-feed-room' });
    const { feed } = await api('/feeds', { name: 'bench', visibility: 'project' });
    await api(`/feeds/${feed.id}/subscriptions`, { room: 'bench-feed-room', path: 'bench' });
    const body = (n: number) => JSON.stringify(Array.from({ length: BATCH }, (_v, i) => ({ n: n * BATCH + i, kind: 'order', amount: 42.5, note: 'a benchmark message' })));
    const started = performance.now();
    const result = await context.measure(atrium.url, {
      name: `publish ${BATCH} messages`, method: 'POST', path: `/accounts/projects/${projectId}/feeds/${feed.id}/messages/batch`,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, bodyFor: body, pid: atrium.pid,
    });
    const publishedMs = performance.now() - started;
    const progress = async () => {
      const [row] = await sql<{ accepted: string; delivered: string }[]>`select f.last_seq as accepted, s.delivered_seq as delivered from feeds f join feed_subscriptions s on s.feed_id = f.id where f.id = ${feed.id}`;
      return { accepted: Number(row!.accepted), delivered: Number(row!.delivered) };
    };
    const atEnd = await progress();
    let now = atEnd;
    while (now.delivered < now.accepted && performance.now() - started < publishedMs + DRAIN_MS) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      now = await progress();
    }
    const totalMs = performance.now() - started;
    const acceptedPerSecond = Math.round(result.rps * BATCH);

    // 2. At the target rate: 5,000 messages/s offered (50 batches a second, each on its own timer
    // tick), for the measured duration; delivery keeps up when the backlog at the end is under a
    // second's worth and drains within seconds.
    const paced = { offeredPerSecond: TARGET_RATE, seconds: context.duration, backlogAtEnd: 0, drainMs: 0, deliveredPerSecond: 0, failed: 0 };
    const before = await progress();
    const pacedStart = performance.now();
    const sends: Promise<void>[] = [];
    for (let tick = 0; tick < context.duration * (TARGET_RATE / BATCH); tick += 1) {
      const due = pacedStart + (tick * 1000 * BATCH) / TARGET_RATE;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      sends.push(api(`/feeds/${feed.id}/messages/batch`, JSON.parse(body(1_000_000 + tick))).then(() => {}, () => { paced.failed += 1; }));
    }
    await Promise.all(sends);
    const pacedEnd = await progress();
    const pacedMs = performance.now() - pacedStart;
    paced.backlogAtEnd = pacedEnd.accepted - pacedEnd.delivered;
    let drained = pacedEnd;
    while (drained.delivered < drained.accepted && performance.now() - pacedStart < pacedMs + DRAIN_MS) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      drained = await progress();
    }
    paced.drainMs = Math.round(performance.now() - pacedStart - pacedMs);
    paced.deliveredPerSecond = Math.round((pacedEnd.delivered - before.delivered) / (pacedMs / 1000));
    const keptUp = paced.failed === 0 && paced.backlogAtEnd <= TARGET_RATE && drained.delivered === drained.accepted;
    return {
      scenarios: [result],
      accepted: now.accepted,
      acceptedPerSecond,
      deliveredWhilePublishing: atEnd.delivered,
      delivered: now.delivered,
      deliveredPerSecond: Math.round(now.delivered / (totalMs / 1000)),
      drainMs: Math.round(totalMs - publishedMs),
      notes: `${acceptedPerSecond} messages/s accepted in batches of ${BATCH} (target ≥ 5,000/s); ${now.delivered} of ${now.accepted} delivered `
        + `(${atEnd.delivered} by the end of publishing), ${Math.round(now.delivered / (totalMs / 1000))} messages/s delivered overall, `
        + `backlog drained ${Math.round(totalMs - publishedMs)} ms after publishing stopped. Includes the warm-up's messages.\n\n`
        + `At the target rate (${TARGET_RATE} messages/s offered in batches of ${BATCH} for ${paced.seconds} s): ${paced.deliveredPerSecond} messages/s delivered meanwhile, `
        + `backlog at the end ${paced.backlogAtEnd} messages, drained ${paced.drainMs} ms later, ${paced.failed} failed batches. `
        + `Target (≥ 5,000/s accepted with delivery keeping up): **${acceptedPerSecond >= TARGET_RATE && keptUp ? 'met' : 'missed'}**.`,
      paced,
    };
  } finally {
    await sql.end();
    await atrium.stop();
  }
}

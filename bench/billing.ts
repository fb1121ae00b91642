// Billing on PostgreSQL (called by bench/run.ts):
// 1. Priced usage ingestion: N `llm.call.completed` pricing jobs, exactly as the event's fan-out
//    queues them, are put in the outbox at once; the server's workers price them (usage debit,
//    wallet, rollup, reservation release, one transaction each). Records/s from the first to the
//    last debit. Target: ≥ 5,000/s.
// 2. The usage report for one month at daily interval grouped by model (one connection), over the rollup of
//    1,000,000 usage records (5 models, 20 users, every hour of the month); the rollup is written
//    in bulk with SQL (hourly, then its daily sums) — the state the ingestion path leaves after that many records — since pricing
//    a million records one by one would take the whole run. Target: p50 ≤ 100 ms.
import postgres from 'postgres';
import type { BenchContext } from './lib.ts';

const INGEST = Number(process.env.BENCH_BILLING_RECORDS ?? 20_000);
const REPORT_RECORDS = 1_000_000;
const MODELS = ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-5-mini', 'claude-sonnet-4-5'];
const USERS = 20;

export async function run(context: BenchContext): Promise<object> {
  if (!context.engines.includes('postgres')) return { skipped: 'PostgreSQL is not available' };
  const atrium = await context.startAtrium('postgres');
  const sql = postgres(atrium.databaseUrl!, { max: 2, onnotice: () => {} });
  try {
    const { project_id: projectId, api_key: apiKey } = atrium.tenant;

    // 1. Ingestion.
    const startedAt = new Date().toISOString();
    await sql`
      insert into jobs (topic, key, payload, run_at)
      select 'billing.price', 'bench:' || i, jsonb_build_object('project_id', ${projectId}::text, 'call', jsonb_build_object(
        'request_id', gen_random_uuid(), 'provider', 'openai', 'endpoint', '/v1/chat/completions',
        'model', (string_to_array(${MODELS.join(',')}, ','))[1 + i % ${MODELS.length}], 'requested_model', null, 'usage_source', 'provider',
        'request_bytes', 2000, 'max_output_tokens', null, 'choices', 1,
        'usage', jsonb_build_object('input_tokens', 800 + i % 400, 'cached_input_tokens', 100, 'cache_write_tokens', 0, 'output_tokens', 200 + i % 100, 'reasoning_tokens', 0),
        'user', null, 'annotations', '{}'::jsonb, 'started_at', ${startedAt}::text)), now()
      from generate_series(1, ${INGEST}) i`;
    await sql`select pg_notify('atrium_jobs', 'billing.price')`;
    const t0 = performance.now();
    let priced = 0;
    while (priced < INGEST && performance.now() - t0 < 600_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      [{ n: priced }] = await sql<{ n: number }[]>`select count(*)::int as n from billing_ledger where project_id = ${projectId}::uuid and entry_type = 'usage_debit'`;
    }
    const ingestSeconds = (performance.now() - t0) / 1000;
    const [books] = await sql<{ ok: boolean }[]>`
      select (select balance_micros from billing_wallets where project_id = ${projectId}::uuid) = (select sum(amount_micros) from billing_ledger where project_id = ${projectId}::uuid) as ok`;
    const recordsPerSecond = Math.round(priced / ingestSeconds);

    // 2. The report over a month holding the rollup of 1,000,000 records (last calendar month, UTC).
    const now = new Date();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const hours = Math.round((monthEnd.getTime() - monthStart.getTime()) / 3_600_000);
    const cells = hours * MODELS.length * USERS;
    const perCell = REPORT_RECORDS / cells;
    await sql`
      insert into billing_usage_rollup (project_id, hour, provider, model, usage_type, user_key, room, quantity, cost_micros, requests)
      select ${projectId}::uuid, ${monthStart.toISOString()}::timestamptz + make_interval(hours => h), 'openai', m, t, 'user-' || u, '',
        round(${perCell}::float8 * case t when 'input' then 1000 when 'output' then 250 else 1 end)::bigint,
        round(${perCell}::float8 * case t when 'input' then 2500 when 'output' then 2500 else 0 end)::bigint,
        round(${perCell}::float8)::bigint
      from generate_series(0, ${hours - 1}) h, unnest(string_to_array(${MODELS.join(',')}, ',')) m, generate_series(1, ${USERS}) u, unnest(array['input', 'output', 'request']) t`;
    await sql`
      insert into billing_usage_daily (project_id, day, provider, model, usage_type, user_key, room, quantity, cost_micros, requests)
      select project_id, date_trunc('day', hour, 'UTC'), provider, model, usage_type, user_key, room, sum(quantity), sum(cost_micros), sum(requests)
      from billing_usage_rollup where project_id = ${projectId}::uuid and hour >= ${monthStart.toISOString()}::timestamptz and hour < ${monthEnd.toISOString()}::timestamptz
      group by 1, 2, 3, 4, 5, 6, 7`;
    await sql`analyze billing_usage_rollup`;
    await sql`analyze billing_usage_daily`;
    const [{ rows }] = await sql<{ rows: number }[]>`select count(*)::int as rows from billing_usage_rollup where project_id = ${projectId}::uuid`;
    const query = `start=${monthStart.toISOString()}&end=${monthEnd.toISOString()}&interval=day&report=model`;
    const report = await context.measure(atrium.url, {
      name: 'usage report: a month, daily, by model (1M records)', method: 'GET',
      path: `/accounts/projects/${projectId}/usage?${query}`, headers: { authorization: `Bearer ${apiKey}` }, pid: atrium.pid,
      // One person opening the report: its latency, not a queue of 50 reports.
      connections: 1,
    });
    return {
      scenarios: [report],
      ingested: priced,
      ingestSeconds: Math.round(ingestSeconds * 10) / 10,
      recordsPerSecond,
      walletEqualsLedger: books?.ok ?? false,
      rollupRows: rows,
      notes: `Priced usage ingestion: ${priced} records in ${ingestSeconds.toFixed(1)} s, ${recordsPerSecond} records/s (target ≥ 5,000/s); wallet = ledger sum afterwards: ${books?.ok}. `
        + `Usage report over the rollup of ${REPORT_RECORDS.toLocaleString('en')} records (${rows} rollup rows: ${MODELS.length} models × ${USERS} users × ${hours} hours × 3 usage types): `
        + `p50 ${report.p50} ms, p99 ${report.p99} ms (target p50 ≤ 100 ms).`,
    };
  } finally {
    await sql.end();
    await atrium.stop();
  }
}

// `npm run bench`: Atrium against a bare Fastify route doing the same database work, side by side in
// one run, on PostgreSQL (a throwaway cluster) and on PGlite, under load and then with one caller
// (server CPU per request, the figure least moved by the machine). Prints a table, writes
// bench/results/latest.json and the results block of docs/benchmarks.md. Not a test: it never runs
// in `npm test` or CI, and it fails only when it cannot measure.
//
// Settings: BENCH_DURATION (measured seconds per scenario, default 10), BENCH_WARMUP (10),
// BENCH_CONNECTIONS (50), BENCH_ROUNDS (5: the scenarios of an engine take turns in 5 slices of
// BENCH_DURATION/5 s, so outside load hits them alike), BENCH_ENGINES (default "postgres,pglite").
// Optional scenario modules: bench/oauth.ts, bench/webhooks.ts, bench/room-servers.ts, bench/services.ts,
// bench/llm-proxy.ts, bench/feeds.ts, bench/billing.ts, bench/scale-out.ts, bench/http.ts (see bench/lib.ts). BENCH_ONLY=core,feeds,… runs only those parts.
// BENCH_CPU_PROF_DIR=dir makes every server the bench starts (Atrium and the bare baseline) write a V8 CPU profile there when it stops.
// BENCH_SERVER_CPUS=1 runs those servers on CPU 1 and the bench (load generator, fake upstreams, PostgreSQL, S3) on the others (pinBench in bench/lib.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { startPostgres, stopAllSync, type PostgresHandle } from '../test/support/postgres.ts';
import {
  cleanupSync, enginesFromEnv, log, machineSpeedMs, measure, measureSideBySide, pinBench, repoRoot, settingsFromEnv, startAtrium, startBare,
  type BenchContext, type Engine, type MeasureSettings, type Scenario, type ScenarioResult,
} from './lib.ts';

const EXTRA_MODULES = ['oauth', 'webhooks', 'room-servers', 'services', 'llm-proxy', 'feeds', 'billing', 'scale-out', 'http'] as const;
const EXTRA_TITLES: Record<(typeof EXTRA_MODULES)[number], string> = {
  oauth: 'OAuth', webhooks: 'Webhooks', 'room-servers': 'Room servers: OTLP ingest and scheduled tasks', services: 'Room services',
  'llm-proxy': 'LLM proxy', feeds: 'Feeds', billing: 'Billing: usage ingestion and reports',
  'scale-out': 'Scale-out: one vs three instances, S3 storage',
  http: 'Serving: the JSON request line, compressed answers',
};
/** BENCH_ONLY: a comma-separated list of parts to run (`core` and the extra modules' names); all by default. */
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
const wantedPart = (name: string) => !ONLY || ONLY.has(name);
const ROOM = 'bench-room';

/** Rounds of the one-caller rows (each scenario's warm-up and duration per round, as the others). */
const ONE_CALLER_ROUNDS = 2;

/** The targets set for the core scenarios, checked on PostgreSQL: req/s as a share of the bare route's, and p99 where it sets one. */
const TARGETS: { scenario: string; ratio: number; p99Ms?: number }[] = [
  { scenario: 'GET room (authenticated)', ratio: 0.9, p99Ms: 10 },
  { scenario: 'POST room connect', ratio: 0.6 },
  { scenario: 'POST rooms (create)', ratio: 0.5 },
];

interface TargetCheck {
  description: string;
  /** What was measured; undefined when PostgreSQL was not. */
  ratio: number | undefined;
  p99Ms: number | undefined;
  met: boolean | undefined;
}

function checkTargets(results: EngineResult[]): TargetCheck[] {
  const postgres = results.find((r) => r.engine === 'postgres');
  return TARGETS.map(({ scenario, ratio, p99Ms }) => {
    const measured = postgres?.scenarios.find((s) => s.name === scenario);
    return {
      description: `PostgreSQL, ${scenario} ≥ ${ratio * 100} % of the bare route's req/s${p99Ms === undefined ? '' : ` and p99 ≤ ${p99Ms} ms`}`,
      ratio: measured?.ratio,
      p99Ms: measured?.p99,
      met: measured ? measured.ratio >= ratio && (p99Ms === undefined || measured.p99 <= p99Ms) : undefined,
    };
  });
}

const targetLine = (t: TargetCheck) => t.met === undefined
  ? `Target (${t.description}): not checked — PostgreSQL was not measured.`
  : `Target (${t.description}): **${t.met ? 'met' : 'missed'}** — ${((t.ratio ?? 0) * 100).toFixed(0)} % of bare, p99 ${t.p99Ms} ms.`;

interface EngineResult {
  engine: Engine;
  scenarios: (ScenarioResult & { ratio: number })[];
}

/** machineSpeedMs() before and after a part: lower is faster. */
interface Speed {
  before: number;
  after: number;
}

const speedNote = (speed: Speed | undefined) => (speed ? ` A fixed task of JavaScript work took ${speed.before} ms before and ${speed.after} ms after (lower is faster; see \`machineSpeedMs\` in bench/lib.ts).` : '');

interface Report {
  date: string;
  /** When the core scenarios were measured (an earlier run's, when BENCH_ONLY left them out). */
  coreDate: string;
  /** machineSpeedMs before and after the core scenarios (each extra part keeps its own as `speed`). */
  coreSpeed?: Speed | undefined;
  machine: { nproc: number; cpu: string; memoryGiB: number; node: string; os: string; postgres: string | undefined; pinned?: string | undefined };
  settings: MeasureSettings;
  engines: EngineResult[];
  skipped: string[];
  targets: TargetCheck[];
  extras: Record<string, unknown>;
}

// Cleanup: children and the cluster go away however the run ends.
process.on('exit', () => {
  cleanupSync();
  stopAllSync();
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    cleanupSync();
    stopAllSync();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

async function api(url: string, token: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: json === undefined ? null : JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function benchEngine(settings: MeasureSettings, pgUrl: string | undefined, engine: Engine): Promise<EngineResult> {
  log(`${engine}: starting atrium`);
  const atrium = await startAtrium(pgUrl, engine);
  try {
    const { project_id: projectId, api_key: apiKey } = atrium.tenant;
    const rooms = `/accounts/projects/${projectId}/rooms`;
    const created = await api(atrium.url, apiKey, 'POST', rooms, {
      name: ROOM, metadata: { topic: 'benchmark', capacity: 50 }, annotations: { team: 'bench' },
    });
    if (created.status !== 201) throw new Error(`creating the bench room failed: ${created.status} ${JSON.stringify(created.body)}`);
    const room = created.body;

    log(`${engine}: starting the bare server`);
    const bare = await startBare(engine, {
      databaseUrl: atrium.databaseUrl,
      seed: { project: { id: projectId, name: 'bench' }, room: { id: room.id, name: room.name, metadata: room.metadata, annotations: room.annotations, permissions: room.permissions } },
    });
    try {
      const auth = { authorization: `Bearer ${apiKey}` };
      // The scenarios with `connections` callers (the run's when undefined), their rows named after
      // `label`; each set creates rooms named `<roomPrefix><n>`, which must not repeat across sets.
      const plan = (label: string, roomPrefix: string, connections?: number): [string, Scenario, number][] => [
        [bare.url, { name: `${label}bare: select room (no auth)`, path: `/rooms/${projectId}/${ROOM}`, pid: bare.pid, connections }, 200],
        [atrium.url, { name: `${label}GET room (authenticated)`, path: `${rooms}/${ROOM}`, headers: auth, pid: atrium.pid, connections }, 200],
        [atrium.url, { name: `${label}POST room connect`, method: 'POST', path: `${rooms}/${ROOM}/connect`, headers: auth, body: '{}', pid: atrium.pid, connections }, 200],
        [atrium.url, { name: `${label}POST rooms (create)`, method: 'POST', path: rooms, headers: auth, bodyFor: (n) => JSON.stringify({ name: `${roomPrefix}${n}`, metadata: { n } }), pid: atrium.pid, connections }, 201],
      ];
      const planned = plan('', 'bench-');
      // One request each first, so a broken scenario fails loudly instead of measuring 404s.
      for (const [url, scenario, status] of planned) {
        const body = scenario.bodyFor ? JSON.stringify({ name: 'bench-probe' }) : scenario.body;
        const response = await fetch(`${url}${scenario.path}`, {
          method: scenario.method ?? 'GET',
          headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...scenario.headers },
          body: body ?? null,
        });
        if (response.status !== status) throw new Error(`${engine} ${scenario.name}: expected ${status}, got ${response.status} ${await response.text()}`);
      }
      // Each set of rows against its own bare row: under load (the run's connections), then one
      // caller in sequence, where the server's CPU per request hardly moves with the machine.
      const side = async (rows: [string, Scenario, number][], measureSettings: MeasureSettings) => {
        const results = await measureSideBySide(measureSettings, rows.map(([url, scenario]) => ({ url, scenario })), (m) => log(`${engine}: ${m}`));
        for (const r of results) {
          log(`${engine}: ${r.name}: ${r.rps} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.cpuUsPerRequest ?? '?'} µs CPU/req${r.non2xx ? `, ${r.non2xx} non-2xx` : ''}`);
        }
        const base = results[0]!.rps || 1;
        return results.map((r) => ({ ...r, ratio: Math.round((r.rps / base) * 1000) / 1000 }));
      };
      const loaded = await side(planned, settings);
      const oneCaller = await side(plan('one caller: ', 'bench-one-', 1), { ...settings, rounds: ONE_CALLER_ROUNDS });
      return { engine, scenarios: [...loaded, ...oneCaller] };
    } finally {
      await bare.stop();
    }
  } finally {
    await atrium.stop();
  }
}

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

function textTable(engines: EngineResult[]): string {
  const head = ['engine', 'scenario', 'req/s', 'p50 ms', 'p99 ms', 'vs bare', 'CPU µs/req', 'non-2xx'];
  const rows = engines.flatMap((e) => e.scenarios.map((s) => [
    e.engine, s.name, String(s.rps), String(s.p50), String(s.p99), `${(s.ratio * 100).toFixed(0)}%`, String(s.cpuUsPerRequest ?? '?'), String(s.non2xx + s.errors),
  ]));
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!, i >= 2)).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function markdownTable(scenarios: (ScenarioResult & { ratio?: number; engine?: string })[]): string {
  const withEngine = scenarios.some((s) => s.engine !== undefined);
  const withRatio = scenarios.some((s) => s.ratio !== undefined);
  const head = [...(withEngine ? ['engine'] : []), 'scenario', 'req/s', 'p50 ms', 'p99 ms', ...(withRatio ? ['vs bare'] : []), 'server CPU µs/req', 'load (1 min)', 'non-2xx / errors'];
  const rows = scenarios.map((s) => [
    ...(withEngine ? [s.engine ?? ''] : []), s.name, String(s.rps), String(s.p50), String(s.p99),
    ...(withRatio ? [s.ratio === undefined ? '' : `${(s.ratio * 100).toFixed(0)}%`] : []),
    String(s.cpuUsPerRequest ?? '–'), s.load ? s.load.join(' → ') : '–', `${s.non2xx} / ${s.errors}`,
  ]);
  const align = head.map((_, i) => (i < (withEngine ? 2 : 1) ? '---' : '---:'));
  return [head, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

function isScenarioResults(value: unknown): value is { scenarios: ScenarioResult[]; notes?: string } {
  const scenarios = (value as { scenarios?: unknown } | null)?.scenarios;
  return Array.isArray(scenarios) && scenarios.every((s) => typeof s?.name === 'string' && typeof s?.rps === 'number');
}

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';

function resultsBlock(report: Report): string {
  const m = report.machine;
  const lines = [
    START,
    `## Results (last run ${report.date})`,
    '',
    'A run limited by `BENCH_ONLY` keeps the earlier figures of the parts it left out; each part says when it was measured.',
    '',
    `Machine: ${m.nproc} CPUs (nproc; ${m.cpu}), ${m.memoryGiB} GiB RAM, ${m.os}, Node ${m.node}${m.postgres ? `, PostgreSQL ${m.postgres}` : ''}. ` +
      `${report.settings.connections} connections; per scenario ${report.settings.warmup} s warm-up, then ${report.settings.duration} s measured ` +
      `in ${report.settings.rounds} slices taken in turns with the other scenarios of the engine. ` +
      (m.pinned ? `CPUs split (BENCH_SERVER_CPUS): ${m.pinned}.` : 'Load generator, servers and database share these CPUs.'),
    '',
    `Core scenarios, measured ${report.coreDate}.${speedNote(report.coreSpeed)}`,
    '',
    markdownTable(report.engines.flatMap((e) => e.scenarios.map((sc) => ({ ...sc, engine: e.engine })))),
    '',
  ];
  lines.push(report.targets.map(targetLine).join('\n\n'));
  for (const s of report.skipped) lines.push('', `Skipped: ${s}`);
  for (const name of EXTRA_MODULES) {
    const extra = report.extras[name];
    lines.push('', `### ${EXTRA_TITLES[name]} (bench/${name}.ts)`, '');
    const { date: measuredAt, speed } = (extra ?? {}) as { date?: unknown; speed?: Speed };
    if (typeof measuredAt === 'string') lines.push(`Measured ${measuredAt}.${speedNote(speed)}`, '');
    if (extra && typeof extra === 'object' && 'skipped' in extra) lines.push(`Not run: ${(extra as { skipped: string }).skipped}.`);
    else if (extra && typeof extra === 'object' && 'error' in extra) lines.push(`Failed: ${(extra as { error: string }).error.split('\n')[0]} (stack in bench/results/latest.json).`);
    else if (isScenarioResults(extra)) {
      lines.push(markdownTable(extra.scenarios));
      if (extra.notes) lines.push('', extra.notes);
    } else if (typeof (extra as { notes?: unknown } | undefined)?.notes === 'string') lines.push((extra as { notes: string }).notes);
    else lines.push('```json', JSON.stringify(extra, null, 2), '```');
  }
  lines.push(END);
  return lines.join('\n');
}

function updateDocs(report: Report): string {
  const file = join(repoRoot, 'docs', 'benchmarks.md');
  const block = resultsBlock(report);
  let text = existsSync(file) ? readFileSync(file, 'utf8') : `# Benchmarks\n\nRun with \`npm run bench\` (see bench/run.ts).\n\n${START}\n${END}\n`;
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  text = start >= 0 && end > start ? text.slice(0, start) + block + text.slice(end + END.length) : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
  return file;
}

/** The last run's report, whose figures a BENCH_ONLY run keeps for the parts it leaves out. */
function previousReport(): Report | undefined {
  const file = join(repoRoot, 'bench', 'results', 'latest.json');
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Report;
  } catch {
    return undefined;
  }
}

async function postgresVersion(url: string): Promise<string | undefined> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`show server_version`;
    return String(row?.server_version);
  } catch {
    return undefined;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

async function main(): Promise<void> {
  // Before pinBench, which leaves the bench fewer CPUs than the machine has.
  const nproc = availableParallelism();
  const pinned = pinBench();
  if (pinned) log(`cpus: ${pinned}`);
  const settings = settingsFromEnv();
  const wanted = enginesFromEnv(['postgres', 'pglite']);
  const skipped: string[] = [];

  let pg: PostgresHandle | undefined;
  if (wanted.includes('postgres')) {
    const started = await startPostgres();
    if ('skipped' in started) skipped.push(`PostgreSQL — ${started.skipped}`);
    else {
      pg = started;
      log(`postgres: throwaway cluster at ${pg.url}`);
    }
  }
  const engines = wanted.filter((e) => e === 'pglite' || pg !== undefined);

  const date = new Date().toISOString();
  const previous = previousReport();
  try {
    const results: EngineResult[] = [];
    let coreSpeed: Speed | undefined;
    if (wantedPart('core')) {
      const before = machineSpeedMs();
      for (const engine of engines) results.push(await benchEngine(settings, pg?.url, engine));
      coreSpeed = { before, after: machineSpeedMs() };
    }
    const keptCore = !wantedPart('core') && previous ? previous : undefined;
    if (keptCore) results.push(...keptCore.engines);

    const context: BenchContext = {
      pgUrl: pg?.url,
      engines,
      ...settings,
      startAtrium: (engine, env, alongside) => startAtrium(pg?.url, engine, env, alongside),
      measure: (url, scenario) => measure(settings, url, scenario),
      measureSideBySide: (targets) => measureSideBySide(settings, targets, log),
      log,
    };
    const extras: Record<string, unknown> = {};
    for (const name of EXTRA_MODULES) {
      const file = join(repoRoot, 'bench', `${name}.ts`);
      if (!wantedPart(name)) {
        extras[name] = previous?.extras[name] ?? { skipped: 'not in BENCH_ONLY' };
        continue;
      }
      if (!existsSync(file)) {
        extras[name] = { skipped: `bench/${name}.ts does not exist yet` };
        log(`skipping ${name}: bench/${name}.ts does not exist`);
        continue;
      }
      log(`running bench/${name}.ts`);
      try {
        const mod = (await import(pathToFileURL(file).href)) as { run?: (c: BenchContext) => Promise<object> };
        if (typeof mod.run !== 'function') throw new Error(`bench/${name}.ts does not export run(context)`);
        const before = machineSpeedMs();
        const result = await mod.run(context);
        extras[name] = { ...result, date, speed: { before, after: machineSpeedMs() } };
      } catch (error) {
        extras[name] = { error: (error as Error).stack ?? String(error) };
        log(`bench/${name}.ts failed: ${(error as Error).message}`);
      }
    }

    const report: Report = {
      date,
      coreDate: keptCore ? keptCore.coreDate ?? keptCore.date : date,
      coreSpeed: keptCore ? keptCore.coreSpeed : coreSpeed,
      machine: {
        nproc,
        cpu: cpus()[0]?.model ?? 'unknown',
        memoryGiB: Math.round(totalmem() / 2 ** 30),
        node: process.version,
        os: `${platform()} ${release()}`,
        postgres: pg ? await postgresVersion(pg.url) : undefined,
        pinned,
      },
      settings,
      engines: results,
      skipped,
      targets: checkTargets(results),
      extras,
    };

    const dir = join(repoRoot, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
    // Without the last run's report, a BENCH_ONLY run would blank the other parts' figures in the doc
    // (latest.json is not committed): leave the doc as it is then.
    const doc = ONLY && !previous ? undefined : updateDocs(report);

    console.log(`\n${textTable(results)}\n`);
    for (const t of report.targets) console.log(t.met === undefined ? `target (${t.description}): not checked (no PostgreSQL)` : `target (${t.description}): ${t.met ? 'met' : 'MISSED'}`);
    for (const s of skipped) console.log(`skipped: ${s}`);
    for (const name of EXTRA_MODULES) {
      const extra = extras[name] as { skipped?: string; error?: string };
      console.log(`${name}: ${extra?.skipped ? `skipped (${extra.skipped})` : extra?.error ? 'FAILED (see latest.json)' : 'done'}`);
    }
    console.log(doc ? `wrote bench/results/latest.json and ${doc.slice(repoRoot.length + 1)}`
      : 'wrote bench/results/latest.json; docs/benchmarks.md left as it is (BENCH_ONLY without an earlier bench/results/latest.json)');
  } finally {
    cleanupSync();
    await pg?.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);

// Machinery of `npm run bench` (bench/run.ts), shared with optional scenario modules.
//
// ## Optional scenario modules
//
// bench/run.ts imports the modules listed in its EXTRA_MODULES when they exist. Each exports
//
//     export async function run(context: BenchContext): Promise<object>
//
// and whatever it returns lands in bench/results/latest.json under `extras.<name>` and in a section
// of docs/benchmarks.md. Return `{ scenarios: ScenarioResult[], notes?: string }` (results of
// `context.measure`) to get a table there; any other object is shown as JSON. A module that throws
// is reported as failed; the rest of the run goes on. To let it run alone as well
// (`node bench/<name>.ts`), end it with
//
//     if (import.meta.main) await (await import('./lib.ts')).runAlone(run, ['postgres']);
//
// What `context` offers (BenchContext below):
//   - pgUrl        URL of the throwaway PostgreSQL cluster's `atrium_test` database (superuser);
//                  undefined when PostgreSQL is not installed (then engines is ['pglite']).
//   - engines      the engines this run measures, e.g. ['postgres', 'pglite'].
//   - duration     measured seconds per scenario (BENCH_DURATION, default 10);
//   - warmup       seconds of discarded load before each measurement (BENCH_WARMUP, default 10);
//   - connections  concurrent connections (BENCH_CONNECTIONS, default 50);
//   - rounds       slices the measured time is cut into (BENCH_ROUNDS, default 5), see
//                  measureSideBySide.
//   - startAtrium(engine, env?, alongside?)  a fresh Atrium child process (`node src/cli/main.ts
//                  serve`) on 127.0.0.1: its own temp data dir, on PostgreSQL its own fresh database
//                  in the cluster, a tenant bootstrapped through `atrium bootstrap --json` before it
//                  started (admin user, project, admin API key, personal access token). `env` adds or
//                  overrides settings (e.g. ATRIUM_AUTH_CACHE_SECONDS). With `alongside` (PostgreSQL),
//                  another instance on that instance's database and tenant (give both the same
//                  ATRIUM_SECRET_KEY). Call `stop()` when done; anything left running is killed when
//                  the run ends, fails or is interrupted.
//   - measure(url, scenario)  autocannon (several URLs: connections spread over them in turn, like a
//                  load balancer): `warmup` seconds discarded, then `duration` seconds
//                  measured, with `connections` connections; returns req/s, p50, p99 (over every
//                  response), server CPU µs per request when `scenario.pid` is set, non-2xx…
//   - measureSideBySide([{url, scenario}, …])  the same for several scenarios, which take turns
//                  in `rounds` slices so that outside load hits them alike: use it to compare
//                  against a baseline (ratios from one side-by-side call are what to compare).
//   - log(message) progress line on stderr.
//
// Everything listens on 127.0.0.1, and every child is killed at the end, on error and on SIGINT
// (children also get a parent-death signal through setpriv, so a SIGKILLed run leaves nothing).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import postgres from 'postgres';
import { SERVE_NODE_FLAGS } from '../bin/serve-flags.js';
import { startPostgres, stopAllSync } from '../test/support/postgres.ts';

export type Engine = 'postgres' | 'pglite';

export const repoRoot = resolve(import.meta.dirname, '..');

/** What `atrium bootstrap --json` prints. */
export interface Tenant {
  user_id: string;
  project_id: string;
  api_key: string;
  user_token: string;
}

export interface AtriumProcess {
  engine: Engine;
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  dataDir: string;
  /** The PostgreSQL database of this instance (postgres engine only). */
  databaseUrl: string | undefined;
  tenant: Tenant;
  /** The server process (setpriv execs in place, so this is node itself): pass it as `Scenario.pid`. */
  pid: number;
  stop(): Promise<void>;
}

export interface Scenario {
  name: string;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query, e.g. `/accounts/projects/<id>/rooms/lobby`. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /** A fresh body per request (n counts from 0 across the warm-up and the measurement). */
  bodyFor?: (n: number) => string;
  /** The server's pid (or pids): its CPU time per request is measured (Linux /proc), less noisy than req/s. */
  pid?: number | number[] | undefined;
  /** Concurrent connections for this scenario (default: the run's), e.g. 1 for one user's latency. */
  connections?: number | undefined;
}

export interface ScenarioResult {
  name: string;
  method: string;
  path: string;
  /** Responses per measured second. */
  rps: number;
  /** Latency percentiles over every response, in milliseconds. */
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  statusCodes: Record<string, number>;
  /** Server CPU time (user + system) per request, in microseconds, when the scenario named a pid. */
  cpuUsPerRequest: number | undefined;
  /** 1-minute load average when the measurement started and ended: how busy the machine was. */
  load: [number, number];
}

export interface BenchContext {
  pgUrl: string | undefined;
  engines: Engine[];
  duration: number;
  warmup: number;
  connections: number;
  rounds: number;
  startAtrium(engine: Engine, env?: Record<string, string>, alongside?: AtriumProcess): Promise<AtriumProcess>;
  measure(url: string | string[], scenario: Scenario): Promise<ScenarioResult>;
  measureSideBySide(targets: { url: string | string[]; scenario: Scenario }[]): Promise<ScenarioResult[]>;
  log(message: string): void;
}

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Child processes

const children = new Set<ChildProcess>();

function onPath(cmd: string): string | undefined {
  for (const dir of ['/usr/bin', '/bin', ...(process.env.PATH ?? '').split(delimiter)]) {
    if (dir && existsSync(join(dir, cmd))) return join(dir, cmd);
  }
  return undefined;
}
const setpriv = onPath('setpriv');

/**
 * How fast this machine is at the moment: the median milliseconds of a fixed task of JavaScript work
 * (JSON out and back in of a thousand small objects, sixty times; ~70 ms on this project's 2-core
 * machine when it is quiet). On a shared host the same code's figures move with it — twice as slow
 * within one day here — so each part of the results says what it was before and after it ran.
 */
export function machineSpeedMs(): number {
  const rows = Array.from({ length: 1000 }, (_, i) => ({ id: `room-${i}`, n: i, tags: ['a', 'b', String(i)], meta: { x: i * 1.5, ok: i % 2 === 0 } }));
  const once = () => {
    const start = performance.now();
    for (let i = 0; i < 60; i += 1) JSON.parse(JSON.stringify(rows));
    return performance.now() - start;
  };
  once(); // warm-up: compiled code, not the interpreter, is what is timed
  const times = Array.from({ length: 5 }, once).sort((a, b) => a - b);
  return Math.round(times[2]!);
}

/**
 * BENCH_SERVER_CPUS (a taskset CPU list, e.g. `1`): the servers under test (Atrium and the bare
 * baselines: spawnChild's children unless told otherwise) run on these CPUs, and the bench itself,
 * with its load generator, fake upstreams, PostgreSQL and S3, on the others, as a load generator on
 * a machine of its own would. Unset, everything shares every CPU (the default, and how the results
 * so far were taken).
 */
const SERVER_CPUS = process.env.BENCH_SERVER_CPUS?.trim() || undefined;

/** Moves the bench (all its threads; children started later inherit it) off BENCH_SERVER_CPUS; what the results should say of the CPUs. */
export function pinBench(): string | undefined {
  if (!SERVER_CPUS) return undefined;
  const servers = new Set(SERVER_CPUS.split(',').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number);
    if (!Number.isInteger(from) || !Number.isInteger(to)) throw new Error(`BENCH_SERVER_CPUS: not a CPU list: ${SERVER_CPUS}`);
    return Array.from({ length: to! - from! + 1 }, (_, i) => from! + i);
  }));
  const rest = Array.from({ length: availableParallelism() }, (_, i) => i).filter((cpu) => !servers.has(cpu));
  if (rest.length === 0) throw new Error(`BENCH_SERVER_CPUS=${SERVER_CPUS} leaves no CPU for the bench itself`);
  const pinned = spawnSync('taskset', ['-a', '-p', '-c', rest.join(','), String(process.pid)], { encoding: 'utf8' });
  if (pinned.status !== 0) throw new Error(`taskset failed: ${pinned.stderr || pinned.error?.message}`);
  return `servers under test on CPU ${SERVER_CPUS}, the bench, its load generator, fake upstreams, PostgreSQL and S3 on CPU ${rest.join(',')}`;
}

/**
 * Spawns a child that dies with this process (setpriv parent-death signal where available). A
 * server under test runs on BENCH_SERVER_CPUS when set; anything else (`underTest: false`) stays
 * on the bench's CPUs.
 */
export function spawnChild(argv: string[], env: NodeJS.ProcessEnv, { underTest = true } = {}): ChildProcess & { output(): string } {
  const pinned = SERVER_CPUS && underTest ? ['taskset', '-c', SERVER_CPUS, ...argv] : argv;
  const full = setpriv ? [setpriv, '--pdeathsig=KILL', '--', ...pinned] : pinned;
  const child = spawn(full[0]!, full.slice(1), { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-64 * 1024);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return Object.assign(child, { output: () => output });
}

const tempDirs = new Set<string>();

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Kills every child and removes every temp dir; for exit and signal handlers (all synchronous). */
export function cleanupSync(): void {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
  for (const dir of tempDirs) removeTempDir(dir);
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (exited(child)) return;
  const done = new Promise<void>((res) => child.once('exit', () => res()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
}

/** Runs a command to completion; resolves with stdout, rejects with the output on failure. */
function runToEnd(argv: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawnChild(argv, env, { underTest: false });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  return new Promise((res, rej) => {
    child.on('error', rej);
    child.on('exit', (code, signal) => {
      if (code === 0) res(stdout);
      else rej(new Error(`${argv.slice(1).join(' ')} failed (${signal ?? `exit ${code}`}):\n${child.output()}`));
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const server = createServer();
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => res(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `url` until it answers 200; fails early when the child exits. */
export async function waitReady(child: ChildProcess & { output(): string }, url: string, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited(child)) throw new Error(`${what} exited before it was ready:\n${child.output()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms:\n${child.output()}`);
}

/** The parent environment without settings that would leak into a child's configuration. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('ATRIUM_') || key.startsWith('BARE_') || key === 'DATABASE_URL' || key === 'PORT' || key === 'HOST') continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

// ---------------------------------------------------------------------------------------------
// Atrium

let databases = 0;

/** A fresh database in the cluster, so each instance starts from an empty schema. */
async function freshDatabase(pgUrl: string): Promise<string> {
  const name = `atrium_bench_${process.pid}_${++databases}`;
  const sql = postgres(pgUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`create database ${name}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function startAtrium(pgUrl: string | undefined, engine: Engine, env: Record<string, string> = {}, alongside?: AtriumProcess): Promise<AtriumProcess> {
  if (engine === 'postgres' && !pgUrl) throw new Error('PostgreSQL is not available in this run');
  if (alongside && (engine !== 'postgres' || alongside.engine !== 'postgres')) throw new Error('instances share a database on PostgreSQL only');
  const dataDir = makeTempDir('atrium-bench-');
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const databaseUrl = alongside ? alongside.databaseUrl : engine === 'postgres' ? await freshDatabase(pgUrl!) : undefined;
    const childEnv = cleanEnv({
      PORT: String(port),
      HOST: '127.0.0.1',
      ATRIUM_PUBLIC_URL: url,
      ATRIUM_DATA_DIR: dataDir,
      ATRIUM_LOG_LEVEL: 'warn',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      ...env,
    });
    const cli = join(repoRoot, 'src', 'cli', 'main.ts');
    // Embedded engine: bootstrap must run while no server holds the data dir, so it runs first.
    const tenant = alongside?.tenant ?? JSON.parse((await runToEnd(
      [process.execPath, cli, 'bootstrap', '--email', 'bench@example.test', '--password', 'bench password 1', '--project', 'bench', '--json'],
      childEnv,
    )).trim()) as Tenant;
    // The server's node flags as operators get them; BENCH_SERVE_FLAGS (space-separated, empty for
    // none) replaces them, to compare flags side by side.
    const flags = process.env.BENCH_SERVE_FLAGS === undefined ? SERVE_NODE_FLAGS : process.env.BENCH_SERVE_FLAGS.split(' ').filter(Boolean);
    const child = spawnChild([process.execPath, ...flags, ...cpuProfileFlags(), cli, 'serve'], childEnv);
    await waitReady(child, `${url}/readyz`, `atrium serve (${engine})`);
    return {
      engine,
      url,
      port,
      dataDir,
      databaseUrl,
      tenant,
      pid: child.pid!,
      async stop() {
        await stopChild(child);
        removeTempDir(dataDir);
      },
    };
  } catch (error) {
    removeTempDir(dataDir);
    throw error;
  }
}

/** BENCH_CPU_PROF_DIR: each server the bench starts (Atrium's and the bare one) writes a V8 CPU profile there when it stops. */
function cpuProfileFlags(): string[] {
  return process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
}

// ---------------------------------------------------------------------------------------------
// The bare Fastify server (bench/bare-server.ts)

export interface BareSeed {
  project: { id: string; name: string };
  room: { id: string; name: string; metadata: unknown; annotations: unknown; permissions: unknown };
}

export interface BareProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * On PostgreSQL the bare server reads Atrium's own database. On PGlite it cannot (one process per
 * data dir), so it opens its own PGlite in a temp dir, applies the same migrations and inserts the
 * same project and room rows (`seed`).
 */
export async function startBare(engine: Engine, options: { databaseUrl?: string | undefined; seed: BareSeed; poolSize?: number }): Promise<BareProcess> {
  const port = await freePort();
  const dir = engine === 'pglite' ? makeTempDir('atrium-bench-bare-') : undefined;
  const env = cleanEnv({
    BARE_PORT: String(port),
    BARE_SEED: JSON.stringify(options.seed),
    BARE_POOL_SIZE: String(options.poolSize ?? 20),
    ...(engine === 'postgres' ? { BARE_DATABASE_URL: options.databaseUrl! } : { BARE_PGLITE_DIR: dir! }),
  });
  const child = spawnChild([process.execPath, ...cpuProfileFlags(), join(repoRoot, 'bench', 'bare-server.ts')], env);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(child, `${url}/healthz`, `bare server (${engine})`);
  } catch (error) {
    await stopChild(child);
    if (dir) removeTempDir(dir);
    throw error;
  }
  return {
    url,
    pid: child.pid!,
    async stop() {
      await stopChild(child);
      if (dir) removeTempDir(dir);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
}
interface AutocannonRequest { method?: string; path?: string; headers?: Record<string, string>; body?: string; setupRequest?: (request: AutocannonRequest) => AutocannonRequest }
interface AutocannonRun extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void;
}
type Autocannon = (options: { url: string | string[]; connections: number; duration: number; requests: AutocannonRequest[] }) => AutocannonRun;

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as Autocannon;

export interface MeasureSettings {
  /** Measured seconds per scenario, in total over all rounds. */
  duration: number;
  /** Seconds of discarded load per scenario before its first round. */
  warmup: number;
  connections: number;
  /**
   * The measured time of each scenario is cut into this many slices, and the scenarios of one
   * `measureSideBySide` call take turns slice by slice, so a burst of outside load hits all of them
   * alike instead of whichever happened to be running.
   */
  rounds: number;
}

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name}=${raw} is not a non-negative number`);
  return value;
}

/** The engines BENCH_ENGINES names (a comma-separated list; `fallback` when unset), each checked. */
export function enginesFromEnv(fallback: Engine[]): Engine[] {
  const named = (process.env.BENCH_ENGINES ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  for (const e of named) if (e !== 'postgres' && e !== 'pglite') throw new Error(`BENCH_ENGINES: unknown engine ${e}`);
  return named.length > 0 ? named as Engine[] : fallback;
}

/** The run's settings from BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS and BENCH_ROUNDS (defaults above). */
export function settingsFromEnv(): MeasureSettings {
  return {
    duration: setting('BENCH_DURATION', 10),
    // Long enough for V8 to finish optimising the server's hot paths (docs/benchmarks.md, Method).
    warmup: setting('BENCH_WARMUP', 10),
    connections: setting('BENCH_CONNECTIONS', 50),
    rounds: setting('BENCH_ROUNDS', 5),
  };
}

interface Target {
  url: string | string[];
  scenario: Scenario;
}

class Accumulator {
  latencies = new Float64Array(1 << 16);
  count = 0;
  seconds = 0;
  errors = 0;
  timeouts = 0;
  non2xx = 0;
  cpu = 0;
  cpuKnown = true;
  statusCodes: Record<string, number> = {};

  record(ms: number): void {
    if (this.count === this.latencies.length) {
      const grown = new Float64Array(this.latencies.length * 2);
      grown.set(this.latencies);
      this.latencies = grown;
    }
    this.latencies[this.count++] = ms;
  }

  percentile(sorted: Float64Array, p: number): number {
    if (sorted.length === 0) return 0;
    return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10;
  }
}

function autocannonRequest(target: Target, counter: { n: number }): AutocannonRequest {
  const { scenario } = target;
  const headers = { ...(scenario.body !== undefined || scenario.bodyFor ? { 'content-type': 'application/json' } : {}), ...scenario.headers };
  return {
    method: scenario.method ?? 'GET',
    path: scenario.path,
    headers,
    ...(scenario.body !== undefined ? { body: scenario.body } : {}),
    ...(scenario.bodyFor ? { setupRequest: (r: AutocannonRequest) => ({ ...r, body: scenario.bodyFor!(counter.n++) }) } : {}),
  };
}

async function slice(settings: MeasureSettings, target: Target, request: AutocannonRequest, seconds: number, into?: Accumulator): Promise<void> {
  const cpuBefore = cpuSeconds(target.scenario.pid);
  const run = autocannon({ url: target.url, connections: target.scenario.connections ?? settings.connections, duration: seconds, requests: [request] });
  if (into) run.on('response', (_client, _status, _bytes, responseTime) => into.record(responseTime));
  const result = await run;
  const cpuAfter = cpuSeconds(target.scenario.pid);
  if (!into) return;
  into.seconds += result.duration;
  into.errors += result.errors;
  into.timeouts += result.timeouts;
  into.non2xx += result.non2xx;
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) into.statusCodes[code] = (into.statusCodes[code] ?? 0) + Number(stats.count);
  if (cpuBefore === undefined || cpuAfter === undefined) into.cpuKnown = false;
  else into.cpu += cpuAfter - cpuBefore;
}

/** Measures the targets side by side: warm-up each, then `rounds` rounds taking turns. */
export async function measureSideBySide(settings: MeasureSettings, targets: Target[], progress?: (message: string) => void): Promise<ScenarioResult[]> {
  const counters = targets.map(() => ({ n: 0 }));
  const requests = targets.map((t, i) => autocannonRequest(t, counters[i]!));
  const totals = targets.map(() => new Accumulator());
  const loadBefore = loadavg()[0]!;
  if (settings.warmup > 0) {
    for (const [i, target] of targets.entries()) {
      progress?.(`warm-up ${target.scenario.name} (${settings.warmup}s)`);
      await slice(settings, target, requests[i]!, settings.warmup);
    }
  }
  const rounds = Math.max(1, Math.round(settings.rounds));
  const seconds = Math.max(1, Math.round(settings.duration / rounds));
  for (let round = 1; round <= rounds; round++) {
    progress?.(`round ${round}/${rounds}: ${targets.length} scenario(s) × ${seconds}s`);
    for (const [i, target] of targets.entries()) await slice(settings, target, requests[i]!, seconds, totals[i]);
  }
  const load: [number, number] = [round2(loadBefore), round2(loadavg()[0]!)];
  return targets.map(({ scenario }, i) => {
    const total = totals[i]!;
    const sorted = total.latencies.slice(0, total.count).sort();
    return {
      name: scenario.name,
      method: scenario.method ?? 'GET',
      path: scenario.path,
      rps: Math.round(total.count / (total.seconds || 1)),
      p50: total.percentile(sorted, 50),
      p99: total.percentile(sorted, 99),
      requests: total.count,
      non2xx: total.non2xx,
      errors: total.errors,
      timeouts: total.timeouts,
      seconds: round2(total.seconds),
      statusCodes: total.statusCodes,
      cpuUsPerRequest: total.cpuKnown && scenario.pid !== undefined && total.count > 0 ? Math.round((total.cpu * 1e6) / total.count) : undefined,
      load,
    };
  });
}

/** One scenario on its own: warm-up, then `duration` seconds (in `rounds` slices). */
export async function measure(settings: MeasureSettings, url: string | string[], scenario: Scenario): Promise<ScenarioResult> {
  const [result] = await measureSideBySide(settings, [{ url, scenario }]);
  return result!;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

let clockTicks: number | undefined;

/** User + system CPU seconds of a process, or of several together (Linux /proc; undefined elsewhere). */
export function cpuSeconds(pid: number | number[] | undefined): number | undefined {
  if (pid === undefined) return undefined;
  if (Array.isArray(pid)) {
    const each = pid.map((one) => cpuSeconds(one));
    return each.includes(undefined) ? undefined : each.reduce((a, b) => a! + b!, 0);
  }
  try {
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return undefined;
  }
}

/**
 * Runs one scenario module on its own (`node bench/<name>.ts`) with the settings of `npm run bench`:
 * a throwaway PostgreSQL cluster for those of `engines` that BENCH_ENGINES keeps; the result is
 * printed as JSON.
 */
export async function runAlone(run: (context: BenchContext) => Promise<object>, engines: Engine[]): Promise<never> {
  const settings = settingsFromEnv();
  const wanted = enginesFromEnv(engines).filter((engine) => engines.includes(engine));
  const pg = wanted.includes('postgres') ? await startPostgres() : undefined;
  const pgUrl = pg && !('skipped' in pg) ? pg.url : undefined;
  process.on('exit', () => {
    cleanupSync();
    stopAllSync();
  });
  try {
    const result = await run({
      pgUrl,
      engines: wanted.filter((engine) => engine === 'pglite' || pgUrl),
      ...settings,
      startAtrium: (engine, env, alongside) => startAtrium(pgUrl, engine, env, alongside),
      measure: (url, scenario) => measure(settings, url, scenario),
      measureSideBySide: (targets) => measureSideBySide(settings, targets, log),
      log,
    });
    console.log(JSON.stringify(result, null, 2));
  } finally {
    cleanupSync();
    if (pg && !('skipped' in pg)) await pg.stop();
  }
  process.exit(0);
}

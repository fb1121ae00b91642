// `npm test`: provisions what the suites need (a throwaway PostgreSQL cluster, Chromium), says what
// it had to skip, runs test/**/*.test.ts (or the files/dirs given as arguments), prints a table of
// the files by time, and ends with one plain `N passed, N failed, N skipped` line.
//
// How the run is organised, so that the two cores stay busy and no file waits behind another:
// - Each test file runs in a node process of its own (the spec report printed when it ends, the
//   TAP report read back for the totals), in as many slots as ATRIUM_TEST_CONCURRENCY says
//   (default: the cores plus one, since most files wait on sockets and timers part of the time).
// - The slowest files start first: the order is the files' last known durations
//   (test-artifacts/test-durations.json, written after every run; test/durations.json for a new
//   checkout), a file never timed counting as slow.
// - Files in a `checks/` folder (type checks, import boundaries, unused code) run in a lane of their
//   own beside the tests, at a lower CPU priority: they use what the tests leave idle.
// - Files in a `budgets/` folder time the machine itself (how fast a page becomes interactive).
//   They run after the rest, one at a time, so that no other file shares the cores while they
//   measure.
//
// It fails when a test fails, when a file leaves no report or the reports show no test, and in
// strict mode (ATRIUM_TEST_STRICT=1, what CI sets) when a capability is missing or any test or
// suite was skipped or marked todo (test/support/report.ts decides).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, setPriority, tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';
import { findChromium, probeChromium } from './support/chromium.ts';
import { onPath, startPostgres, stopAllSync } from './support/postgres.ts';
import { mergeReports, parseTap, verdict, type Report } from './support/report.ts';

const strict = process.env.ATRIUM_TEST_STRICT === '1';
const repoRoot = resolve(import.meta.dirname, '..');
/** Durations of the last runs on this checkout, and the ones shipped for a fresh one. */
const DURATIONS = join(repoRoot, 'test-artifacts', 'test-durations.json');
const SHIPPED_DURATIONS = join(repoRoot, 'test', 'durations.json');
/** Per test, as before; a whole file that runs longer than this is stopped and counted as failed. */
const TEST_TIMEOUT_MS = 120_000;
const FILE_TIMEOUT_MS = 20 * 60_000;

const running = new Set<ChildProcess>();
let runDir: string | undefined;
let signalled: NodeJS.Signals | undefined;

// 'exit' also fires after an uncaught exception or process.exit(), so nothing outlives the driver.
// (A SIGKILLed driver is covered by parent-death signals on the postmaster and the test processes.)
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  stopAllSync();
  if (runDir) rmSync(runDir, { recursive: true, force: true });
});

const signalExit: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    if (running.size === 0 || signalled) {
      // Nothing to wait for, or asked twice: leave now; the exit handler cleans up.
      process.exit(signalExit[sig]);
    }
    // Let the test files wind down and report; cleanup happens after they exit.
    signalled = sig;
    for (const child of running) child.kill(sig);
  });
}

function collectTestFiles(args: string[]): string[] {
  const found = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const p = join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile() && entry.name.endsWith('.test.ts')) found.add(p);
    }
  };
  for (const arg of args.length > 0 ? args : [join(repoRoot, 'test')]) {
    const p = resolve(arg);
    if (!existsSync(p)) throw new Error(`no such test file or directory: ${arg}`);
    if (statSync(p).isDirectory()) walk(p);
    else found.add(p);
  }
  return [...found].map((p) => relative(process.cwd(), p) || p).sort();
}

// Run dirs of runs that were SIGKILLed, and database templates no run has used for a day (see
// test/support/pglite-template.ts); a day old is safely not a run still in progress.
function sweepStaleRunDirs(): void {
  const cutoff = Date.now() - 24 * 3600_000;
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith('atrium-test-')) continue;
    const dir = join(tmpdir(), name);
    try {
      if (statSync(dir).mtimeMs < cutoff) rmSync(dir, { recursive: true, force: true });
    } catch {
      // someone else's, or gone already
    }
  }
}

function summary(r: Pick<Report, 'passed' | 'failed' | 'skipped' | 'todo'>): string {
  return `${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped${r.todo > 0 ? `, ${r.todo} todo` : ''}`;
}

/** Seconds per file (paths relative to the repository), from the last run, else as shipped. */
function knownDurations(): Record<string, number> {
  for (const file of [DURATIONS, SHIPPED_DURATIONS]) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
    } catch {
      // not written yet, or unreadable: the next one
    }
  }
  return {};
}

function rememberDurations(results: FileResult[]): void {
  // Only the repository's own files (the driver's tests run it on files of a scratch dir).
  const ours = results.map((result) => [relative(repoRoot, resolve(result.file)), result.seconds] as const).filter(([file]) => !file.startsWith('..'));
  if (ours.length === 0) return;
  const durations = knownDurations();
  for (const [file, seconds] of ours) durations[file] = Math.round(seconds * 10) / 10;
  const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
  mkdirSync(join(repoRoot, 'test-artifacts'), { recursive: true });
  writeFileSync(DURATIONS, `${JSON.stringify(sorted, null, 2)}\n`);
}

/** The throwaway cluster this run started, for the CPU it used. */
let cluster: { cpuSeconds(): number | undefined } | undefined;

async function provision(env: NodeJS.ProcessEnv): Promise<string[]> {
  const skips: string[] = [];
  const postgresReady = (async () => {
    if (process.env.ATRIUM_TEST_PG_URL) {
      console.log('postgres: using ATRIUM_TEST_PG_URL from the environment');
      return;
    }
    const t0 = performance.now();
    try {
      const pg = await startPostgres();
      if ('skipped' in pg) {
        skips.push(`PostgreSQL suites — ${pg.skipped}`);
      } else {
        cluster = pg;
        env.ATRIUM_TEST_PG_URL = pg.url;
        console.log(`postgres: throwaway cluster at ${pg.url} (initdb + start ${Math.round(performance.now() - t0)} ms)`);
      }
    } catch (err) {
      skips.push(`PostgreSQL suites — the throwaway cluster failed to start: ${(err as Error).message}`);
    }
  })();
  const chromiumReady = (async () => {
    const chromium = findChromium();
    delete env.ATRIUM_TEST_CHROMIUM;
    if (chromium) {
      const t0 = performance.now();
      const broken = await probeChromium(chromium);
      if (broken) {
        skips.push(`browser tests — ${chromium} does not work: ${broken}`);
      } else {
        env.ATRIUM_TEST_CHROMIUM = chromium;
        console.log(`chromium: ${chromium} (rendered a page headless in ${Math.round(performance.now() - t0)} ms)`);
      }
    } else {
      const why = process.env.ATRIUM_TEST_CHROMIUM
        ? `ATRIUM_TEST_CHROMIUM=${process.env.ATRIUM_TEST_CHROMIUM} does not exist`
        : 'Chromium not found (apt-get install chromium, or set ATRIUM_TEST_CHROMIUM)';
      skips.push(`browser tests — ${why}`);
    }
  })();
  // The server serves the built console; the browser tests drive it.
  await Promise.all([postgresReady, chromiumReady, ensureConsoleBuilt((line) => console.log(line))]);
  return skips.sort();
}

async function main(): Promise<number> {
  let files: string[];
  try {
    files = collectTestFiles(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (strict) env.ATRIUM_TEST_STRICT = '1';
  else delete env.ATRIUM_TEST_STRICT;

  const skips = await provision(env);
  for (const s of skips) console.log(`skipped: ${s}`);
  if (strict && skips.length > 0) {
    console.error(`ATRIUM_TEST_STRICT=1: ${skips.length} capability(ies) missing, refusing to run with skips`);
    return 1;
  }
  if (signalled) return signalExit[signalled];
  if (files.length === 0) {
    console.error('no test files found');
    console.log(summary({ passed: 0, failed: 0, skipped: 0, todo: 0 }));
    return 1;
  }

  sweepStaleRunDirs();
  runDir = mkdtempSync(join(tmpdir(), 'atrium-test-'));
  // Each test file, and each server and CLI a test starts, is a new node that compiles the same
  // modules again: a compile cache kept for the run spares most of that work (on the CLI's test
  // file, a fifth of its CPU). Tests that stand for a user's shell leave it out.
  env.NODE_COMPILE_CACHE ??= join(runDir, 'compile-cache');

  const inFolder = (file: string, folder: string) => file.split(sep).includes(folder);
  const budgets = files.filter((file) => inFolder(file, 'budgets'));
  const checks = files.filter((file) => inFolder(file, 'checks') && !budgets.includes(file));
  const tests = files.filter((file) => !budgets.includes(file) && !checks.includes(file));
  const durations = knownDurations();
  const expected = (file: string) => durations[relative(repoRoot, resolve(file))] ?? Number.POSITIVE_INFINITY;
  const slowestFirst = (list: string[]) => [...list].sort((a, b) => expected(b) - expected(a) || a.localeCompare(b));
  const slots = Math.max(1, Number(process.env.ATRIUM_TEST_CONCURRENCY) || availableParallelism() + 1);

  const started = performance.now();
  const results: FileResult[] = [];
  const queue = slowestFirst(tests);
  console.log(`running ${tests.length} test file(s) in ${slots} slot(s)${checks.length > 0 ? `, ${checks.length} check(s) beside them` : ''}`);
  await Promise.all([
    runAll(queue, slots, env, results, { priority: 0 }),
    runAll(slowestFirst(checks), 1, env, results, { priority: 10 }),
  ]);
  const mainSeconds = (performance.now() - started) / 1000;
  if (budgets.length > 0 && !signalled) {
    console.log(`\nbudgets: ${budgets.length} file(s) timing the machine, run alone`);
    await runAll([...budgets], 1, env, results, { priority: 0 });
  }
  const totalSeconds = (performance.now() - started) / 1000;

  printTable(results);
  console.log(`main phase ${mainSeconds.toFixed(0)} s, in all ${totalSeconds.toFixed(0)} s`);
  if (!signalled && results.every((result) => result.report)) rememberDurations(results);

  const reports = results.map((result) => result.report).filter((report) => report !== undefined);
  const missing = results.filter((result) => !result.report);
  const report = mergeReports(reports);
  const result = verdict({
    report: missing.length === 0 ? report : undefined,
    exitCode: results.map((r) => r.code).find((code) => code !== 0) ?? 0,
    signal: results.map((r) => r.signal).find((signal) => signal !== null) ?? null,
    strict,
  });
  console.log(summary(report));
  for (const file of missing) console.error(`${file.file} left no report (${file.signal ?? `exit ${file.code}`}${file.timedOut ? ', stopped after its time limit' : ''})`);
  for (const problem of result.problems) console.error(problem);
  return signalled ? signalExit[signalled] : result.code;
}

interface FileResult {
  file: string;
  seconds: number;
  /** User and system CPU of the file's process and what it started, when GNU time is installed. */
  cpuSeconds: number | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  report: Report | undefined;
}

/** Runs the files `slots` at a time, each as soon as a slot is free, in the order given. */
async function runAll(queue: string[], slots: number, env: NodeJS.ProcessEnv, results: FileResult[], options: { priority: number }): Promise<void> {
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined && !signalled; file = queue.shift()) {
      const result = await runFile(file, env, options.priority);
      results.push(result);
      const status = result.report ? summary(result.report) : 'no report';
      console.log(`${result.code === 0 && result.report?.failed === 0 ? '✔' : '✖'} ${file} (${result.seconds.toFixed(1)} s: ${status})\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(slots, queue.length) }, worker));
}

/** One test file in a node process of its own; its spec output printed whole when it ends. */
async function runFile(file: string, env: NodeJS.ProcessEnv, priority: number): Promise<FileResult> {
  const base = join(runDir!, relative(repoRoot, resolve(file)).replaceAll(sep, '__'));
  const tapFile = `${base}.tap`;
  const specFile = `${base}.spec`;
  const args = [
    `--test-timeout=${TEST_TIMEOUT_MS}`,
    '--test-reporter=spec',
    `--test-reporter-destination=${specFile}`,
    '--test-reporter=tap',
    `--test-reporter-destination=${tapFile}`,
    file,
  ];
  // setpriv's parent-death signal stops the file's process if this driver is SIGKILLed; 'exit'
  // handlers cannot cover that. GNU time reports the CPU the file used, with the servers, CLIs and
  // browsers it started: on a busy machine a better measure of a file's cost than its wall time.
  const setpriv = onPath('setpriv');
  const time = onPath('time');
  const cpuFile = `${base}.cpu`;
  const argv = [
    ...(setpriv ? [setpriv, '--pdeathsig=TERM', '--'] : []),
    ...(time ? [time, '--format=%U %S', `--output=${cpuFile}`] : []),
    process.execPath,
    ...args,
  ];
  const t0 = performance.now();
  // Its tests' output goes to the spec report; what the process itself prints (a crash) is kept too.
  let output = '';
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env });
  running.add(child);
  if (priority !== 0 && child.pid !== undefined) {
    try {
      setPriority(child.pid, priority);
    } catch {
      // not allowed here: it runs at the tests' priority
    }
  }
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { output += d; });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { output += d; });
  let timedOut = false;
  const limit = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, FILE_TIMEOUT_MS);
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    child.on('close', (c, s) => res({ code: c, signal: s }));
    child.on('error', (e) => {
      output += `could not run node: ${e.message}\n`;
      res({ code: 1, signal: null });
    });
  });
  clearTimeout(limit);
  running.delete(child);
  const seconds = (performance.now() - t0) / 1000;
  const spec = existsSync(specFile) ? readFileSync(specFile, 'utf8') : '';
  process.stdout.write(`▶ ${file}\n${spec}${output ? `${output.trimEnd()}\n` : ''}`);
  const report = existsSync(tapFile) ? parseTap(readFileSync(tapFile, 'utf8')) : undefined;
  return { file, seconds, cpuSeconds: cpuSecondsOf(cpuFile), code: timedOut ? 1 : code, signal, timedOut, report };
}

function cpuSecondsOf(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  // The last line: GNU time writes "Command exited with non-zero status N" above it on a failure.
  const [user, system] = readFileSync(file, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return user !== undefined && system !== undefined && Number.isFinite(user + system) ? user + system : undefined;
}

/** Every file with its wall and CPU time, slowest first: where a regression shows. */
function printTable(results: FileResult[]): void {
  if (results.length === 0) return;
  const rows = [...results].sort((a, b) => b.seconds - a.seconds);
  console.log('\n   wall     cpu  tests  file');
  for (const r of rows) {
    const tests = r.report ? String(r.report.tests) : '-';
    const cpu = r.cpuSeconds === undefined ? '-' : r.cpuSeconds.toFixed(1);
    console.log(`${r.seconds.toFixed(1).padStart(7)} ${cpu.padStart(7)}  ${tests.padStart(5)}  ${r.file}${r.report && r.report.failed === 0 && r.code === 0 ? '' : '  (failed)'}`);
  }
  const cpu = results.reduce((sum, r) => sum + (r.cpuSeconds ?? 0), 0);
  if (cpu > 0) console.log(`CPU of the test files: ${cpu.toFixed(0)} s`);
  const server = cluster?.cpuSeconds();
  if (server !== undefined) console.log(`CPU of the PostgreSQL server: ${server.toFixed(0)} s`);
}

main().then(
  (code) => {
    stopAllSync();
    process.exit(code);
  },
  (err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);

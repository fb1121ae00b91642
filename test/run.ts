// `npm test`: provisions what the suites need (a throwaway PostgreSQL cluster, Chromium), says
// what it had to skip, runs `node --test` over test/**/*.test.ts (or the files/dirs given as
// arguments) and ends with one plain `N passed, N failed, N skipped` line.
//
// Files in a `budgets/` folder (test/budgets/) time the machine itself: how fast a page becomes
// interactive, how long the browser's tasks last. They run after the rest, one at a time, so that
// no other test file shares the two cores while they measure.
//
// It fails when a test fails, when the runner leaves no report or the report shows no test, and in
// strict mode (ATRIUM_TEST_STRICT=1, what CI sets) when a capability is missing or any test or
// suite was skipped or marked todo (test/support/report.ts decides).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { ensureConsoleBuilt } from '../scripts/console-build.ts';
import { findChromium, probeChromium } from './support/chromium.ts';
import { onPath, startPostgres, stopAllSync } from './support/postgres.ts';
import { mergeReports, parseTap, verdict, type Report } from './support/report.ts';

const strict = process.env.ATRIUM_TEST_STRICT === '1';
const repoRoot = resolve(import.meta.dirname, '..');

let child: ChildProcess | undefined;
let tapDir: string | undefined;
let signalled: NodeJS.Signals | undefined;

// 'exit' also fires after an uncaught exception or process.exit(), so nothing outlives the driver.
// (A SIGKILLed driver is covered by parent-death signals on the postmaster and the runner.)
process.on('exit', () => {
  stopAllSync();
  if (tapDir) rmSync(tapDir, { recursive: true, force: true });
});

const signalExit: Record<string, number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    const running = child && child.exitCode === null && child.signalCode === null;
    if (!running || signalled) {
      // Nothing to wait for, or asked twice: leave now; the exit handler cleans up.
      if (running) child?.kill('SIGKILL');
      process.exit(signalExit[sig]);
    }
    // Let the test runner wind down and report; cleanup happens after it exits.
    signalled = sig;
    child?.kill(sig);
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

// Report dirs of runs that were SIGKILLed; a day old is safely not a run still in progress.
function sweepStaleReportDirs(): void {
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

async function main(): Promise<number> {
  let files: string[];
  try {
    files = collectTestFiles(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const skips: string[] = [];
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (strict) env.ATRIUM_TEST_STRICT = '1';
  else delete env.ATRIUM_TEST_STRICT;

  if (process.env.ATRIUM_TEST_PG_URL) {
    console.log('postgres: using ATRIUM_TEST_PG_URL from the environment');
  } else {
    const t0 = performance.now();
    try {
      const pg = await startPostgres();
      if ('skipped' in pg) {
        skips.push(`PostgreSQL suites — ${pg.skipped}`);
      } else {
        env.ATRIUM_TEST_PG_URL = pg.url;
        const ms = Math.round(performance.now() - t0);
        console.log(`postgres: throwaway cluster at ${pg.url} (initdb + start ${ms} ms)`);
      }
    } catch (err) {
      skips.push(`PostgreSQL suites — the throwaway cluster failed to start: ${(err as Error).message}`);
    }
  }

  // The server serves the built console; the browser tests drive it.
  await ensureConsoleBuilt((line) => console.log(line));

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

  sweepStaleReportDirs();
  tapDir = mkdtempSync(join(tmpdir(), 'atrium-test-'));
  // Each test file, and each server and CLI a test starts, is a new node that compiles the same
  // modules again: a compile cache kept for the run spares most of that work (on the CLI's test
  // file, a fifth of its CPU). Tests that stand for a user's shell leave it out.
  env.NODE_COMPILE_CACHE ??= join(tapDir, 'compile-cache');
  const budgets = files.filter((file) => file.split(sep).includes('budgets'));
  const phases = [
    { files: files.filter((file) => !budgets.includes(file)), concurrency: 2 },
    { files: budgets, concurrency: 1 },
  ].filter((phase) => phase.files.length > 0);
  const runs: RunResult[] = [];
  for (const [index, phase] of phases.entries()) {
    if (signalled) break;
    if (index > 0) console.log(`\nbudgets: ${phase.files.length} file(s) timing the machine, run alone`);
    runs.push(await runNodeTest(phase.files, phase.concurrency, join(tapDir, `report-${index}.tap`), env));
  }

  const reports = runs.map((run) => run.report);
  const report = reports.every((r) => r !== undefined) ? mergeReports(reports) : undefined;
  const result = verdict({
    report,
    exitCode: runs.map((run) => run.code).find((code) => code !== 0) ?? 0,
    signal: runs.map((run) => run.signal).find((signal) => signal !== null) ?? null,
    strict,
  });
  console.log(summary(report ?? mergeReports(reports.filter((r) => r !== undefined))));
  for (const problem of result.problems) console.error(problem);
  return signalled ? signalExit[signalled] : result.code;
}

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  report: Report | undefined;
}

/** One `node --test` over the files, its spec output on stdout and its TAP report read back. */
async function runNodeTest(files: string[], concurrency: number, tapFile: string, env: NodeJS.ProcessEnv): Promise<RunResult> {
  const args = [
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-timeout=120000',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=tap',
    `--test-reporter-destination=${tapFile}`,
    ...files,
  ];
  // setpriv's parent-death signal stops the runner (and so its test processes) if this driver is
  // SIGKILLed; 'exit' handlers cannot cover that.
  const setpriv = onPath('setpriv');
  const argv = setpriv ? [setpriv, '--pdeathsig=TERM', '--', process.execPath, ...args] : [process.execPath, ...args];
  const spawned = spawn(argv[0]!, argv.slice(1), { stdio: 'inherit', env });
  child = spawned;
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    spawned.on('exit', (c, s) => res({ code: c, signal: s }));
    spawned.on('error', (e) => {
      console.error(`could not run node --test: ${e.message}`);
      res({ code: 1, signal: null });
    });
  });
  return { code, signal, report: existsSync(tapFile) ? parseTap(readFileSync(tapFile, 'utf8')) : undefined };
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

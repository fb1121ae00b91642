// `npm test`: provisions what the suites need (a throwaway PostgreSQL cluster, Chromium), says
// what it had to skip, runs `node --test` over test/**/*.test.ts (or the files/dirs given as
// arguments) and ends with one plain `N passed, N failed, N skipped` line.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { findChromium } from './support/chromium.ts';
import { onPath, startPostgres, stopAllSync } from './support/postgres.ts';

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

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

// The totals come last in node's TAP output, at column 0 (subtests are indented); take the last
// occurrence so a test that happens to print "# pass 3" cannot win.
function parseTap(file: string): Counts | undefined {
  if (!existsSync(file)) return undefined;
  const totals: Record<string, number> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^# (pass|fail|cancelled|skipped|todo) (\d+)$/.exec(line);
    if (m) totals[m[1]] = Number(m[2]);
  }
  if (totals.pass === undefined) return undefined;
  // Cancelled tests (timeouts, a file that crashed) fail the run, so they count as failed.
  return { passed: totals.pass, failed: (totals.fail ?? 0) + (totals.cancelled ?? 0), skipped: totals.skipped ?? 0 };
}

function summary(c: Counts): string {
  return `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;
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

  const chromium = findChromium();
  if (chromium) {
    env.ATRIUM_TEST_CHROMIUM = chromium;
    console.log(`chromium: ${chromium}`);
  } else {
    delete env.ATRIUM_TEST_CHROMIUM;
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
    console.log('no test files found');
    console.log(summary({ passed: 0, failed: 0, skipped: 0 }));
    return process.argv.length > 2 ? 1 : 0;
  }

  sweepStaleReportDirs();
  tapDir = mkdtempSync(join(tmpdir(), 'atrium-test-'));
  const tapFile = join(tapDir, 'report.tap');
  const args = [
    '--test',
    '--test-concurrency=2',
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
  const spawned = spawn(argv[0], argv.slice(1), { stdio: 'inherit', env });
  child = spawned;
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => {
    spawned.on('exit', (c, s) => res({ code: c, signal: s }));
    spawned.on('error', (e) => {
      console.error(`could not run node --test: ${e.message}`);
      res({ code: 1, signal: null });
    });
  });

  const counts = parseTap(tapFile);
  if (counts) console.log(summary(counts));
  else {
    console.error('the test runner produced no report');
    console.log(summary({ passed: 0, failed: 1, skipped: 0 }));
  }

  if (signalled) return signalExit[signalled];
  if (signal) return 1;
  const status = code ?? 1;
  // A run whose report shows failures must not pass, whatever the runner's exit code says.
  return status === 0 && counts && counts.failed > 0 ? 1 : status;
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

// `npm start` exactly as the README has users run it, on the embedded database in a temp data
// dir: SIGTERM to the npm process (what a process manager sends) stops the server gracefully and
// leaves nothing behind, so does Ctrl-C at a terminal (the server gets SIGINT twice), and a start
// that would show the development mailbox to the network is refused. npm runs the script through a shell: if the signal stopped there, the server would live
// on as an orphan, which is what the process-group check below would find.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SERVE_NODE_FLAGS } from '../../bin/serve-flags.js';
import { SERVER_ENV } from '../../src/cli/server-env.ts';
import { seedPglite } from '../support/pglite-template.ts';
import { onPath } from '../support/postgres.ts';
import { freePort } from '../support/service.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const setpriv = onPath('setpriv');
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 30_000;

/** Resolves with 'timeout' after `ms`, without keeping the test process alive. */
const timeout = (ms: number) => sleep(ms, 'timeout' as const, { ref: false });

/** Processes of a process group that are still alive (zombies excluded), from /proc. */
function liveMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
  }
  return members;
}

async function until(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(100);
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

/**
 * `npm start` in its own process group, so that cleanup reaches whatever it started, orphans
 * included. If the test process is killed before its cleanup runs (an interrupted run), npm gets
 * SIGTERM from the parent-death signal and passes it on like any other.
 */
function npmStart(t: TestContext, settings: Record<string, string>, dataDir = mkdtempSync(join(tmpdir(), 'atrium-npm-start-'))) {
  const env: NodeJS.ProcessEnv = { ...process.env, ATRIUM_DATA_DIR: dataDir, ATRIUM_LOG_LEVEL: 'info', ...settings };
  // A user's shell: none of the outer npm's variables nor the test run's compile cache, the
  // embedded database, the default bind address.
  for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
  delete env.NODE_COMPILE_CACHE;
  delete env.DATABASE_URL;
  if (!('HOST' in settings)) delete env.HOST;
  const argv = [...(setpriv ? [setpriv, '--pdeathsig=TERM', '--'] : []), 'npm', 'start'];
  const child = spawn(argv[0]!, argv.slice(1), { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { output += d; });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { output += d; });
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => setImmediate(() => res(code))));
  const pgid = child.pid!;
  t.after(() => {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // the group is empty: nothing left to stop
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { pgid, exited, output: () => output };
}

/** A data dir with a migrated, empty database: for the tests whose point is not the first boot. */
async function migratedDataDir(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'atrium-npm-start-'));
  await seedPglite(dataDir);
  return dataDir;
}

test('SIGTERM to `npm start` stops the server gracefully and leaves no process behind', async (t) => {
  const port = await freePort();
  const health = `http://127.0.0.1:${port}/healthz`;
  const run = npmStart(t, { PORT: String(port) }, await migratedDataDir());
  let exitedEarly = false;
  void run.exited.then(() => { exitedEarly = true; });
  await until('the server answers /healthz', START_TIMEOUT_MS, async () => {
    if (exitedEarly) throw new Error(`npm start exited early:\n${run.output()}`);
    return answers(health);
  });
  assert.ok(liveMembers(run.pgid).length >= 2, 'npm and the server run in the group');

  process.kill(run.pgid, 'SIGTERM');
  const code = await Promise.race([run.exited, timeout(STOP_TIMEOUT_MS)]);
  assert.notEqual(code, 'timeout', `npm exits within ${STOP_TIMEOUT_MS} ms of SIGTERM:\n${run.output()}`);
  await until('no process of `npm start` is left', STOP_TIMEOUT_MS, () => liveMembers(run.pgid).length === 0);
  assert.equal(await answers(health), false, 'the port no longer answers');
  assert.match(run.output(), /"signal":"SIGTERM","msg":"shutting down"/, 'the server itself received SIGTERM and shut down');
  assert.equal(code, 0, run.output());
});

test('Ctrl-C at a terminal (SIGINT to the whole group, npm forwarding it again) stops the server gracefully', async (t) => {
  const port = await freePort();
  const health = `http://127.0.0.1:${port}/healthz`;
  const run = npmStart(t, { PORT: String(port) }, await migratedDataDir());
  let exitedEarly = false;
  void run.exited.then(() => { exitedEarly = true; });
  await until('the server answers /healthz', START_TIMEOUT_MS, async () => {
    if (exitedEarly) throw new Error(`npm start exited early:\n${run.output()}`);
    return answers(health);
  });

  // The server gets SIGINT twice: from the "terminal" and from npm. The second must not cut its
  // shutdown short (it did, with a one-shot handler: no log line, no drain, killed by the signal).
  // As a person does, some time after start-up: right after it, the race went the other way.
  await sleep(3000);
  process.kill(-run.pgid, 'SIGINT');
  const code = await Promise.race([run.exited, timeout(STOP_TIMEOUT_MS)]);
  assert.notEqual(code, 'timeout', `npm exits within ${STOP_TIMEOUT_MS} ms of Ctrl-C:\n${run.output()}`);
  await until('no process of `npm start` is left', STOP_TIMEOUT_MS, () => liveMembers(run.pgid).length === 0);
  assert.match(run.output(), /"signal":"SIGINT","msg":"shutting down"/, run.output());
  assert.equal(await answers(health), false, 'the port no longer answers');
});

/** The server process of a group (`node src/cli/main.ts serve`), by its command line. */
function serverOf(pgid: number): number {
  const pid = liveMembers(pgid).find((p) => {
    try {
      return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').some((arg) => arg.endsWith(join('src', 'cli', 'main.ts')));
    } catch {
      return false;
    }
  });
  assert.ok(pid, 'the server process is in the group');
  return pid;
}

/** Resident and peak resident memory of a process, in MB (Linux /proc). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

// Generous bounds, about 35–50 % over what was measured on a quiet machine on 2026-11-26 (245–246 MB
// idle on a restart, 249–253 MB after the first run, see docs/benchmarks.md "Memory of the embedded
// default"; with the old 305–330 MB the full suite's own load read up to 410 MB on a restart); they
// catch a regression such as the young generation growing back to V8's default (no
// --max-semi-space-size: about 100 MB more), glibc keeping start-up's freed blocks (no
// MALLOC_MMAP_THRESHOLD_: about 60 MB more on a restart, 130–170 MB after a first run), PGlite's
// default 128 MB of shared buffers coming back, code loaded at start that only some requests need,
// or the first run's cluster creation staying resident (730 MB before).
const IDLE_RSS_BOUND_MB = { 'first run': 380, restart: 330 } as const;

// The target for the peak on a restart, as the bound: the peak is one event (V8 optimising
// PostgreSQL's SQL parser took about 600 MB, src/platform/db/pglite-cold-parser.ts), not load, so
// a regression lands far above it (760–770 MB) and today's figure far below (271–275 MB alone and
// in the full suite, 2026-11-26). Read a while after the server answers: that compile ran in the
// background for about two seconds after PGlite's start.
const RESTART_PEAK_BOUND_MB = 500;
const PEAK_READ_AFTER_MS = 8_000;

// Idle is what the process settles to, not a figure at a fixed moment: V8 hands start-up's garbage
// back to the system some seconds after allocation calms down (its memory reducer), later when the
// machine is busy. Here: 383 → 344 MB 10 s after answering on a quiet machine, 458 → 385 MB after
// 7 s at load 3; CI's full suite once read 614 MB at a fixed 3 s. A regression stays above the bound
// for the whole window, so waiting for the lowest figure does not hide one.
const IDLE_SETTLE_MS = 30_000;

/** The lowest resident memory within IDLE_SETTLE_MS, sampled every 500 ms; stops once it is within `bound`. */
async function settledMemory(pid: number, bound: number): Promise<{ rss: number; afterMs: number }> {
  const start = Date.now();
  let least = { rss: memoryOf(pid).rss, afterMs: 0 };
  while (least.rss > bound && Date.now() - start < IDLE_SETTLE_MS) {
    await sleep(500);
    const { rss } = memoryOf(pid);
    if (rss < least.rss) least = { rss, afterMs: Date.now() - start };
  }
  return least;
}

test('the embedded default stays small: idle resident memory after its first run and after a restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'atrium-npm-start-'));
  const figures: string[] = [];
  for (const phase of ['first run', 'restart'] as const) {
    const port = await freePort();
    const run = npmStart(t, { PORT: String(port) }, dataDir);
    await until('the server answers /healthz', START_TIMEOUT_MS, () => answers(`http://127.0.0.1:${port}/healthz`));
    const answeredAt = Date.now();
    const server = serverOf(run.pgid);
    // package.json's "start" cannot import the list, so it spells the flags out: this keeps them in step.
    const argv = readFileSync(`/proc/${server}/cmdline`, 'utf8').split('\0');
    for (const flag of SERVE_NODE_FLAGS) assert.ok(argv.includes(flag), `npm start runs the server with ${flag} (bin/serve-flags.js): ${argv.join(' ')}`);
    // The server runs itself again in the environment it wants (src/cli/server-env.ts).
    const environ = readFileSync(`/proc/${server}/environ`, 'utf8').split('\0');
    for (const [name, value] of Object.entries(SERVER_ENV)) assert.ok(environ.includes(`${name}=${value}`), `the server runs with ${name}=${value} (src/cli/server-env.ts)`);
    const idle = await settledMemory(server, IDLE_RSS_BOUND_MB[phase]);
    await sleep(Math.max(0, answeredAt + PEAK_READ_AFTER_MS - Date.now()));
    const { peak } = memoryOf(server);
    figures.push(`${phase}: ${idle.rss} MB resident when idle (${idle.afterMs} ms after answering), ${peak} MB at peak`);
    assert.ok(
      idle.rss <= IDLE_RSS_BOUND_MB[phase],
      `${phase}: ${idle.rss} MB resident when idle, the least in ${IDLE_SETTLE_MS} ms after answering (bound ${IDLE_RSS_BOUND_MB[phase]} MB)`,
    );
    if (phase === 'restart') assert.ok(peak <= RESTART_PEAK_BOUND_MB, `restart: ${peak} MB resident at peak (bound ${RESTART_PEAK_BOUND_MB} MB)`);
    process.kill(run.pgid, 'SIGTERM');
    assert.notEqual(await Promise.race([run.exited, timeout(STOP_TIMEOUT_MS)]), 'timeout');
    await until('no process of `npm start` is left', STOP_TIMEOUT_MS, () => liveMembers(run.pgid).length === 0);
  }
  t.diagnostic(figures.join('; '));
});

test('`HOST=0.0.0.0 npm start` with the development mailbox is refused, saying why and what to set', async (t) => {
  const port = await freePort();
  const run = npmStart(t, { PORT: String(port), HOST: '0.0.0.0' });
  const code = await Promise.race([run.exited, timeout(START_TIMEOUT_MS)]);
  assert.notEqual(code, 'timeout', `npm start exits:\n${run.output()}`);
  assert.notEqual(code, 0);
  assert.match(run.output(), /HOST=0\.0\.0\.0 serves the network, but the development mailbox \(\/dev\/mail\) is on/);
  assert.match(run.output(), /Set ATRIUM_SMTP_URL to send real mail, or HOST=127\.0\.0\.1/);
  assert.equal(await answers(`http://127.0.0.1:${port}/healthz`), false, 'nothing listens');
});

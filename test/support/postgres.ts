// Throwaway PostgreSQL cluster for the test run: initdb into a temp dir, start a postmaster on a
// free 127.0.0.1 port with durability turned off, create `atrium_test`, hand back its URL.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync, statSync, chownSync, appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import postgres from 'postgres';

export interface PostgresHandle {
  url: string;
  /** CPU seconds the server has used so far, its finished backends included (Linux /proc), if known. */
  cpuSeconds(): number | undefined;
  stop(): Promise<void>;
  /** For process 'exit' handlers, where nothing asynchronous runs any more. */
  stopSync(): void;
}

export type StartResult = PostgresHandle | { skipped: string };

const NOT_FOUND = 'PostgreSQL server binaries not found (apt-get install postgresql)';
const SERVER_BINARIES = ['initdb', 'pg_ctl', 'postgres'];
const START_TIMEOUT_MS = 30_000;

// Every cluster from the moment its dir exists, so an exit handler can tear down even one that
// was interrupted half-way through starting.
const live = new Set<() => void>();

/** Synchronously stops every cluster this process started; safe to call from process.on('exit'). */
export function stopAllSync(): void {
  for (const stop of [...live]) stop();
}

function hasServerBinaries(dir: string): boolean {
  return SERVER_BINARIES.every((b) => existsSync(join(dir, b)));
}

/** ATRIUM_TEST_PG_BIN, else the highest /usr/lib/postgresql/<ver>/bin, else PATH. */
export function findPostgresBin(): string | undefined {
  const fromEnv = process.env.ATRIUM_TEST_PG_BIN;
  if (fromEnv) return hasServerBinaries(fromEnv) ? fromEnv : undefined;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => /^\d+(\.\d+)*$/.test(v) && hasServerBinaries(join(root, v, 'bin')))
      .sort((a, b) => compareVersions(b, a));
    if (versions.length > 0) return join(root, versions[0], 'bin');
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && hasServerBinaries(dir)) return dir;
  }
  return undefined;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function onPath(cmd: string): string | undefined {
  for (const dir of ['/usr/bin', '/usr/sbin', '/bin', '/sbin', ...(process.env.PATH ?? '').split(delimiter)]) {
    if (dir && existsSync(join(dir, cmd))) return join(dir, cmd);
  }
  return undefined;
}

interface Runner {
  /** argv prefix that runs a command as the cluster owner (empty when we already are). */
  prefix(opts?: { dieWithParent?: boolean }): string[];
  owner?: { uid: number; gid: number };
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

// PostgreSQL refuses to run as root, so as root everything runs as the `postgres` system user.
// setpriv is preferred because it execs in place, which lets it also arm a parent-death signal:
// if this driver is SIGKILLed, the postmaster gets SIGQUIT (immediate shutdown) instead of
// lingering.
function makeRunner(): Runner | { skipped: string } {
  const setpriv = onPath('setpriv');
  const isRoot = process.getuid?.() === 0;
  if (!isRoot) {
    return {
      prefix: (o) => (o?.dieWithParent && setpriv ? [setpriv, '--pdeathsig=QUIT', '--'] : []),
    };
  }
  const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (id.status !== 0 || gid.status !== 0) {
    return { skipped: 'running as root but there is no `postgres` system user to own the cluster' };
  }
  const owner = { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
  if (setpriv) {
    const base = [setpriv, '--reuid=postgres', '--regid=postgres', '--init-groups'];
    return { owner, prefix: (o) => (o?.dieWithParent ? [...base, '--pdeathsig=QUIT', '--'] : [...base, '--']) };
  }
  const runuser = onPath('runuser');
  if (runuser) return { owner, prefix: () => [runuser, '-u', 'postgres', '--'] };
  // su runs a shell string; the shell gets the caller's argv as $0 $@, so nothing needs quoting.
  return { owner, prefix: () => ['su', '-s', '/bin/sh', '-c', '"$0" "$@"', '--', 'postgres'] };
}

function runSync(runner: Runner, argv: string[], what: string): void {
  const full = [...runner.prefix(), ...argv];
  const r = spawnSync(full[0], full.slice(1), { encoding: 'utf8', cwd: '/' });
  if (r.error || r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
    throw new Error(`${what} failed (${r.error?.message ?? `exit ${r.status}`}): ${argv.map(shellQuote).join(' ')}\n${out}`);
  }
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

// As root the cluster owner must reach the dir; a private TMPDIR (e.g. under /root) would not do.
function makeClusterDir(runner: Runner): string {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-pg-'));
  if (!runner.owner) return dir;
  chownSync(dir, runner.owner.uid, runner.owner.gid);
  const probe = [...runner.prefix(), 'test', '-w', dir];
  if (spawnSync(probe[0], probe.slice(1), { stdio: 'ignore', cwd: '/' }).status === 0) return dir;
  rmSync(dir, { recursive: true, force: true });
  const fallback = mkdtempSync('/tmp/atrium-pg-');
  chownSync(fallback, runner.owner.uid, runner.owner.gid);
  return fallback;
}

// A SIGKILLed driver takes its postmaster with it (parent-death signal) but cannot remove the
// cluster dir. Sweep such leftovers: no postmaster.pid, and old enough not to be a concurrent
// run still inside initdb.
function sweepStaleClusters(): void {
  const cutoff = Date.now() - 10 * 60_000;
  for (const parent of new Set([tmpdir(), '/tmp'])) {
    let names: string[];
    try {
      names = readdirSync(parent).filter((n) => n.startsWith('atrium-pg-'));
    } catch {
      continue;
    }
    for (const name of names) {
      const dir = join(parent, name);
      try {
        if (statSync(dir).mtimeMs > cutoff || existsSync(join(dir, 'data', 'postmaster.pid'))) continue;
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // not ours to remove (permissions) or already gone
      }
    }
  }
}

export async function startPostgres(): Promise<StartResult> {
  const bin = findPostgresBin();
  if (!bin) return { skipped: NOT_FOUND };
  const runner = makeRunner();
  if ('skipped' in runner) return runner;
  sweepStaleClusters();

  const dir = makeClusterDir(runner);
  let child: ChildProcess | undefined;
  let stopped = false;
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'postgres.log');
  const pgCtlStop = () => {
    if (existsSync(join(dataDir, 'postmaster.pid'))) {
      const argv = [...runner.prefix(), join(bin, 'pg_ctl'), 'stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '30'];
      spawnSync(argv[0], argv.slice(1), { stdio: 'ignore', cwd: '/' });
    }
    if (child && child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    live.delete(stopSync);
    pgCtlStop();
    rmSync(dir, { recursive: true, force: true });
  };
  live.add(stopSync);

  try {
    runSync(
      runner,
      [join(bin, 'initdb'), '-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
      'initdb',
    );
    // Written by the cluster owner's initdb; appending as root keeps the file's owner.
    appendFileSync(
      join(dataDir, 'postgresql.conf'),
      [
        '',
        '# atrium test harness',
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        'max_connections = 300',
        'logging_collector = off',
        '',
      ].join('\n'),
    );

    // A free port can be taken between probing and binding; retry with a fresh one.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const started = await launch(runner, bin, dataDir, logFile, port);
      child = started.child;
      if (started.ok) {
        await createDatabase(port);
        const url = `postgres://postgres@127.0.0.1:${port}/atrium_test`;
        const postmaster = child.pid;
        return {
          url,
          cpuSeconds: () => (postmaster === undefined ? undefined : processCpuSeconds(postmaster)),
          stopSync,
          async stop() {
            stopSync();
          },
        };
      }
      if (attempt >= 3) throw new Error(`PostgreSQL did not start: ${started.reason}\n${tail(logFile)}`);
    }
  } catch (err) {
    stopSync();
    throw err;
  }
}

/**
 * A process's CPU time with that of the children it has waited for (a postmaster's backends), from
 * /proc/<pid>/stat: utime, stime, cutime and cstime, in clock ticks of 1/100 s on Linux.
 */
function processCpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / 100;
  } catch {
    return undefined;
  }
}

async function launch(
  runner: Runner,
  bin: string,
  dataDir: string,
  logFile: string,
  port: number,
): Promise<{ ok: true; child: ChildProcess } | { ok: false; child: ChildProcess; reason: string }> {
  const logFd = openSync(logFile, 'a');
  const argv = [...runner.prefix({ dieWithParent: true }), join(bin, 'postgres'), '-D', dataDir, '-p', String(port)];
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', logFd, logFd], cwd: '/' });
  closeSync(logFd);
  // The driver must be able to exit even if stop() is forgotten; the exit handler cleans up.
  child.unref();
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `postmaster exited (${signal ?? `code ${code}`})`;
  });
  child.on('error', (e) => {
    exited = `could not spawn postgres: ${e.message}`;
  });

  const isready = join(bin, 'pg_isready');
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited) return { ok: false, child, reason: exited };
    if (await acceptsConnections(isready, port)) return { ok: true, child };
    await sleep(50);
  }
  child.kill('SIGKILL');
  return { ok: false, child, reason: `not accepting connections after ${START_TIMEOUT_MS} ms` };
}

async function acceptsConnections(isready: string, port: number): Promise<boolean> {
  if (existsSync(isready)) {
    const r = spawnSync(isready, ['-q', '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', 'postgres', '-t', '1']);
    return r.status === 0;
  }
  const sql = postgres({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 1, connect_timeout: 1, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function createDatabase(port: number): Promise<void> {
  const sql = postgres({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 1, onnotice: () => {} });
  try {
    await sql.unsafe('create database atrium_test');
  } finally {
    await sql.end({ timeout: 5 });
  }
}

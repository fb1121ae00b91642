// The `atrium` command as an operator runs it: bootstrap, serve, the data-dir lock, graceful
// shutdown and config errors. Embedded database (PGlite) in temp data dirs, loopback only.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { seedPglite } from '../support/pglite-template.ts';
import { pgUrl } from '../support/env.ts';
import { freePort, TEST_SECRET_KEY } from '../support/service.ts';

const MAIN = resolve(import.meta.dirname, '../../src/cli/main.ts');
const TIMEOUT_MS = 90_000;

const children = new Set<ChildProcess>();
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-cli-'));
  dirs.push(dir);
  return dir;
}

function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', ATRIUM_LOG_LEVEL: 'info', ...extra };
  // The embedded engine, whatever the surrounding environment says, unless the test names a server.
  if (!('DATABASE_URL' in extra)) delete env.DATABASE_URL;
  return env;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN, ...args], { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { out.stdout += d; });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { out.stderr += d; });
  const done = new Promise<Run>((resolveRun) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      // Let the pipes drain.
      setImmediate(() => resolveRun({ code, signal, ...out }));
    });
  });
  return { child, out, done };
}

async function run(args: string[], env: Record<string, string>): Promise<Run> {
  const { child, done } = start(args, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
  try {
    return await done;
  } finally {
    clearTimeout(timer);
  }
}

/** Starts `serve` and waits until it answers /healthz. */
async function serve(dataDir: string) {
  const port = await freePort();
  const proc = start(['serve'], { ATRIUM_DATA_DIR: dataDir, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + TIMEOUT_MS;
  let exited: Run | undefined;
  void proc.done.then((r) => { exited = r; });
  while (Date.now() < deadline) {
    if (exited) throw new Error(`serve exited early (${exited.code}): ${exited.stderr}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { ...proc, url, port };
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  proc.child.kill('SIGKILL');
  throw new Error(`serve did not start: ${proc.out.stderr}`);
}

after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await sleep(100);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('atrium CLI [pglite]', () => {
  test('bootstrap --json prints only the credentials, idempotently; a wrong password fails', async () => {
    const dataDir = tempDir();
    const args = ['bootstrap', '--email', 'admin@example.test', '--password', 'correct horse battery', '--project', 'Demo', '--json'];
    const first = await run(args, { ATRIUM_DATA_DIR: dataDir });
    assert.equal(first.code, 0, first.stderr);
    const lines = first.stdout.trim().split('\n');
    assert.equal(lines.length, 1, `stdout is one JSON line: ${first.stdout}`);
    const result = JSON.parse(lines[0]!);
    assert.deepEqual(Object.keys(result).sort(), ['api_key', 'project_id', 'user_id', 'user_token']);
    assert.match(result.api_key, /^ma-/);
    assert.match(result.user_token, /^atp_/);

    const second = await run(args, { ATRIUM_DATA_DIR: dataDir });
    assert.equal(second.code, 0, second.stderr);
    const again = JSON.parse(second.stdout);
    assert.equal(again.user_id, result.user_id);
    assert.equal(again.project_id, result.project_id);
    assert.notEqual(again.api_key, result.api_key);
    assert.notEqual(again.user_token, result.user_token);

    const wrong = await run(['bootstrap', '--email', 'admin@example.test', '--password', 'not the password', '--project', 'Demo', '--json'], { ATRIUM_DATA_DIR: dataDir });
    assert.notEqual(wrong.code, 0);
    assert.equal(wrong.stdout, '');
    assert.match(wrong.stderr, /already exists with a different password/);

    const missing = await run(['bootstrap', '--email', 'x@example.test', '--json'], { ATRIUM_DATA_DIR: dataDir });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /--password/);

    // The credentials work against the server on that data dir.
    const server = await serve(dataDir);
    try {
      for (const token of [result.api_key, again.api_key, result.user_token]) {
        const r = await fetch(`${server.url}/accounts/projects/${result.project_id}`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(r.status, 200);
        assert.equal(((await r.json()) as { name: string }).name, 'Demo');
      }
      for (let i = 0; i < 100 && !/Atrium is listening/.test(server.out.stdout); i++) await sleep(50);
      assert.match(server.out.stdout, /Atrium is listening/);
      // The socket's address is not the URL to use: both lines name the public URL and its setting.
      assert.match(server.out.stdout, /Server listening at http:\/\/127\.0\.0\.1:\d+; use http:\/\/localhost:\d+ \(ATRIUM_PUBLIC_URL\) everywhere/);
      assert.match(server.out.stdout, /use http:\/\/localhost:\d+ \(ATRIUM_PUBLIC_URL\) as its URL everywhere/);
      assert.doesNotMatch(server.out.stdout, /No account yet/, 'no setup link once there is an admin');
      // The embedded database is locked while the server runs: bootstrap refuses clearly.
      const locked = await run(args, { ATRIUM_DATA_DIR: dataDir });
      assert.notEqual(locked.code, 0);
      assert.equal(locked.stdout, '');
      assert.match(locked.stderr, /Another Atrium process \(pid \d+\)/);
    } finally {
      server.child.kill('SIGTERM');
      await server.done;
    }
  });

  test('keys reencrypt moves the embedded key file\'s values to a new ATRIUM_SECRET_KEY, after which the old key is not needed', async () => {
    const dataDir = tempDir();
    await seedPglite(dataDir);
    const columns = (r: Run) => (JSON.parse(r.stdout) as { dry_run: boolean; columns: { column: string; moved: number; current: number; unreadable: number }[] });
    // Nothing to move while the key has not changed (the first open sealed a signing key under the generated key file).
    const unchanged = await run(['keys', 'reencrypt', '--dry-run'], { ATRIUM_DATA_DIR: dataDir });
    assert.equal(unchanged.code, 0, unchanged.stderr);
    assert.equal(columns(unchanged).dry_run, true);
    assert.ok(columns(unchanged).columns.every((c) => c.moved === 0 && c.unreadable === 0), unchanged.stdout);
    assert.match(unchanged.stderr, /ATRIUM_SECRET_KEY_FALLBACKS is empty, so nothing can move/);

    const old = readFileSync(join(dataDir, 'secret.key'), 'utf8').trim();
    const fresh = Buffer.alloc(32, 42).toString('base64');
    const withoutFallback = await run(['keys', 'reencrypt'], { ATRIUM_DATA_DIR: dataDir, ATRIUM_SECRET_KEY: fresh });
    assert.equal(withoutFallback.code, 2, 'a setting that cannot be used');
    assert.match(withoutFallback.stderr, /cannot be decrypted with this secret key.*ATRIUM_SECRET_KEY_FALLBACKS/s, 'the new key alone cannot open the signing keys, and says what to do');

    const moved = await run(['keys', 'reencrypt'], { ATRIUM_DATA_DIR: dataDir, ATRIUM_SECRET_KEY: fresh, ATRIUM_SECRET_KEY_FALLBACKS: old });
    assert.equal(moved.code, 0, moved.stderr);
    const signing = columns(moved).columns.find((c) => c.column === 'signing_keys.private_jwk_encrypted')!;
    assert.equal(signing.moved, 1, moved.stdout);
    assert.match(moved.stderr, /^atrium: signing_keys\.private_jwk_encrypted: 1 read, 1 sealed again$/m, 'a progress line per column, on stderr');
    assert.doesNotMatch(moved.stderr, /is empty/);

    const done = await run(['keys', 'reencrypt', '--dry-run'], { ATRIUM_DATA_DIR: dataDir, ATRIUM_SECRET_KEY: fresh });
    assert.equal(done.code, 0, done.stderr);
    assert.ok(columns(done).columns.every((c) => c.moved === 0 && c.unreadable === 0), done.stdout);
  });

  test('serve prints the one-time setup link, holds the data dir, and stops on SIGTERM', async () => {
    // A migrated database with no account yet (the first boot of an empty directory is the test above's).
    const dataDir = tempDir();
    await seedPglite(dataDir);
    const server = await serve(dataDir);
    try {
      // Logged just after the server answers, once it has found the database empty.
      for (let i = 0; i < 100 && !/No account yet/.test(server.out.stdout); i++) await sleep(50);
      assert.match(server.out.stdout, /No account yet: open http:\/\/localhost:\d+\/console\/setup\?token=[\w-]{43} to create the first admin/);
      assert.match(server.out.stdout, /atrium bootstrap/);
      assert.equal((await fetch(`${server.url}/readyz`)).status, 200);

      const port = await freePort();
      const second = await run(['serve'], { ATRIUM_DATA_DIR: dataDir, PORT: String(port) });
      assert.notEqual(second.code, 0);
      assert.match(second.stderr, /Another Atrium process \(pid \d+\) is using the embedded database/);
      assert.match(second.stderr, /DATABASE_URL/);
      // The first server is unharmed.
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    } finally {
      server.child.kill('SIGTERM');
    }
    const stopped = await Promise.race([server.done, sleep(30_000).then(() => undefined)]);
    assert.ok(stopped, 'serve exits within 30 s of SIGTERM');
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(stopped.signal, null);
    // The lock is released: the data dir can be served again.
    const restarted = await serve(dataDir);
    restarted.child.kill('SIGINT');
    assert.equal((await restarted.done).code, 0);
  });

  test('a bad setting exits with a message naming it', async () => {
    const settings = [['PORT', 'abc'], ['PORT', '70000'], ['ATRIUM_PUBLIC_URL', 'not a url'], ['ATRIUM_LOG_LEVEL', 'loud']] as const;
    const runs = await Promise.all(settings.map(([name, value]) => run(['serve'], { ATRIUM_DATA_DIR: tempDir(), [name]: value })));
    for (const [i, [name, value]] of settings.entries()) {
      const r = runs[i]!;
      assert.notEqual(r.code, 0, `${name}=${value}`);
      assert.match(r.stderr, new RegExp(`\\b${name}\\b`), `${name}=${value}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
    const unknown = await run(['frobnicate'], {});
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /unknown command "frobnicate"/);
  });

  test('a PostgreSQL server that cannot be used: exit 1 with a sentence naming it, no stack, no password', async () => {
    const urls = [`postgres://atrium:hunter2@127.0.0.1:${await freePort()}/atrium`];
    // A database that does not exist on a server that answers.
    if (pgUrl) urls.push(Object.assign(new URL(pgUrl), { pathname: '/no_such_database' }).href);
    for (const url of urls) {
      const r = await run(['serve'], { ATRIUM_DATA_DIR: tempDir(), DATABASE_URL: url, ATRIUM_SECRET_KEY: TEST_SECRET_KEY });
      assert.equal(r.code, 1, r.stderr);
      const { host, pathname } = new URL(url);
      assert.match(r.stderr, new RegExp(`^atrium: cannot use PostgreSQL at ${host}${pathname}: .+ Check DATABASE_URL`), r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.doesNotMatch(r.stderr, /hunter2/);
    }
  });

  test('every command answers --help (and -h) with its usage and does nothing else', async () => {
    const dataDir = tempDir();
    const commands = ['serve', 'bootstrap', 'keys', 'billing', 'login', 'whoami', 'token', 'logout'];
    // Every command with --help; the short flag, read by the same check, for the two that would
    // otherwise start something (a server, a browser sign-in).
    const asked = [...commands.map((name) => [name, '--help']), ['serve', '-h'], ['login', '-h']] as const;
    const runs = await Promise.all(asked.map(([name, flag]) => run([name, flag], { ATRIUM_DATA_DIR: dataDir, ATRIUM_CONFIG_DIR: dataDir })));
    for (const [i, r] of runs.entries()) {
      const [name, flag] = asked[i]!;
      assert.equal(r.code, 0, `${name} ${flag}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^Usage: atrium ${name}\\b`), `${name} ${flag}`);
      assert.equal(r.stderr, '', `${name} ${flag}`);
    }
    for (const i of [0, 8]) {
      assert.match(runs[i]!.stdout, /Run the API/);
      assert.doesNotMatch(runs[i]!.stdout + runs[i]!.stderr, /listening|setup/i, 'serve --help starts no server');
    }
    assert.match(runs[4]!.stdout, /--port N/, 'login names its options');
    assert.match(runs[9]!.stdout, /--port N/);
  });

  test('a command run on the server\'s host checks its arguments before loading the server', async () => {
    const dataDir = tempDir();
    const env = { ATRIUM_DATA_DIR: dataDir, ATRIUM_CONFIG_DIR: dataDir };
    const timed = async (args: string[]) => {
      const started = performance.now();
      const r = await run(args, env);
      return { ...r, ms: performance.now() - started };
    };
    // The usage text alone is the floor; loading the server's modules costs several times that.
    // Each pair is timed back to back, so both see the same load on the machine.
    for (const args of [['bootstrap', '--email', 'x@example.test'], ['keys'], ['keys', 'reencrypt', '--bogus'], ['factors'], ['billing', 'verify', '--bogus']]) {
      const help = await timed(['help']);
      const wrong = await timed(args);
      assert.equal(wrong.code, 2, `${args.join(' ')}: ${wrong.stderr}`);
      assert.notEqual(wrong.stderr, '', `${args.join(' ')} says what is wrong`);
      assert.ok(wrong.ms < help.ms * 4 + 400, `${args.join(' ')} took ${wrong.ms.toFixed(0)} ms against ${help.ms.toFixed(0)} ms for help`);
    }
  });
});

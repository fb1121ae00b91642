// Podman for the image test, as it works on these machines without a registry: Debian root
// filesystems made with mmdebstrap (cached between runs) imported as base images, runc and cgroupfs
// (the sandbox refuses crun's rlimits and its cgroup handling), and a store of the run's own, so
// that everything the test makes goes away with one directory and nothing of another user's is
// touched. Every command is bounded in time and fails with its output.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPath } from '../support/postgres.ts';

const started = performance.now();

/** A progress line, with the seconds since the test file started. */
export function progress(line: string): void {
  process.stdout.write(`[container ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; rejects when it outlives `timeoutMs` or, unless `allowFailure`, exits non-zero. */
export function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs: number; allowFailure?: boolean; input?: string; cwd?: string }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    // A command that exits without reading its input closes the pipe (EPIPE): its exit status,
    // not the write, says whether it worked.
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
    const shown = () => `${command} ${args.join(' ')}`.slice(0, 300);
    const tail = () => `${stdout}\n${stderr}`.trim().split('\n').slice(-40).join('\n');
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`timed out after ${options.timeoutMs / 1000} s: ${shown()}\n${tail()}`));
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${shown()}: ${error.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0 && !options.allowFailure) reject(new Error(`exit ${code}: ${shown()}\n${tail()}`));
      else resolve({ code, stdout, stderr });
    });
  });
}

/** The Debian packages the test needs that are not installed. */
export function missingTools(): string[] {
  const missing = ['podman', 'runc', 'mmdebstrap', 'podman-compose'].filter((tool) => !onPath(tool));
  // The CNI plugin by which compose services find each other by name.
  if (!existsSync('/usr/lib/cni/dnsname')) missing.push('golang-github-containernetworking-plugin-dnsname');
  return missing;
}

export interface Podman {
  /** The environment that points podman and podman-compose at the private store. */
  env: NodeJS.ProcessEnv;
  podman(args: string[], options?: { timeoutMs?: number; allowFailure?: boolean; input?: string }): Promise<Ran>;
  /** Removes every container, volume and image of the store, then the store. */
  destroy(): Promise<void>;
}

/**
 * Removes every container (stopped at once) and volume of a store, then the store with its images:
 * deleting the directory is much faster than `podman rmi` here, and nothing is mounted from it once
 * the containers are gone. Should something still be, `podman rmi` unmounts it first.
 */
async function destroyStore(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const podman = async (args: string[], timeoutMs: number) => {
    const t0 = performance.now();
    await run('podman', args, { env, timeoutMs, allowFailure: true });
    progress(`podman ${args.slice(0, 2).join(' ')}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  };
  await podman(['rm', '--all', '--force', '--volumes', '--time', '0'], 120_000);
  await podman(['volume', 'prune', '--force'], 60_000);
  try {
    const t0 = performance.now();
    rmSync(dir, { recursive: true, force: true });
    progress(`removed the store with its images: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } catch (error) {
    progress(`removing ${dir}: ${(error as Error).message}; removing its images first`);
    await podman(['rmi', '--all', '--force'], 300_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Stores that a killed run left behind (hours old, so not a run still going), with their containers. */
async function sweepStaleStores(): Promise<void> {
  const cutoff = Date.now() - 3 * 3600_000;
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith('atrium-podman-'))) {
    const dir = join(tmpdir(), name);
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (!stat || stat.mtimeMs > cutoff || !existsSync(join(dir, 'storage.conf'))) continue;
    progress(`removing the store a killed run left: ${dir}`);
    await destroyStore(dir, { ...process.env, CONTAINERS_CONF: join(dir, 'containers.conf'), CONTAINERS_STORAGE_CONF: join(dir, 'storage.conf') });
  }
}

/**
 * A podman store of the test's own in a temporary directory. Overlay when the kernel lets podman
 * mount it here (containers then start without copying their image), else vfs, which copies every
 * layer and every container's root filesystem; ATRIUM_CONTAINER_STORAGE_DRIVER chooses.
 */
export async function privatePodman(): Promise<Podman> {
  await sweepStaleStores();
  const dir = mkdtempSync(join(tmpdir(), 'atrium-podman-'));
  writeFileSync(join(dir, 'containers.conf'), [
    '[containers]',
    'default_ulimits = []',
    '[engine]',
    'runtime = "runc"',
    'cgroup_manager = "cgroupfs"',
    `tmp_dir = "${join(dir, 'run', 'libpod')}"`,
    '',
  ].join('\n'));
  const env = { ...process.env, CONTAINERS_CONF: join(dir, 'containers.conf'), CONTAINERS_STORAGE_CONF: join(dir, 'storage.conf') };
  const podman: Podman['podman'] = (args, options = {}) => run('podman', args, { env, timeoutMs: options.timeoutMs ?? 60_000, ...options });
  const useDriver = (driver: string) => writeFileSync(join(dir, 'storage.conf'), [
    '[storage]',
    `driver = "${driver}"`,
    `graphroot = "${join(dir, 'graph', driver)}"`,
    `runroot = "${join(dir, 'run', 'storage')}"`,
    '',
  ].join('\n'));
  const destroy = () => destroyStore(dir, env);
  const chosen = process.env.ATRIUM_CONTAINER_STORAGE_DRIVER;
  useDriver(chosen ?? 'overlay');
  if (!chosen) {
    const probe = await podman(['info', '--format', '{{.Store.GraphDriverName}}'], { allowFailure: true });
    if (probe.code !== 0 || probe.stdout.trim() !== 'overlay') {
      progress(`overlay storage unavailable (${`${probe.stdout}${probe.stderr}`.trim().split('\n').at(-1)}): using vfs`);
      useDriver('vfs');
    }
  }
  try {
    const driver = (await podman(['info', '--format', '{{.Store.GraphDriverName}}'])).stdout.trim();
    progress(`podman store of this run: ${dir} (${driver})`);
  } catch (error) {
    await destroy();
    throw error;
  }
  return { env, podman, destroy };
}

const CACHE_DIR = process.env.ATRIUM_CONTAINER_CACHE ?? '/var/tmp/atrium-container-cache';
const CACHE_DAYS = 30;

/**
 * A Debian root filesystem as a tarball, made with mmdebstrap and kept in ATRIUM_CONTAINER_CACHE
 * (default /var/tmp/atrium-container-cache) for CACHE_DAYS, named by what it contains.
 */
export async function debianRootfs(suite: string, packages: string[]): Promise<string> {
  const key = createHash('sha256').update(`${suite} minbase ${packages.join(',')}`).digest('hex').slice(0, 12);
  const tarball = join(CACHE_DIR, `debian-${suite}-${key}.tar`);
  const fresh = statSync(tarball, { throwIfNoEntry: false });
  if (fresh && Date.now() - fresh.mtimeMs < CACHE_DAYS * 86_400_000) {
    progress(`rootfs ${suite} (${packages.join(', ')}): cached ${tarball}`);
    return tarball;
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${tarball}.${process.pid}.partial`;
  const t0 = performance.now();
  progress(`rootfs ${suite} (${packages.join(', ')}): mmdebstrap into ${tarball}`);
  try {
    await run('mmdebstrap', ['--variant=minbase', '--format=tar', `--include=${packages.join(',')}`, suite, partial], { timeoutMs: 10 * 60_000 });
    renameSync(partial, tarball);
  } finally {
    if (existsSync(partial)) rmSync(partial, { recursive: true, force: true });
  }
  progress(`rootfs ${suite}: made in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  return tarball;
}

// The production image and the compose files, built and run with podman as an operator runs them
// (docs/operations.md, "Containers"). The image is built on a Debian base made here and holds the
// production packages only; on PostgreSQL, with a read-only root, it becomes ready, and the official
// SDK (@meshagent/meshagent 0.39.9) creates a room and connects through it; the server runs as the
// image's non-root user, drains on SIGTERM and exits 0, and started again it has its data. On the
// embedded database it refuses the network without mail, saying so, and keeps its data on the volume
// when the container is replaced. The trial compose file and its several-instances variant start with
// podman-compose (Debian's PostgreSQL and Caddy stand in for their official images, which no
// registry here serves) and serve the SDK through the published port.
//
// It takes minutes, so the `npm test` walk leaves it out (the name has no `.test.ts`): .ci/run runs
// it after the suite with `npm test -- test/container/image.ts`. It needs podman, runc, mmdebstrap,
// podman-compose and golang-github-containernetworking-plugin-dnsname from Debian, and PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import postgres from 'postgres';
import type * as Sdk from '@meshagent/meshagent';
import { pgUrl, requireOrSkip } from '../support/env.ts';
import { freePort } from '../support/service.ts';
import { debianRootfs, missingTools, privatePodman, progress, run, type Podman } from './podman.ts';

// The SDK's "import" build does not load on Node 24 (see test/e2e/sdk.test.ts): require() it.
const require = createRequire(import.meta.url);
const { Meshagent } = require('@meshagent/meshagent') as typeof Sdk;

const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean; optional?: boolean }> };

const tag = `${process.pid}-${randomUUID().slice(0, 8)}`;
const BASE = `localhost/atrium-test-base:${tag}`;
const SERVICES = `localhost/atrium-test-services:${tag}`;
const IMAGE = `localhost/atrium:test-${tag}`;
const IMAGE_UID = 10001;
const SECRET_KEY = randomBytes(32).toString('base64');
const PASSWORD = 'correct horse battery staple';

const missing = missingTools();
const available = missing.length === 0 && pgUrl !== undefined;
const need = missing.length > 0 ? `${missing.join(', ')} (apt-get install ${missing.join(' ')})` : 'PostgreSQL';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls GET /readyz until it answers 200; returns how long that took. */
async function waitReady(url: string, timeoutMs: number, describeFailure: () => Promise<string>): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (response.status === 200) return performance.now() - t0;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url}/readyz did not answer 200 within ${seconds(timeoutMs)}\n${await describeFailure()}`);
}

interface Boot {
  project_id: string;
  api_key: string;
  user_token: string;
}

/** The official SDK against a running server: a room, and a participant token for it that verifies against the server's JWKS. */
async function sdkSmoke(url: string, boot: Boot, room: string): Promise<{ roomId: string; jwt: string }> {
  const asKey = new Meshagent({ baseUrl: url, token: boot.api_key });
  const asUser = new Meshagent({ baseUrl: url, token: boot.user_token });
  const created = await asKey.createRoom({ projectId: boot.project_id, name: room, metadata: { by: 'container test' } });
  assert.equal((await asKey.getRoom(boot.project_id, room)).id, created.id);
  const info = await asUser.connectRoom(boot.project_id, room);
  assert.equal(info.roomName, room);
  const { payload } = await jwtVerify(info.jwt, createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`)));
  assert.equal(payload.sub, boot.project_id);
  return { roomId: created.id, jwt: info.jwt };
}

describe('the production image, built and run with podman', { timeout: 28 * 60_000 }, () => {
  let p: Podman;
  let databaseName: string | undefined;
  const admin = () => postgres(pgUrl!, { max: 1, onnotice: () => {} });

  before(async () => {
    if (!available) return;
    p = await privatePodman();
    const [base, services] = await Promise.all([
      debianRootfs('bookworm', ['ca-certificates']),
      debianRootfs('bookworm', ['ca-certificates', 'postgresql-15', 'caddy']),
    ]);
    for (const [tarball, name] of [[base, BASE], [services, SERVICES]] as const) {
      const t0 = performance.now();
      await p.podman(['import', tarball, name], { timeoutMs: 180_000 });
      progress(`imported ${name} in ${seconds(performance.now() - t0)}`);
    }
    const revision = (await run('git', ['rev-parse', 'HEAD'], { cwd: root, timeoutMs: 10_000, allowFailure: true })).stdout.trim() || 'unknown';
    const t0 = performance.now();
    progress(`building ${IMAGE} on ${BASE}`);
    await p.podman([
      'build', '--layers=false', '--format', 'docker', '--file', join(root, 'Containerfile'),
      '--build-arg', `BASE=${BASE}`, '--build-arg', `VERSION=${pkg.version}`, '--build-arg', `REVISION=${revision}`,
      '--tag', IMAGE, root,
    ], { timeoutMs: 10 * 60_000 });
    const size = (image: string) => p.podman(['image', 'inspect', '--format', '{{.Size}}', image]).then((r) => Number(r.stdout.trim()));
    const [imageBytes, baseBytes] = await Promise.all([size(IMAGE), size(BASE)]);
    progress(`built ${IMAGE} in ${seconds(performance.now() - t0)}: ${(imageBytes / 1e6).toFixed(0)} MB, of which ${((imageBytes - baseBytes) / 1e6).toFixed(0)} MB on top of the base`);
    databaseName = `atrium_image_${tag.replaceAll('-', '_')}`;
    const sql = admin();
    try {
      await sql.unsafe(`create database ${databaseName}`);
    } finally {
      await sql.end({ timeout: 5 });
    }
  }, { timeout: 20 * 60_000 });

  after(async () => {
    const t0 = performance.now();
    await p?.destroy();
    if (databaseName) {
      const sql = admin();
      try {
        await sql.unsafe(`drop database if exists ${databaseName} with (force)`);
      } finally {
        await sql.end({ timeout: 5 });
      }
    }
    if (p) progress(`removed the containers, volumes, images and store in ${seconds(performance.now() - t0)}`);
  }, { timeout: 10 * 60_000 });

  test('the image: production packages only, the built console, labels, a numbered user, health from /readyz', { timeout: 120_000 }, async (t) => {
    if (!requireOrSkip(t, available, need)) return;
    const [config] = JSON.parse((await p.podman(['image', 'inspect', IMAGE])).stdout) as Array<{ Config: { User: string; Labels: Record<string, string>; Cmd: string[] }; Healthcheck?: { Test: string[] } }>;
    assert.equal(config!.Config.User, `${IMAGE_UID}:${IMAGE_UID}`);
    assert.equal(config!.Config.Labels['org.opencontainers.image.version'], pkg.version);
    assert.match(config!.Config.Labels['org.opencontainers.image.revision'] ?? '', /^([0-9a-f]{40}|unknown)$/);
    assert.match(config!.Healthcheck?.Test.join(' ') ?? '', /\/readyz/);
    assert.deepEqual(config!.Config.Cmd, ['serve']);

    // Checked inside the image, by its own Node: every production package there, no dev-only one.
    const production = Object.entries(lock.packages).filter(([path, entry]) => path && !entry.dev && !entry.optional).map(([path]) => path);
    const devOnly = Object.entries(lock.packages).filter(([, entry]) => entry.dev).map(([path]) => path);
    const script = `
      const fs = require('node:fs');
      const { production, devOnly } = JSON.parse(fs.readFileSync(0, 'utf8'));
      const report = {
        missing: production.filter((p) => !fs.existsSync(p + '/package.json')),
        present: devOnly.filter((p) => fs.existsSync(p)),
        extra: ['test', 'docs', 'bench', 'examples', 'console/src', 'node_modules/.bin', 'node_modules/node/node_modules'].filter((p) => fs.existsSync(p)),
        console: fs.existsSync('console/dist/index.html'),
        node: process.version,
      };
      console.log(JSON.stringify(report));`;
    const checked = await p.podman(['run', '--rm', '-i', '--network=none', '--read-only', '--entrypoint', 'node', IMAGE, '-e', script], { input: JSON.stringify({ production, devOnly }) });
    const report = JSON.parse(checked.stdout) as { missing: string[]; present: string[]; extra: string[]; console: boolean; node: string };
    assert.deepEqual(report.missing, [], 'production packages missing from the image');
    assert.deepEqual(report.present, [], 'development-only packages in the image');
    assert.deepEqual(report.extra, [], 'what the image should not hold');
    assert.equal(report.console, true, 'the built console');
    assert.equal(report.node, `v${JSON.parse(readFileSync(join(root, 'node_modules', 'node', 'package.json'), 'utf8')).version}`, 'the pinned Node');
  });

  describe('on PostgreSQL', () => {
    const name = `atrium-pg-${tag}`;
    let url = '';
    let port = 0;
    let boot: Boot;
    let first: { roomId: string; jwt: string };
    const logs = async () => (await p.podman(['logs', '--tail', '40', name], { allowFailure: true })).stdout;

    test('becomes ready; the official SDK creates a room and connects; non-root on a read-only root; healthy', { timeout: 240_000 }, async (t) => {
      if (!requireOrSkip(t, available, need)) return;
      port = await freePort();
      url = `http://127.0.0.1:${port}`;
      const databaseUrl = new URL(pgUrl!);
      databaseUrl.pathname = `/${databaseName}`;
      // The host's network: the test's PostgreSQL listens on its loopback.
      await p.podman([
        'create', '--name', name, '--network=host', '--read-only', '--volume', `${name}:/data`,
        '--env', `DATABASE_URL=${databaseUrl}`, '--env', `PORT=${port}`, '--env', `ATRIUM_PUBLIC_URL=${url}`, '--env', `ATRIUM_SECRET_KEY=${SECRET_KEY}`,
        IMAGE,
      ]);
      const t0 = performance.now();
      await p.podman(['start', name]);
      await waitReady(url, 120_000, logs);
      progress(`on PostgreSQL: ready ${seconds(performance.now() - t0)} after podman start (an empty database: the migrations included)`);

      boot = JSON.parse((await p.podman(['exec', name, 'node', 'src/cli/main.ts', 'bootstrap', '--email', `image-${tag}@example.test`, '--password', PASSWORD, '--project', 'image', '--json'], { timeoutMs: 60_000 })).stdout);
      first = await sdkSmoke(url, boot, 'container-lobby');

      const status = (await p.podman(['exec', name, 'cat', '/proc/1/status'])).stdout;
      const ids = (field: string) => status.match(new RegExp(`^${field}:\\s+(.*)$`, 'm'))![1]!.split(/\s+/).map(Number);
      assert.deepEqual(ids('Uid'), [IMAGE_UID, IMAGE_UID, IMAGE_UID, IMAGE_UID], 'PID 1 runs as the image\'s user, real, effective, saved and filesystem');
      assert.deepEqual(ids('Gid'), [IMAGE_UID, IMAGE_UID, IMAGE_UID, IMAGE_UID]);
      assert.match((await p.podman(['exec', name, 'cat', '/proc/1/cmdline'])).stdout.replaceAll('\0', ' '), /^node --max-semi-space-size=16 src\/cli\/main\.ts serve/);
      const writes = `
        const fs = require('node:fs');
        const result = {};
        for (const path of ['/app/probe', '/app/node_modules/probe', '/etc/probe', '/probe', '/data/probe']) {
          try { fs.writeFileSync(path, 'x'); fs.rmSync(path); result[path] = 'written'; } catch (e) { result[path] = e.code; }
        }
        console.log(JSON.stringify(result));`;
      assert.deepEqual(JSON.parse((await p.podman(['exec', name, 'node', '-e', writes])).stdout), {
        '/app/probe': 'EROFS', '/app/node_modules/probe': 'EROFS', '/etc/probe': 'EROFS', '/probe': 'EROFS', '/data/probe': 'written',
      });
      // The image's HEALTHCHECK, run once (no systemd here to run it on a timer).
      assert.equal((await p.podman(['healthcheck', 'run', name], { allowFailure: true })).code, 0, 'healthcheck');
    });

    test('SIGTERM: the server drains and exits 0; started again, it has its rooms, keys and tokens', { timeout: 240_000 }, async (t) => {
      if (!requireOrSkip(t, available, need)) return;
      assert.ok(boot, 'the previous test started the container');
      const keysBefore = await (await fetch(`${url}/.well-known/jwks.json`)).json();
      const stop = async () => {
        const t0 = performance.now();
        await p.podman(['kill', '--signal', 'TERM', name]);
        const code = (await p.podman(['wait', name], { timeoutMs: 60_000 })).stdout.trim();
        return { code, ms: performance.now() - t0 };
      };
      const stopped = await stop();
      assert.equal(stopped.code, '0', `exit code after SIGTERM\n${await logs()}`);
      assert.match(await logs(), /"signal":"SIGTERM","msg":"shutting down"/);
      progress(`on PostgreSQL: SIGTERM to exit 0 in ${seconds(stopped.ms)}`);

      const t0 = performance.now();
      await p.podman(['start', name]);
      await waitReady(url, 120_000, logs);
      progress(`on PostgreSQL: ready ${seconds(performance.now() - t0)} after podman start (a restart)`);
      const asKey = new Meshagent({ baseUrl: url, token: boot.api_key });
      assert.equal((await asKey.getRoom(boot.project_id, 'container-lobby')).id, first.roomId);
      assert.deepEqual(await (await fetch(`${url}/.well-known/jwks.json`)).json(), keysBefore, 'the same signing keys');
      const validated = await fetch(`${url}/api/participant-token/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: first.jwt }) });
      assert.equal(validated.status, 200, 'a participant token from before the restart still validates');
      assert.equal((await stop()).code, '0');
      await p.podman(['rm', '--volumes', name]);
    });
  });

  test('embedded database: refused on the network without mail, saying so; its data stays on the volume when the container is replaced', { timeout: 360_000 }, async (t) => {
    if (!requireOrSkip(t, available, need)) return;
    const refused = await p.podman(['run', '--rm', '--network=none', '--read-only', IMAGE], { allowFailure: true });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /HOST=0\.0\.0\.0 serves the network, but the development mailbox \(\/dev\/mail\) is on.*Set ATRIUM_SMTP_URL/s);

    const volume = `atrium-embedded-${tag}`;
    const settings = ['--env', 'ATRIUM_DEV_MAILBOX=false', '--env', 'ATRIUM_EMAIL_LOGIN=false'];
    const boot = JSON.parse((await p.podman([
      'run', '--rm', '--network=none', '--read-only', '--volume', `${volume}:/data`, ...settings, IMAGE,
      'bootstrap', '--email', `embedded-${tag}@example.test`, '--password', PASSWORD, '--project', 'embedded', '--json',
    ], { timeoutMs: 120_000 })).stdout) as Boot;

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const serve = async (name: string) => {
      await p.podman(['create', '--name', name, '--network=host', '--read-only', '--volume', `${volume}:/data`, ...settings, '--env', `PORT=${port}`, '--env', `ATRIUM_PUBLIC_URL=${url}`, IMAGE]);
      const t0 = performance.now();
      await p.podman(['start', name]);
      await waitReady(url, 120_000, async () => (await p.podman(['logs', '--tail', '40', name], { allowFailure: true })).stdout);
      return performance.now() - t0;
    };
    const stop = async (name: string) => {
      await p.podman(['kill', '--signal', 'TERM', name]);
      assert.equal((await p.podman(['wait', name], { timeoutMs: 60_000 })).stdout.trim(), '0', 'exit code after SIGTERM');
      await p.podman(['rm', name]);
    };

    progress(`embedded database: ready ${seconds(await serve(`atrium-embedded-a-${tag}`))} after podman start (the database made by bootstrap)`);
    const { roomId } = await sdkSmoke(url, boot, 'embedded-lobby');
    await stop(`atrium-embedded-a-${tag}`);

    progress(`embedded database: a new container on the same volume ready ${seconds(await serve(`atrium-embedded-b-${tag}`))} after podman start`);
    const asKey = new Meshagent({ baseUrl: url, token: boot.api_key });
    assert.equal((await asKey.getRoom(boot.project_id, 'embedded-lobby')).id, roomId, 'the room, found with the API key made before (its secret key is on the volume too)');
    await stop(`atrium-embedded-b-${tag}`);
  });

  describe('compose files, started with podman-compose', () => {
    let overrides: string;
    before(() => {
      // The official postgres image's interface, played by Debian's PostgreSQL (test/container/postgres-stand-in.sh).
      overrides = mkdtempSync(join(tmpdir(), 'atrium-compose-'));
      writeFileSync(join(overrides, 'stand-ins.yaml'), JSON.stringify({
        services: { postgres: { entrypoint: ['/bin/sh', '/stand-in/postgres.sh'], volumes: [`${join(root, 'test', 'container', 'postgres-stand-in.sh')}:/stand-in/postgres.sh:ro`] } },
      }));
    });
    after(() => rmSync(overrides, { recursive: true, force: true }));

    /** Starts a compose file on a published port with the settings an operator chooses; returns its URL and how to stop it. */
    async function up(file: string, project: string) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const env = {
        ...p.env, ATRIUM_IMAGE: IMAGE, POSTGRES_IMAGE: SERVICES, CADDY_IMAGE: SERVICES, HTTP_PUBLISH: `127.0.0.1:${port}`,
        ATRIUM_PUBLIC_URL: url, ATRIUM_SECRET_KEY: SECRET_KEY, ATRIUM_SMTP_URL: 'smtp://mail.invalid:25', POSTGRES_PASSWORD: randomBytes(12).toString('hex'),
      };
      const compose = (args: string[], timeoutMs: number, allowFailure = false) => run('podman-compose', ['--project-name', project, '--file', join(root, file), '--file', join(overrides, 'stand-ins.yaml'), ...args], { env, cwd: root, timeoutMs, allowFailure });
      const logs = async () => (await run('podman', ['logs', '--tail', '30', `${project}_atrium_1`], { env, timeoutMs: 30_000, allowFailure: true })).stdout;
      const down = async () => {
        // Whatever it leaves, the store's removal at the end takes.
        await compose(['down', '--volumes'], 180_000, true);
        await p.podman(['network', 'rm', '--force', `${project}_default`], { allowFailure: true });
        // What the CNI address allocator keeps of a network after it is gone.
        rmSync(join('/var/lib/cni/networks', `${project}_default`), { recursive: true, force: true });
      };
      const t0 = performance.now();
      try {
        await compose(['up', '--detach'], 240_000);
        await waitReady(url, 180_000, logs);
      } catch (error) {
        await down();
        throw error;
      }
      progress(`${file}: ready through ${url} ${seconds(performance.now() - t0)} after podman-compose up`);
      return { url, down, project };
    }

    test('compose.yaml: Atrium on PostgreSQL; the SDK creates a room and connects through the published port', { timeout: 420_000 }, async (t) => {
      if (!requireOrSkip(t, available, need)) return;
      const project = `atrium-trial-${tag}`;
      const stack = await up('compose.yaml', project);
      try {
        const boot = JSON.parse((await p.podman(['exec', `${project}_atrium_1`, 'node', 'src/cli/main.ts', 'bootstrap', '--email', `trial-${tag}@example.test`, '--password', PASSWORD, '--project', 'trial', '--json'], { timeoutMs: 60_000 })).stdout) as Boot;
        await sdkSmoke(stack.url, boot, 'trial-lobby');
      } finally {
        await stack.down();
      }
    });

    test('deploy/compose/replicas.yaml: three instances behind Caddy share the work and the files', { timeout: 480_000 }, async (t) => {
      if (!requireOrSkip(t, available, need)) return;
      const project = `atrium-replicas-${tag}`;
      const stack = await up('deploy/compose/replicas.yaml', project);
      try {
        const instances = [1, 2, 3].map((n) => `${project}_atrium_${n}`);
        // Each instance is ready, not only the one the proxy found first.
        for (const instance of instances) {
          await p.podman(['exec', instance, 'node', '-e', 'fetch("http://127.0.0.1:8000/readyz").then((r) => process.exit(r.ok ? 0 : 1))'], { timeoutMs: 30_000 });
        }
        const boot = JSON.parse((await p.podman(['exec', instances[0]!, 'node', 'src/cli/main.ts', 'bootstrap', '--email', `replicas-${tag}@example.test`, '--password', PASSWORD, '--project', 'replicas', '--json'], { timeoutMs: 60_000 })).stdout) as Boot;
        await sdkSmoke(stack.url, boot, 'replicas-lobby');
        const asKey = new Meshagent({ baseUrl: stack.url, token: boot.api_key });
        const bytes = randomBytes(300_000);
        await asKey.upload({ projectId: boot.project_id, path: 'shared/blob.bin', data: bytes });
        for (let i = 0; i < 9; i++) {
          assert.ok(Buffer.from(await asKey.download({ projectId: boot.project_id, path: 'shared/blob.bin' })).equals(bytes), `download ${i}`);
          await asKey.getRoom(boot.project_id, 'replicas-lobby');
        }
        const served = [];
        for (const instance of instances) {
          const metrics = (await p.podman(['exec', instance, 'node', '-e', 'fetch("http://127.0.0.1:8000/metrics").then((r) => r.text()).then((t) => process.stdout.write(t))'], { timeoutMs: 30_000 })).stdout;
          const count = [...metrics.matchAll(/^atrium_http_request_duration_seconds_count\{[^}]*route="[^"]*:project_id[^"]*"[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
          served.push(count);
        }
        assert.ok(served.every((count) => count > 0), `every instance served project requests through the proxy: ${served.join(', ')}`);
      } finally {
        await stack.down();
      }
    });
  });
});

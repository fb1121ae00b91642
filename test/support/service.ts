// Starts a real Atrium service for integration tests, on PGlite (temp data dir) or on the throwaway
// PostgreSQL cluster of test/run.ts, and offers a tiny HTTP client and fixtures.
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe } from 'node:test';
import pino from 'pino';
import postgres from 'postgres';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig, type Config } from '../../src/config.ts';
import { startService, type Background, type RunningService } from '../../src/main.ts';
import { openDatabase } from '../../src/platform/db/engine.ts';
import { migrate, migrationsDir } from '../../src/platform/db/migrate.ts';
import type { AppContext } from '../../src/context.ts';
import { createApiKey } from '../../src/modules/api-keys/service.ts';
import { createProject } from '../../src/modules/projects/service.ts';
import { createUser, issuePersonalAccessToken } from '../../src/modules/users/service.ts';
import { seedPglite } from './pglite-template.ts';
import { pgUrl, strict } from './env.ts';

export type Engine = 'pglite' | 'postgres';
export const ENGINES: Engine[] = ['pglite', 'postgres'];

export interface TestService extends RunningService {
  dataDir: string;
  /** Whether no other service uses its database: always, unless the test named a database in `env`. */
  ownDatabase: boolean;
  stop(): Promise<void>;
}

/** Fixed (test-only) encryption key for every service on the shared test PostgreSQL. */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

export const TEST_MAIL_DOMAIN = 'mail.example.test';

export function testConfig(engine: Engine, dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    ATRIUM_DATA_DIR: dataDir,
    ATRIUM_LOG_LEVEL: 'warn',
    // Mailboxes need a domain the operator allows; tests claim addresses under this one.
    ATRIUM_MAIL_DOMAINS: TEST_MAIL_DOMAIN,
    // Every test calls from 127.0.0.1, many times per file: these limits have tests of their own
    // (cluster-limits.test.ts).
    ATRIUM_TOKEN_LIMIT_PER_IP: '999999',
    ATRIUM_DEVICE_LIMIT_PER_IP: '999999',
    // Instances sharing one PostgreSQL must share the key that encrypts stored secrets.
    ...(engine === 'postgres' ? { DATABASE_URL: pgUrl!, ATRIUM_SECRET_KEY: TEST_SECRET_KEY } : {}),
    ...env,
  });
}

export interface TestServiceOptions {
  /** Replaces the default background work (e.g. `() => []` to drive a worker by hand). */
  workers?: (ctx: AppContext) => Background[];
  /** Runs after the service stopped, or when it failed to start (e.g. drop a database). */
  cleanup?: () => Promise<void>;
  /** The service's logger (e.g. one writing to memory, to read what was logged). */
  log?: FastifyBaseLogger;
}

const databaseUrl = (name: string) => {
  const url = new URL(pgUrl!);
  url.pathname = `/${name}`;
  return url.toString();
};

/** 55006 object_in_use: the template is being copied or built by another test file; try again. */
const IN_USE = '55006';

let template: Promise<string> | undefined;

/**
 * A database migrated once for every test run of this code (named by a hash of the migrations, so a
 * cluster reused across changes gets a new one), from which each service's database is copied:
 * `create database … template` takes tens of milliseconds where migrating takes about half a second.
 * Test files build it under an advisory lock, so exactly one does, the others wait and reuse it.
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const files = readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).sort();
    const hash = createHash('sha256');
    for (const file of files) hash.update(file).update(readFileSync(join(migrationsDir, file)));
    const name = `atrium_template_${hash.digest('hex').slice(0, 16)}`;
    const admin = postgres(pgUrl!, { max: 1, onnotice: () => {} });
    try {
      await admin`select pg_advisory_lock(72616001)`;
      const [exists] = await admin`select 1 from pg_database where datname = ${name}`;
      if (!exists) {
        // Built under another name and renamed when complete: a run that dies half-way leaves no template.
        const building = `${name}_building`;
        await admin.unsafe(`drop database if exists ${building} with (force)`);
        await admin.unsafe(`create database ${building}`);
        const database = await openDatabase({ databaseUrl: databaseUrl(building), dataDir: tmpdir(), poolSize: 1, backgroundPoolSize: 1 });
        try {
          await migrate(database);
        } finally {
          await database.close();
        }
        await admin.unsafe(`alter database ${building} rename to ${name}`);
      }
    } finally {
      await admin.end({ timeout: 5 });
    }
    return name;
  })();
  return template;
}

export interface IsolatedDatabase {
  /** A new data directory; on PGlite it holds the database, already migrated. */
  dataDir: string;
  /** The settings that point a service at both: ATRIUM_DATA_DIR, and DATABASE_URL on PostgreSQL. */
  env: Record<string, string>;
  /** Removes the data directory and drops the PostgreSQL database. */
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database and a data directory: on PostgreSQL a copy of the run's template
 * database, on PGlite a copy of the run's template data directory (pglite-template.ts). Every test
 * service gets one: test files run side by side, and on a shared database any service's job worker
 * could run another's jobs with its own settings (a flush window, a price list, a payment provider),
 * and whole-database checks would see other files' writes.
 */
export async function isolatedDatabase(engine: Engine): Promise<IsolatedDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'atrium-test-'));
  const removeDir = async () => rmSync(dataDir, { recursive: true, force: true });
  if (engine === 'pglite') {
    try {
      await seedPglite(dataDir);
    } catch (error) {
      await removeDir();
      throw error;
    }
    return { dataDir, env: { ATRIUM_DATA_DIR: dataDir }, drop: removeDir };
  }
  const name = `atrium_own_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  try {
    const from = await migratedTemplate();
    const admin = postgres(pgUrl!, { max: 1, onnotice: () => {} });
    try {
      // PostgreSQL 15 made CREATE DATABASE write the whole copy to the WAL (strategy WAL_LOG), about
      // 450 ms for this template here; the file copy that earlier versions always did takes 20–30 ms.
      const [{ version }] = await admin<{ version: number }[]>`select current_setting('server_version_num')::int as version`;
      const strategy = version >= 150000 ? ' strategy file_copy' : '';
      for (let attempt = 1; ; attempt += 1) {
        try {
          await admin.unsafe(`create database ${name} template ${from}${strategy}`);
          break;
        } catch (error) {
          if ((error as { code?: string }).code !== IN_USE || attempt === 50) throw error;
          await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
        }
      }
    } finally {
      await admin.end({ timeout: 5 });
    }
  } catch (error) {
    await removeDir();
    throw error;
  }
  return {
    dataDir,
    env: { ATRIUM_DATA_DIR: dataDir, DATABASE_URL: databaseUrl(name) },
    async drop() {
      await removeDir();
      const sql = postgres(pgUrl!, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`drop database if exists ${name} with (force)`);
      } finally {
        await sql.end({ timeout: 5 });
      }
    },
  };
}

/**
 * A service on a database of its own (`isolatedDatabase`), unless `env` names one: a DATABASE_URL
 * that several services share on purpose, or the ATRIUM_DATA_DIR of an embedded database that the
 * test made (and removes) itself. Its public URL is its real loopback address.
 */
export async function startTestService(engine: Engine, env: Record<string, string> = {}, options: TestServiceOptions = {}): Promise<TestService> {
  const log = options.log ?? pino({ level: process.env.ATRIUM_TEST_LOG_LEVEL ?? 'error' }) as unknown as FastifyBaseLogger;
  const named = env.DATABASE_URL !== undefined || (engine === 'pglite' && env.ATRIUM_DATA_DIR !== undefined);
  const database = named ? undefined : await isolatedDatabase(engine);
  // A service on a named PostgreSQL database still needs a data directory of its own (blobs, keys).
  const dataDir = database?.dataDir ?? env.ATRIUM_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'atrium-test-'));
  const ownsDataDir = database === undefined && env.ATRIUM_DATA_DIR === undefined;
  const cleanup = async () => {
    if (database) await database.drop();
    if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true });
    await options.cleanup?.();
  };
  // The public URL (OAuth issuer, room URLs) must be the real address, so pick the port first.
  const port = await freePort();
  let service: RunningService;
  try {
    service = await startService(testConfig(engine, dataDir, { PORT: String(port), ATRIUM_PUBLIC_URL: `http://127.0.0.1:${port}`, ...database?.env, ...env }), {
      log,
      ...(options.workers ? { workers: options.workers } : {}),
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
  return {
    ...service,
    dataDir,
    ownDatabase: engine === 'pglite' || database !== undefined,
    async stop() {
      await service.close();
      await cleanup();
    },
  };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Declares a suite once per engine. Without PostgreSQL the postgres suite is skipped, or fails in
 * strict mode (CI).
 */
export function forEachEngine(name: string, body: (engine: Engine) => void): void {
  for (const engine of ENGINES) {
    if (engine === 'postgres' && !pgUrl) {
      if (strict) describe(`${name} [postgres]`, () => { throw new Error('PostgreSQL not available in strict mode'); });
      else describe(`${name} [postgres]`, { skip: 'PostgreSQL server not installed' }, () => {});
      continue;
    }
    describe(`${name} [${engine}]`, () => body(engine));
  }
}

export interface Response<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** Minimal JSON client: `call(service, 'GET', path, {token, json, body, headers})`. */
export async function call<T = any>(base: string | { url: string }, method: string, path: string, options: { token?: string | undefined; json?: unknown; body?: RequestInit['body']; headers?: Record<string, string> } = {}): Promise<Response<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.json === 'string' ? options.json : JSON.stringify(options.json);
  }
  const response = await fetch(`${typeof base === 'string' ? base : base.url}${path}`, { method, headers, body: body ?? null });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: response.status, body: parsed as T, headers: response.headers };
}

export interface Tenant {
  userId: string;
  email: string;
  password: string;
  projectId: string;
  apiKey: string;
  userToken: string;
}

/** A user, their project (they are admin), an admin API key and a personal access token. */
export async function createTenant(service: RunningService, label = 'tenant'): Promise<Tenant> {
  const { db, secrets } = service.ctx;
  const email = `${label}-${randomUUID()}@example.test`;
  const password = 'correct horse battery staple';
  const user = await createUser(db, { email, password, firstName: 'Test', lastName: label, emailVerified: true });
  const project = await createProject(db, user.id, `${label} project`);
  const key = await createApiKey(db, secrets, project.id, { name: `${label} key`, createdBy: user.id });
  return { userId: user.id, email, password, projectId: project.id, apiKey: key.value, userToken: await issuePersonalAccessToken(db, user.id, 'test') };
}

/** A second user (no project) with a personal access token. */
export async function createUserWithToken(service: RunningService, label = 'user'): Promise<{ userId: string; email: string; token: string }> {
  const email = `${label}-${randomUUID()}@example.test`;
  const user = await createUser(service.ctx.db, { email, password: 'correct horse battery staple', emailVerified: true });
  return { userId: user.id, email, token: await issuePersonalAccessToken(service.ctx.db, user.id, 'test') };
}

// The two database engines behind one Drizzle interface: embedded PGlite in the data dir (default) or
// PostgreSQL through DATABASE_URL. Both speak the same SQL dialect, so stores never branch on engine.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { acquireDirLock } from './dir-lock.ts';
import { PGliteWithColdParser } from './pglite-cold-parser.ts';
import { preparedStatements } from './pglite-statements.ts';
import type { Db } from './handle.ts';
import { scopedDb } from './scope.ts';

export type { Db } from './handle.ts';

/** Runs plain SQL scripts inside one transaction (migrations); returns rows of the last statement. */
export type ScriptRunner = (sql: string) => Promise<Record<string, unknown>[]>;

export interface Database {
  readonly engine: 'pglite' | 'postgres';
  readonly db: Db;
  /**
   * Background work's own handle (PostgreSQL: a small separate pool), so a job worker never queues
   * behind request traffic for a connection; on PGlite the same single connection as `db`.
   */
  readonly background: Db;
  /** One transaction over raw SQL text, for the migration runner. */
  scriptTransaction<T>(fn: (run: ScriptRunner) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  /** LISTEN on a channel (NOTIFY is sent on commit, to every instance); resolves to an unlisten. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * How many statements the application has sent through `db` and `background` so far (not the
   * BEGIN and COMMIT of transactions, nor migrations): what a path costs in statements, which tests
   * pin for the hot paths (test/integration/statement-counts.test.ts).
   */
  statementsSent(): number;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
  /** Connections of the background pool (PostgreSQL). */
  backgroundPoolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options.poolSize ?? 20, options.backgroundPoolSize ?? 4)
    : openPglite(options.dataDir);
}

/**
 * PGlite's settings for a small footprint (docs/benchmarks.md, "Memory of the embedded default"):
 * PostgreSQL's default 128 MB of shared buffers live in the WebAssembly memory, which never shrinks;
 * 16 MB hold the working set of a self-hosted deployment.
 */
const PGLITE_CONF = ['shared_buffers=16MB'];

async function openPglite(dataDir: string): Promise<Database> {
  mkdirSync(dataDir, { recursive: true });
  // PGlite is single-process: a second process on the same directory silently loses writes.
  const lock = acquireDirLock(join(dataDir, 'atrium.pid'));
  const pgdata = join(dataDir, 'pglite');
  let client: PGlite;
  try {
    const fresh = !existsSync(join(pgdata, 'PG_VERSION'));
    client = await PGliteWithColdParser.open(pgdata, { postgresqlconf: PGLITE_CONF });
    if (fresh) {
      // Creating the cluster (initdb) leaves hundreds of MB in this instance's memory: start over
      // on the new directory with a fresh one.
      await client.close();
      client = await PGliteWithColdParser.open(pgdata, { postgresqlconf: PGLITE_CONF });
    }
  } catch (error) {
    lock.release();
    throw error;
  }
  // Every query a named prepared statement, as on PostgreSQL (`preparing` below).
  let sent = 0;
  const db = scopedDb(drizzlePglite({ client: preparedStatements(client, { onStatement: () => { sent += 1; } }) as PGlite }) as unknown as Db);
  return {
    engine: 'pglite',
    db,
    background: db,
    scriptTransaction: (fn) =>
      client.transaction(async (tx) => fn(async (sql) => {
        const results = await tx.exec(sql);
        return (results.at(-1)?.rows ?? []) as Record<string, unknown>[];
      })),
    ping: async () => { await client.query('select 1'); },
    listen: (channel, onNotify) => client.listen(channel, onNotify),
    statementsSent: () => sent,
    close: async () => {
      try {
        await client.close();
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * Drizzle runs every query it was not asked to `.prepare()` as an unnamed statement, and
 * postgres-js sends a parameterised unnamed statement in two round trips (Parse/Describe, wait for
 * the parameter types, then Bind/Execute), re-parsing and re-planning it each time. Through this
 * wrapper every query is a prepared statement instead, cached per connection by its text (Drizzle
 * numbers parameters, so the texts are few): one round trip from the second run on. postgres-js
 * re-prepares by itself when a schema change invalidates a cached plan. Transactions and
 * savepoints hand their scoped clients through the same wrapper.
 */
function preparing(client: postgres.Sql, onStatement: () => void): postgres.Sql {
  const wrapScoped = (run: (...args: unknown[]) => unknown) => (...args: unknown[]) => {
    const fn = args.at(-1);
    if (typeof fn !== 'function') return run(...args);
    return run(...args.slice(0, -1), (scoped: postgres.Sql) => (fn as (c: postgres.Sql) => unknown)(preparing(scoped, onStatement)));
  };
  const unsafe = (query: string, params?: unknown[], options?: Record<string, unknown>) => {
    onStatement();
    return client.unsafe(query, params as never, { ...options, prepare: true });
  };
  return new Proxy(client, {
    get(target, property) {
      if (property === 'unsafe') return unsafe;
      const value = Reflect.get(target, property, target) as unknown;
      if ((property === 'begin' || property === 'savepoint') && typeof value === 'function') {
        return wrapScoped((value as (...args: unknown[]) => unknown).bind(target));
      }
      return value;
    },
  });
}

/** The server named by DATABASE_URL cannot be used: unreachable, credentials refused, no such database. */
export class DatabaseUnreachableError extends Error {}

/** `host:port/database` of a URL: what an operator checks, never its password. */
function databaseAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

async function openPostgres(url: string, poolSize: number, backgroundPoolSize: number): Promise<Database> {
  const sql = postgres(url, {
    max: poolSize,
    onnotice: () => {},
    connection: { application_name: 'atrium' },
  });
  const backgroundSql = postgres(url, {
    max: backgroundPoolSize,
    onnotice: () => {},
    connection: { application_name: 'atrium-background' },
  });
  try {
    await sql`select 1`;
  } catch (error) {
    await Promise.all([sql.end({ timeout: 1 }), backgroundSql.end({ timeout: 1 })]);
    const { code, message } = error as { code?: string; message: string };
    // The first query's failure is about the server, the credentials or the database's name: a
    // sentence to act on rather than a driver's stack.
    throw new DatabaseUnreachableError(`cannot use PostgreSQL at ${databaseAddress(url)}: ${message}${code && !message.includes(code) ? ` (${code})` : ''}. Check DATABASE_URL and that the server accepts connections.`, { cause: error });
  }
  let sent = 0;
  const onStatement = () => { sent += 1; };
  const db = scopedDb(drizzlePostgres(preparing(sql, onStatement)) as unknown as Db);
  return {
    engine: 'postgres',
    db,
    background: drizzlePostgres(preparing(backgroundSql, onStatement)) as unknown as Db,
    scriptTransaction: (fn) =>
      sql.begin(async (tx) => fn(async (text) => [...(await tx.unsafe(text))] as Record<string, unknown>[])) as Promise<never>,
    ping: async () => { await sql`select 1`; },
    listen: async (channel, onNotify) => {
      const { unlisten } = await sql.listen(channel, onNotify);
      return unlisten;
    },
    statementsSent: () => sent,
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), backgroundSql.end({ timeout: 5 })]);
    },
  };
}

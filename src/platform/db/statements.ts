// Statements whose text is built once. Drizzle walks a statement's SQL fragments on every run to
// produce its text; for the statements of hot paths (an event with every consumer's fan-out, an
// insert of many columns) that walk costs more CPU than the query itself (docs/contributing/performance-journal.md,
// "Where each write path's CPU goes"). Built once, with `sql.placeholder(name)` wherever a value
// varies, they run with only the values bound.
import type { QueryOptions } from '@electric-sql/pglite';
import { Column, DrizzleQueryError, SQL, fillPlaceholders, is, type Query } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Sql } from 'postgres';
import type { Db } from './engine.ts';
import type { PgliteQueries } from './pglite-statements.ts';
import { resolveDb, rootDb } from './scope.ts';

// The handles' own dialect is Drizzle's default one (no casing): this one writes the same text.
const dialect = new PgDialect();

/** A raw statement's text, built once; it runs on any handle or transaction with that run's values. */
export class CompiledSql {
  readonly #query: Query;

  constructor(statement: SQL) {
    this.#query = dialect.sqlToQuery(statement);
  }

  /** Its text, with `$n` where values go. */
  get text(): string {
    return this.#query.sql;
  }

  /** Runs it as `db.execute` would (same result shape), binding `values` to the placeholders. */
  run(db: Db, values: Record<string, unknown>): Promise<unknown> {
    return db._.session.prepareQuery(this.#query, undefined, undefined, false).execute(values);
  }
}

/** A statement prepared by the query builder, run with its placeholders' values. */
interface BuiltStatement<Result> {
  execute(values?: Record<string, unknown>): Promise<Result>;
}

/** Its rows: those of a select or `returning`, none for any other write. */
type Rows<Result> = Result extends readonly unknown[] ? Result : [];

/** The driver's half of a prepared statement (Drizzle's PostgresJsPreparedQuery and PglitePreparedQuery). */
interface DriverStatement {
  queryString: string;
  params: unknown[];
  fields?: { path: string[]; field: unknown }[];
  joinsNotNullableMap?: Record<string, boolean>;
  customResultMapper?: unknown;
  client: unknown;
  /** PGlite's: rows as arrays, timestamps and dates left as text for the columns to decode. */
  queryConfig?: QueryOptions;
}

/**
 * A query-builder statement (a select or a write, with or without `returning`) built once per database
 * handle and run on the driver directly. Drizzle's own `execute` wraps each run in tracing spans, a
 * cache layer and a general row mapper that checks every column's kind on every row (8 % of the
 * server's CPU for the authenticated room read, docs/contributing/performance-journal.md "The read
 * path"); here each column's decoder and place in the row are found once, and a run is one driver
 * call and a loop. Inside a request's transaction (src/platform/db/scope.ts) the statement built on
 * the database runs on that transaction's connection: building it again for each transaction's new
 * handle cost a write route about three times its CPU. Rows are what Drizzle's `execute` returns
 * (test/integration/prepared-per-db.test.ts compares them on both engines).
 */
export function preparedPerDb<Result>(prepare: (db: Db) => BuiltStatement<Result>): (db: Db) => BuiltStatement<Rows<Result>> {
  const byDb = new WeakMap<Db, Compiled>();
  return (handle) => {
    const root = rootDb(handle);
    let compiled = byDb.get(root);
    if (compiled === undefined) byDb.set(root, (compiled = compile(prepare(root) as unknown as DriverStatement)));
    // A statement prepared on the database must not run beside the request transaction in flight.
    const current = resolveDb(handle);
    return (current === root ? compiled.onDatabase : compiled.on(driverClientOf(current))) as BuiltStatement<Rows<Result>>;
  };
}

interface Compiled {
  /** The statement on the driver client it was built with. */
  onDatabase: BuiltStatement<unknown[]>;
  /** The same statement on another client of the same engine (a transaction's). */
  on(client: unknown): BuiltStatement<unknown[]>;
}

/** The driver client under a Drizzle handle (its session's): the pool, or a transaction's connection. */
function driverClientOf(db: Db): unknown {
  return (db as unknown as { session: { client: unknown } }).session.client;
}

function compile(statement: DriverStatement): Compiled {
  const { queryString: text, params: template, joinsNotNullableMap, customResultMapper } = statement;
  if (customResultMapper) throw new Error('preparedPerDb: relational queries are not supported');
  if (joinsNotNullableMap && Object.values(joinsNotNullableMap).some((notNull) => !notNull)) {
    throw new Error('preparedPerDb: outer joins are not supported (their rows need Drizzle\'s nulling of missing tables)');
  }
  // A write without `returning` has no fields: it runs the same way and yields no rows.
  const fields = statement.fields ?? [];
  if (fields.some(({ path }) => path.length > 2)) throw new Error('preparedPerDb: fields nested more than one level deep are not supported');
  const columns = fields.map(({ path, field }) => ({ path, decoder: decoderOf(field) }));
  const toRow = (values: unknown[]) => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) {
      const { path, decoder } = columns[i]!;
      const raw = values[i];
      const value = raw === null ? null : decoder.mapFromDriverValue(raw);
      if (path.length === 1) row[path[0]!] = value;
      else ((row[path[0]!] ??= {}) as Record<string, unknown>)[path[1]!] = value;
    }
    return row;
  };
  const on = (client: unknown): BuiltStatement<unknown[]> => {
    const run = driverRun(client, text, statement.queryConfig);
    return {
      async execute(values = {}) {
        const params = fillPlaceholders(template, values);
        let rows: unknown[][];
        try {
          rows = await run(params);
        } catch (error) {
          throw new DrizzleQueryError(text, params, error as Error);
        }
        return fields.length === 0 ? [] : rows.map(toRow);
      },
    };
  };
  return { onDatabase: on(statement.client), on };
}

type Decoder = { mapFromDriverValue(value: unknown): unknown };

function decoderOf(field: unknown): Decoder {
  if (is(field, Column)) return field;
  // `decoder` is what `sql<T>\`…\`.mapWith()` sets; Drizzle keeps it off its public types.
  if (is(field, SQL)) return (field as unknown as { decoder: Decoder }).decoder;
  if (is(field, SQL.Aliased)) return (field.sql as unknown as { decoder: Decoder }).decoder;
  throw new Error('preparedPerDb: a selected field is neither a column nor SQL');
}

function driverRun(client: unknown, text: string, pgliteConfig: QueryOptions | undefined): (params: unknown[]) => Promise<unknown[][]> {
  if (pgliteConfig) {
    const pglite = client as PgliteQueries;
    return async (params) => (await pglite.query<unknown[]>(text, params, pgliteConfig)).rows;
  }
  const sql = client as Sql;
  return (params) => sql.unsafe(text, params as never[], { prepare: true }).values() as unknown as Promise<unknown[][]>;
}

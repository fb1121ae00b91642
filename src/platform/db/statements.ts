// Statements whose text is built once. Drizzle walks a statement's SQL fragments on every run to
// produce its text; for the statements of hot paths (an event with every consumer's fan-out, an
// insert of many columns) that walk costs more CPU than the query itself (docs/benchmarks.md,
// "Where each write path's CPU goes"). Built once, with `sql.placeholder(name)` wherever a value
// varies, they run with only the values bound.
import type { Query, SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Db } from './engine.ts';

// The handles' own dialect is Drizzle's default one (no casing): this one writes the same text.
const dialect = new PgDialect();

/** A raw statement's text, built once; it runs on any handle or transaction with that run's values. */
export class CompiledSql {
  readonly #query: Query;

  constructor(statement: SQL) {
    this.#query = dialect.sqlToQuery(statement);
  }

  /** Runs it as `db.execute` would (same result shape), binding `values` to the placeholders. */
  run(db: Db, values: Record<string, unknown>): Promise<unknown> {
    return db._.session.prepareQuery(this.#query, undefined, undefined, false).execute(values);
  }
}

/**
 * A query-builder statement prepared once per database handle, for statements run on the handle
 * itself (not inside a transaction, whose handle is new each time).
 */
export function preparedPerDb<P>(prepare: (db: Db) => P): (db: Db) => P {
  const byDb = new WeakMap<Db, P>();
  return (db) => {
    let prepared = byDb.get(db);
    if (prepared === undefined) byDb.set(db, (prepared = prepare(db)));
    return prepared;
  };
}

// Rows of statements written in SQL rather than with the query builder.
//
// The rule: a store writes its queries with Drizzle's query builder. It writes SQL (`sql` from
// drizzle-orm, run with `db.execute`) only for what the builder cannot say in one statement:
// data-modifying CTE chains (a change and its event, a batch that writes several tables), bulk
// input through `jsonb_to_recordset`, `for update skip locked`, `on conflict … where`, and
// aggregates over windows or `generate_series`. Such a statement reads its rows here:
//
// - `rowsOf<T>(result)` for rows of its own shape (counts, ids, computed columns);
// - `tableRows(table)` for rows of one table (`returning *`, `select t.*`, or `row_to_json(t)`),
//   mapped by the table's own column definitions, so a column added to the table needs no edit here.
//
// Statements of hot paths are built once: `CompiledSql` and `preparedPerDb` (statements.ts), the
// one file that reaches into Drizzle's internals (test/integration/prepared-per-db.test.ts is
// its contract).
import { getTableColumns, getTableName, type Column, type InferSelectModel, type Table } from 'drizzle-orm';

/** Raw `execute` results differ by driver: postgres-js gives an array, PGlite `{ rows }`. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

export interface TableRows<T> {
  /** The rows of a raw statement selecting or returning the table's columns, as the query builder gives them. */
  of(result: unknown): T[];
  /**
   * One row as `row_to_json` (or `to_jsonb`) gives it, text or parsed; undefined for SQL null. For
   * tables whose columns all survive JSON: a bytea, bigint or numeric column does not (JSON has no
   * bytes, and its numbers lose digits), and such a table is refused here.
   */
  fromJson(json: unknown): T | undefined;
}

/**
 * Maps rows whose columns carry the table's SQL names (`project_id`) to the table's typed rows
 * (`projectId`), each value decoded by its column as Drizzle decodes it (timestamps to Dates, bigint
 * modes, jsonb). Columns missing from a row read as null.
 */
export function tableRows<T extends Table>(table: T): TableRows<InferSelectModel<T>> {
  const columns = Object.entries(getTableColumns(table) as Record<string, Column>).map(([key, column]) => ({ key, name: column.name, column }));
  const map = (raw: Record<string, unknown>) => {
    const row: Record<string, unknown> = {};
    for (const { key, name, column } of columns) {
      const value = raw[name];
      row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    }
    return row as InferSelectModel<T>;
  };
  const lossy = columns.filter(({ column }) => ['PgBigInt64', 'PgNumeric', 'PgCustomColumn'].includes(column.columnType));
  return {
    of: (result) => rowsOf<Record<string, unknown>>(result).map(map),
    fromJson: (json) => {
      if (lossy.length > 0) throw new Error(`Rows of ${getTableName(table)} do not survive JSON (${lossy.map((c) => `${c.name} ${c.column.getSQLType()}`).join(', ')}): select their columns instead`);
      if (json === null || json === undefined) return undefined;
      return map((typeof json === 'string' ? JSON.parse(json) : json) as Record<string, unknown>);
    },
  };
}

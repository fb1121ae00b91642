// Columns that hold values sealed by the secret box (`SecretBox`, under ATRIUM_SECRET_KEY), declared
// by whoever keeps them (`Module.sealed`, and the platform's signing keys), and the walk that seals
// each again under the current key once ATRIUM_SECRET_KEY has changed (`atrium keys reencrypt`).
import { and, asc, getTableColumns, getTableName, gt, isNotNull, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../db/engine.ts';
import { rowsOf } from '../db/rows.ts';
import type { SecretBox } from './secrets.ts';

export interface SealedColumns {
  /** A table with a primary key of one column. */
  readonly table: PgTable;
  /** Its text columns holding boxes (null where there is none). */
  readonly columns: readonly PgColumn[];
}

/** What the walk found in one column. */
export interface SealedColumnReport {
  /** `<table>.<column>` */
  readonly column: string;
  /** Boxes read. */
  read: number;
  /** Sealed again under the current key (with `dryRun`: would be). */
  moved: number;
  /** Already under the current key. */
  current: number;
  /** Written by the service between the walk's read and its write: left as written then (run again to check it). */
  changed: number;
  /** Opened by no key: ATRIUM_SECRET_KEY_FALLBACKS lacks the key that sealed them. Left as they are. */
  unreadable: number;
}

const BATCH = 500;

export function columnName(declared: SealedColumns, column: PgColumn): string {
  return `${getTableName(declared.table)}.${column.name}`;
}

function primaryKeyOf(table: PgTable): PgColumn {
  const keys = Object.values(getTableColumns(table)).filter((column) => column.primary);
  if (keys.length !== 1) throw new Error(`${getTableName(table)}: sealed columns need a table with a primary key of one column`);
  return keys[0]!;
}

/**
 * Seals every box of these columns that a fallback key sealed again under the current key, `BATCH`
 * rows per statement, each row only if it still holds what was read (a change the service made
 * meanwhile stays). Idempotent: a second run finds nothing to move. `progress` hears of each batch.
 */
export async function reencryptSealed(db: Db, box: SecretBox, declared: readonly SealedColumns[], options: { dryRun: boolean; progress?: (report: SealedColumnReport) => void }): Promise<SealedColumnReport[]> {
  const reports: SealedColumnReport[] = [];
  for (const sealed of declared) {
    const key = primaryKeyOf(sealed.table);
    for (const column of sealed.columns) {
      const report: SealedColumnReport = { column: columnName(sealed, column), read: 0, moved: 0, current: 0, changed: 0, unreadable: 0 };
      reports.push(report);
      for (let after: string | undefined; ;) {
        const rows = await db.select({ key: sql<string>`${key}::text`, value: sql<string>`${column}` }).from(sealed.table)
          .where(and(isNotNull(column), after === undefined ? undefined : gt(key, after))).orderBy(asc(key)).limit(BATCH);
        const moves: { key: string; was: string; sealed: string }[] = [];
        for (const row of rows) {
          report.read += 1;
          let resealed;
          try {
            resealed = box.reseal(row.value);
          } catch {
            report.unreadable += 1;
            continue;
          }
          if (resealed === undefined) report.current += 1;
          else moves.push({ key: row.key, was: row.value, sealed: resealed });
        }
        if (options.dryRun) report.moved += moves.length;
        else if (moves.length > 0) {
          const written = rowsOf(await db.execute(sql`
            update ${sealed.table} set ${sql.identifier(column.name)} = v.sealed
            from jsonb_to_recordset(${JSON.stringify(moves)}::jsonb) as v(key text, was text, sealed text)
            where ${key} = v.key::${sql.raw(key.getSQLType())} and ${column} = v.was
            returning 1`)).length;
          report.moved += written;
          report.changed += moves.length - written;
        }
        options.progress?.(report);
        if (rows.length < BATCH) break;
        after = rows.at(-1)!.key;
      }
    }
  }
  return reports;
}

// Writes that fail on purpose, as a full disk or a lost connection would at that point: a trigger
// refuses the inserts into one table that match a condition, for as long as `fn` runs.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db } from '../../src/platform/db/engine.ts';

/** Runs `fn` while inserts into `table` for which `when` (SQL over `new`) holds raise `message`. */
export async function whileInsertsFail<T>(db: Db, table: string, when: string, message: string, fn: () => Promise<T>): Promise<T> {
  const name = `test_refuse_${randomUUID().replace(/-/g, '')}`;
  await db.execute(sql.raw(`create function ${name}() returns trigger language plpgsql as $$
    begin raise exception '${message.replace(/'/g, "''")}'; end $$`));
  await db.execute(sql.raw(`create trigger ${name} before insert on ${table} for each row when (${when}) execute function ${name}()`));
  try {
    return await fn();
  } finally {
    await db.execute(sql.raw(`drop trigger ${name} on ${table}`));
    await db.execute(sql.raw(`drop function ${name}()`));
  }
}

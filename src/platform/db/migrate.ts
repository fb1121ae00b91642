// Applies migrations/NNNN_name.sql in order, once each. All pending files run in one transaction under
// an advisory lock, so instances booting together on one PostgreSQL never apply a file twice, and a
// failing file leaves the schema as it was.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from './engine.ts';

export const migrationsDir = new URL('../../../migrations/', import.meta.url).pathname;

const MIGRATION_LOCK_KEY = 72_616_000; // arbitrary constant shared by all Atrium instances

export async function migrate(database: Database, dir = migrationsDir): Promise<string[]> {
  const files = readdirSync(dir).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return database.scriptTransaction(async (run) => {
    await run(`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
    await run('create table if not exists schema_migrations (version text primary key, applied_at timestamptz not null default now())');
    const applied = new Set((await run('select version from schema_migrations')).map((r) => String(r.version)));
    const pending = files.filter((f) => !applied.has(f));
    for (const file of pending) {
      await run(readFileSync(join(dir, file), 'utf8'));
      await run(`insert into schema_migrations (version) values ('${file}')`);
    }
    return pending;
  });
}

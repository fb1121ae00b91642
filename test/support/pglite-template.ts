// A migrated PGlite data directory, built once and copied into every new service's data directory: a
// copy costs about half a second of CPU and opens at once, where a fresh directory costs PGlite's
// initdb, a second open and every migration (5–10 s of CPU). The PostgreSQL suites have the same
// thing as a template database on the run's cluster (service.ts). Tests whose point is a first boot
// (npm start, the README's quick start, the CLI's first run) start from an empty directory.
//
// The template lives in the system's temporary directory, named by what it is built from, so later
// runs (a single file run again and again) reuse it; test/run.ts sweeps `atrium-test-*` entries
// unused for a day, and each use renews the template's date.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../src/platform/db/engine.ts';
import { acquireDirLock, DirLockedError } from '../../src/platform/db/dir-lock.ts';
import { migrate, migrationsDir } from '../../src/platform/db/migrate.ts';


/** Named by the migrations, the PGlite release and this file, so a change to any builds a new one. */
function templateName(): string {
  const hash = createHash('sha256');
  hash.update(readFileSync(new URL(import.meta.url)));
  hash.update(readFileSync(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url)));
  for (const file of readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).sort()) {
    hash.update(file).update(readFileSync(join(migrationsDir, file)));
  }
  return `atrium-test-pglite-template-${hash.digest('hex').slice(0, 16)}`;
}

let built: Promise<string> | undefined;

/**
 * The template's path, building it if no process of the run has. Processes that find it being built
 * wait for it; one whose builder died (its lock's process is gone) takes the build over.
 */
export function pgliteTemplate(): Promise<string> {
  built ??= (async () => {
    const dir = join(tmpdir(), templateName());
    while (!existsSync(dir)) {
      let lock: { release(): void };
      try {
        lock = acquireDirLock(`${dir}.lock`);
      } catch (error) {
        if (!(error instanceof DirLockedError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      try {
        if (!existsSync(dir)) await build(dir);
      } finally {
        lock.release();
      }
    }
    // In use: not a day-old leftover for the next run's sweep.
    const now = new Date();
    utimesSync(dir, now, now);
    return dir;
  })();
  return built;
}

/**
 * Built beside its final name and renamed when complete: a build that dies leaves no template.
 * The cluster's template databases go: Atrium never creates a database, and without them a copy is
 * a third smaller (27 MB in 800 files instead of 41 MB in 1,260), which is most of what a copy costs.
 */
async function build(dir: string): Promise<void> {
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const database = await openDatabase({ dataDir: building });
  try {
    await migrate(database);
  } finally {
    await database.close();
  }
  const cluster = new PGlite(join(building, 'pglite'));
  try {
    await cluster.exec(`update pg_database set datistemplate = false where datname in ('template0', 'template1')`);
    await cluster.exec('drop database template0');
    await cluster.exec('drop database template1');
    await cluster.exec('checkpoint');
  } finally {
    await cluster.close();
  }
  renameSync(join(building, 'pglite'), dir);
  rmSync(building, { recursive: true, force: true });
}

/** Gives `dataDir` (new, or without a database yet) a migrated embedded database. */
export async function seedPglite(dataDir: string): Promise<void> {
  const template = await pgliteTemplate();
  cpSync(template, join(dataDir, 'pglite'), { recursive: true, errorOnExist: true, force: false });
}

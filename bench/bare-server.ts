// The baseline of `npm run bench`: a bare Fastify route doing the database work of Atrium's
// authenticated room read (the same select on the same `rooms` table and index, with the same
// driver), and nothing else: no auth, no validation, no schemas, no logging, no metrics.
//
//   GET /rooms/:project_id/:room_name  → the room row as JSON, 404 when missing
//   GET /healthz
//
// Settings (set by bench/lib.ts startBare):
//   BARE_PORT          port on 127.0.0.1
//   BARE_DATABASE_URL  PostgreSQL: Atrium's own database, through postgres-js (Atrium's driver),
//                      prepared statement, BARE_POOL_SIZE connections (Atrium's default pool: 20)
//   BARE_PGLITE_DIR    PGlite: a PGlite of its own in this dir (PGlite allows one process per dir),
//                      with the repository's migrations applied and BARE_SEED's project and room
//                      inserted, so table, index and row are those Atrium reads
//   BARE_SEED          {"project": {id, name}, "room": {id, name, metadata, annotations, permissions}}
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';

type Row = Record<string, unknown>;

const QUERY = 'select id, project_id, name, metadata, annotations, permissions, created_at, updated_at from rooms where project_id = $1 and name = $2';

async function pgliteLookup(dir: string, seed: { project: { id: string; name: string }; room: Row }): Promise<(projectId: string, name: string) => Promise<Row | undefined>> {
  const db = await PGlite.create(dir);
  const migrations = join(import.meta.dirname, '..', 'migrations');
  for (const file of readdirSync(migrations).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort()) {
    await db.exec(readFileSync(join(migrations, file), 'utf8'));
  }
  await db.query('insert into projects (id, name) values ($1, $2)', [seed.project.id, seed.project.name]);
  const { room } = seed;
  await db.query('insert into rooms (id, project_id, name, metadata, annotations, permissions) values ($1, $2, $3, $4, $5, $6)', [
    room.id, seed.project.id, room.name, JSON.stringify(room.metadata), JSON.stringify(room.annotations), JSON.stringify(room.permissions),
  ]);
  return async (projectId, name) => (await db.query<Row>(QUERY, [projectId, name])).rows[0];
}

function postgresLookup(url: string, poolSize: number): (projectId: string, name: string) => Promise<Row | undefined> {
  const sql = postgres(url, { max: poolSize, onnotice: () => {}, connection: { application_name: 'atrium-bench-bare' } });
  return async (projectId, name) => (await sql.unsafe<Row[]>(QUERY, [projectId, name], { prepare: true }))[0];
}

const port = Number(process.env.BARE_PORT ?? 0);
const seed = JSON.parse(process.env.BARE_SEED ?? 'null');
const lookup = process.env.BARE_DATABASE_URL
  ? postgresLookup(process.env.BARE_DATABASE_URL, Number(process.env.BARE_POOL_SIZE ?? 20))
  : await pgliteLookup(process.env.BARE_PGLITE_DIR!, seed);

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ ok: true }));
app.get<{ Params: { project_id: string; room_name: string } }>('/rooms/:project_id/:room_name', async (request, reply) => {
  const row = await lookup(request.params.project_id, request.params.room_name);
  if (!row) return reply.status(404).send({ error: 'not found' });
  return row;
});
await app.listen({ port, host: '127.0.0.1' });

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { app.close().finally(() => process.exit(0)); });

// The baseline of bench/services.ts: a bare Fastify route doing the database work of the room
// servers' services read (the room by name, then the project's and the room's services, with the
// same driver and prepared statements), answering the rows as JSON and nothing else: no auth,
// validation, schemas, logging, metrics, no decryption of sealed specs, no shadowing.
//
//   GET /rooms/:project_id/:room_name/services  → {"services": [{id, room_id, spec}]}
//   GET /healthz
//
// Settings (set by bench/services.ts):
//   BARE_PORT          port on 127.0.0.1
//   BARE_DATABASE_URL  PostgreSQL: Atrium's own database through postgres-js, BARE_POOL_SIZE connections
//   BARE_PGLITE_DIR    PGlite: its own data dir, migrations applied and BARE_SEED inserted
//   BARE_SEED          {"project": {id, name}, "room": {id, name}, "services": [{id, room_id, name, spec}]}
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Fastify from 'fastify';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';

type Row = Record<string, unknown>;
type Query = (text: string, params: unknown[]) => Promise<Row[]>;

const ROOM = 'select id from rooms where project_id = $1 and name = $2';
const SERVICES = 'select id, room_id, name, spec, spec_sealed from services where project_id = $1 and (room_id is null or room_id = $2) order by name, room_id nulls first';

async function pglite(dir: string, seed: { project: Row; room: Row; services: Row[] }): Promise<Query> {
  const db = await PGlite.create(dir);
  const migrations = join(import.meta.dirname, '..', 'migrations');
  for (const file of readdirSync(migrations).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort()) await db.exec(readFileSync(join(migrations, file), 'utf8'));
  await db.query('insert into projects (id, name) values ($1, $2)', [seed.project.id, seed.project.name]);
  await db.query('insert into rooms (id, project_id, name) values ($1, $2, $3)', [seed.room.id, seed.project.id, seed.room.name]);
  for (const s of seed.services) {
    await db.query('insert into services (id, project_id, room_id, name, spec) values ($1, $2, $3, $4, $5)', [s.id, seed.project.id, s.room_id, s.name, JSON.stringify(s.spec)]);
  }
  return async (text, params) => (await db.query<Row>(text, params)).rows;
}

function postgresQuery(url: string, poolSize: number): Query {
  const sql = postgres(url, { max: poolSize, onnotice: () => {}, connection: { application_name: 'atrium-bench-services-bare' } });
  return async (text, params) => sql.unsafe<Row[]>(text, params as never[], { prepare: true });
}

const query = process.env.BARE_DATABASE_URL
  ? postgresQuery(process.env.BARE_DATABASE_URL, Number(process.env.BARE_POOL_SIZE ?? 20))
  : await pglite(process.env.BARE_PGLITE_DIR!, JSON.parse(process.env.BARE_SEED!));

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ ok: true }));
app.get<{ Params: { project_id: string; room_name: string } }>('/rooms/:project_id/:room_name/services', async (request, reply) => {
  const [room] = await query(ROOM, [request.params.project_id, request.params.room_name]);
  if (!room) return reply.status(404).send({ error: 'not found' });
  const rows = await query(SERVICES, [request.params.project_id, room.id]);
  return { services: rows.map((r) => ({ id: r.id, room_id: r.room_id, spec: r.spec })) };
});
await app.listen({ port: Number(process.env.BARE_PORT ?? 0), host: '127.0.0.1' });

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { app.close().finally(() => process.exit(0)); });

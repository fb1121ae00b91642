// `preparedPerDb` runs a query-builder statement on the driver directly, with its own row mapper in
// place of Drizzle's (src/platform/db/statements.ts). Its rows must be exactly what Drizzle's own
// `execute` returns, for every kind of column the tables use, on both engines: compared here value
// for value, with nulls, a join (nested rows), a `sql<T>` field with its decoder, a write's
// `returning` and a write without; a failed statement keeps its SQLSTATE reachable for the error mapper.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { and, eq, sql } from 'drizzle-orm';
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import type { Db } from '../../src/platform/db/engine.ts';
import { rowsOf, tableRows } from '../../src/platform/db/rows.ts';
import { preparedPerDb } from '../../src/platform/db/statements.ts';
import { emptyThing, fullThing, THINGS_DDL, things } from '../support/column-kinds.ts';
import { forEachEngine, startTestService, type TestService } from '../support/service.ts';

const parts = pgTable('prepared_parts', {
  id: integer('id').primaryKey(),
  thingId: integer('thing_id').notNull(),
  label: text('label'),
});

// Built once each, as the application's hot statements are.
const byName = (db: Db) => db.select().from(things).where(eq(things.name, sql.placeholder('name')));
const joined = (db: Db) => db.select({ thing: things, part: parts, upper: sql<string>`upper(${parts.label})`, n: sql`${parts.id} * 2`.mapWith(Number) })
  .from(parts).innerJoin(things, eq(things.id, parts.thingId))
  .where(and(eq(things.name, sql.placeholder('name')), eq(parts.id, sql.placeholder('part'))));
const insert = (db: Db) => db.insert(things).values({
  id: sql.placeholder('id'), name: sql.placeholder('name'), at: sql.placeholder('at'), data: sql.placeholder('data'),
}).returning();

const leanByName = preparedPerDb((db) => byName(db).prepare('lean_by_name'));
const leanJoined = preparedPerDb((db) => joined(db).prepare('lean_joined'));
const leanInsert = preparedPerDb((db) => insert(db).prepare('lean_insert'));

forEachEngine('statements run on the driver directly', (engine) => {
  let service: TestService;
  let db: Db;
  before(async () => {
    service = await startTestService(engine);
    db = service.ctx.database.db;
    await db.execute(sql.raw(THINGS_DDL));
    await db.execute(sql`create table prepared_parts (id int primary key, thing_id int not null, label text)`);
    // `stamps` (a timestamptz[] custom type without a driver encoder) is for PGlite's own test:
    // postgres-js cannot send a JavaScript array for it.
    await db.insert(things).values([{ ...fullThing(1), name: 'full', stamps: null }, { ...emptyThing(2), name: 'empty' }]);
    await db.insert(parts).values([{ id: 1, thingId: 1, label: 'wheel' }, { id: 2, thingId: 1, label: null }]);
  });
  after(() => service?.stop());

  test('a select: the same rows as Drizzle\'s execute, nulls included', async () => {
    for (const name of ['full', 'empty', 'missing']) {
      const expected = await byName(db).prepare(`drizzle_by_name_${name}`).execute({ name });
      assert.deepStrictEqual(await leanByName(db).execute({ name }), expected, name);
    }
    const [full] = await leanByName(db).execute({ name: 'full' });
    assert.ok(full!.at instanceof Date && full!.at.toISOString() === '2026-11-26T01:02:03.456Z');
    assert.equal(full!.big, 9007199254740993n);
    assert.ok(Buffer.isBuffer(full!.blob));
  });

  test('a join and sql fields: nested rows and each field\'s decoder, as Drizzle maps them', async () => {
    for (const part of [1, 2]) {
      const expected = await joined(db).prepare(`drizzle_joined_${part}`).execute({ name: 'full', part });
      const rows = await leanJoined(db).execute({ name: 'full', part });
      assert.deepStrictEqual(rows, expected);
      assert.equal(rows[0]!.n, part * 2);
    }
  });

  test('a write with returning, and a failure that keeps its SQLSTATE', async () => {
    const values = { id: 3, name: 'inserted', at: new Date('2026-11-26T00:00:00.001Z'), data: { x: 1 } };
    const [row] = await leanInsert(db).execute(values);
    assert.deepStrictEqual(row, (await byName(db).prepare('drizzle_inserted').execute({ name: 'inserted' }))[0]);
    const failure = await leanInsert(db).execute({ ...values, id: 4 }).then(() => undefined, (error: unknown) => error);
    assert.ok(failure instanceof Error, 'a duplicate name is refused');
    assert.equal((failure.cause as { code?: string } | undefined)?.code, '23505');
  });

  test('what it cannot map the way Drizzle does is refused when prepared, not misread later', () => {
    const leftJoin = preparedPerDb((handle) => handle.select().from(things).leftJoin(parts, eq(parts.thingId, things.id)).prepare('lean_left'));
    assert.throws(() => leftJoin(db), /outer joins are not supported/);
  });

  test('a write without returning runs and yields no rows', async () => {
    const remove = preparedPerDb((handle) => handle.delete(parts).where(eq(parts.id, sql.placeholder('id'))).prepare('lean_delete'));
    await db.insert(parts).values({ id: 99, thingId: 1, label: 'gone' });
    assert.deepStrictEqual(await remove(db).execute({ id: 99 }), []);
    assert.deepStrictEqual(await db.select().from(parts).where(eq(parts.id, 99)), []);
  });

  test('table rows of raw SQL (platform/db/rows.ts): the same rows as the query builder\'s, by the table\'s own columns', async () => {
    // `stamps` has no driver decoder on postgres-js (see above): compared on the other columns there.
    const { stamps: _stamps, ...columns } = things;
    const select = engine === 'pglite' ? things : columns;
    for (const name of ['full', 'empty']) {
      const expected = await db.select().from(things).where(eq(things.name, name));
      const raw = tableRows(things).of(await db.execute(sql`select * from things where name = ${name}`));
      const pick = (rows: Record<string, unknown>[]) => rows.map((row) => Object.fromEntries(Object.keys(select).map((key) => [key, row[key]])));
      assert.deepStrictEqual(pick(raw), pick(expected), name);
    }
    // Through JSON: a table whose columns all survive it (no bytes, no digits JSON loses).
    const [part] = await db.select().from(parts).where(eq(parts.id, 1));
    const [json] = rowsOf<{ row: unknown }>(await db.execute(sql`select row_to_json(p) as row from prepared_parts p where id = 1`));
    assert.deepStrictEqual(tableRows(parts).fromJson(json!.row), part);
    assert.equal(tableRows(parts).fromJson(null), undefined);
    assert.throws(() => tableRows(things).fromJson({}), /Rows of things do not survive JSON \(blob bytea, amount numeric, big bigint/);
  });
});

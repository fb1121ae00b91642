import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { messages, PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { preparedStatements } from '../../src/platform/db/pglite-statements.ts';
import { emptyThing, fullThing, THINGS_DDL, things } from '../support/column-kinds.ts';

let client: PGlite;
before(async () => {
  client = await PGlite.create();
  await client.exec(THINGS_DDL);
});
after(async () => { await client.close(); });

const prepared = () => preparedStatements(client);
const names = async () => (await client.query<{ name: string }>("select name from pg_prepared_statements order by split_part(name, '_', 2)::int")).rows.map((r) => r.name);

test('Drizzle reads and writes the same values through named statements as through PGlite.query', async () => {
  const plain = drizzle(client);
  const named = drizzle({ client: prepared() as PGlite });
  await plain.insert(things).values([fullThing(1), emptyThing(2)]);
  await named.insert(things).values([fullThing(3), emptyThing(4)]);
  for (let run = 0; run < 2; run++) {
    const fromPlain = await plain.select().from(things).orderBy(things.id);
    const fromNamed = await named.select().from(things).orderBy(things.id);
    assert.deepEqual(fromNamed, fromPlain);
    assert.deepEqual(fromNamed.map((r) => r.id), [1, 2, 3, 4]);
    assert.deepEqual({ ...fromNamed[2], id: 1, name: 'n1' }, fromNamed[0], 'written through either, read back the same');
    assert.deepEqual({ ...fromNamed[3], id: 2 }, fromNamed[1]);
    const raw = sql`select * from things where id = ${3}`;
    assert.deepEqual((await named.execute(raw)).rows, (await plain.execute(raw)).rows);
  }
  await client.exec('delete from things');
});

test('a query runs as one named statement, prepared once', async () => {
  const q = prepared();
  const before = (await names()).length;
  for (let i = 0; i < 3; i++) assert.deepEqual((await q.query('select $1::int + 1 as n', [i])).rows, [{ n: i + 1 }]);
  assert.equal((await names()).length, before + 1);
});

test('errors keep PGlite’s class and fields (code, constraint, detail, query, params)', async () => {
  const q = prepared();
  const insert = 'insert into things (id, name) values ($1, $2)';
  await q.query(insert, [10, 'dup']);
  const failure = async (run: () => Promise<unknown>) => run().then(() => assert.fail('no error'), (error: unknown) => error as messages.DatabaseError & { query?: string; params?: unknown[] });
  for (let run = 0; run < 2; run++) {
    const named = await failure(() => q.query(insert, [11, 'dup']));
    const plain = await failure(() => client.query(insert, [11, 'dup']));
    assert.ok(named instanceof messages.DatabaseError);
    assert.equal(named.code, '23505');
    assert.equal(named.constraint, 'things_name_key');
    for (const field of ['message', 'code', 'constraint', 'detail', 'table', 'severity', 'query'] as const) assert.equal(named[field], plain[field], field);
    assert.deepEqual(named.params, [11, 'dup']);
  }
  const syntax = await failure(() => q.query('selec 1'));
  assert.equal(syntax.code, '42601');
  assert.equal((await q.query(insert, [11, 'fine'])).affectedRows, 1, 'the session is usable after errors');
  await client.exec('delete from things');
});

test('a schema change between runs of the same text is picked up', async () => {
  const q = prepared();
  await client.exec("create table shapes (id int primary key, v int); insert into shapes values (1, 7)");
  const select = 'select * from shapes where id = $1';
  assert.deepEqual((await q.query(select, [1])).rows, [{ id: 1, v: 7 }]);
  await client.exec("alter table shapes add column label text default 'x'");
  assert.deepEqual((await q.query(select, [1])).rows, [{ id: 1, v: 7, label: 'x' }]);
  await client.exec('alter table shapes alter column v type text');
  assert.deepEqual((await q.query(select, [1])).rows, [{ id: 1, v: '7', label: 'x' }]);
  await client.exec('deallocate all');
  assert.deepEqual((await q.query(select, [1])).rows, [{ id: 1, v: '7', label: 'x' }], 'a statement that is gone is prepared again');
  // Inside a transaction the failed run has aborted it: the error surfaces, the next run works.
  await client.exec('alter table shapes drop column label');
  const tx = q.transaction(async (t) => t.query(select, [1]));
  await assert.rejects(tx, { code: '0A000' });
  assert.deepEqual((await q.query(select, [1])).rows, [{ id: 1, v: '7' }]);
  await client.exec('drop table shapes');
});

test('the least recently used statements are evicted and closed', async () => {
  await client.exec('deallocate all');
  const q = preparedStatements(client, { capacity: 2 });
  const a = 'select 1 as a', b = 'select 2 as b', c = 'select 3 as c';
  await q.query(a);
  await q.query(b);
  await q.query(a);
  const [first, second] = await names();
  await q.query(c); // evicts b, the least recently used
  const third = (await names()).find((name) => name !== first && name !== second)!;
  assert.deepEqual(new Set(await names()), new Set([first, third]));
  assert.deepEqual((await q.query(b)).rows, [{ b: 2 }], 'an evicted text is prepared again');
  assert.equal((await names()).length, 2);
  assert.ok(!(await names()).includes(first!), 'a, now least recently used, was closed');
  assert.deepEqual((await q.query(a)).rows, [{ a: 1 }]);
  assert.equal((await names()).length, 2);
});

test('transactions commit, roll back, nest and keep other queries out until they end', async () => {
  const db = drizzle({ client: prepared() as PGlite });
  const count = async () => (await db.select({ n: sql<number>`count(*)::int` }).from(things))[0]!.n;
  await db.transaction(async (tx) => { await tx.insert(things).values({ id: 20 }); });
  assert.equal(await count(), 1);
  await assert.rejects(db.transaction(async (tx) => {
    await tx.insert(things).values({ id: 21 });
    throw new Error('undo');
  }), /undo/);
  await db.transaction(async (tx) => {
    await tx.insert(things).values({ id: 22 });
    tx.rollback();
  }).catch(() => {});
  await assert.rejects(db.transaction(async (tx) => {
    await tx.insert(things).values({ id: 23 });
    await tx.insert(things).values({ id: 20 });
  }), (error: Error) => (error.cause as messages.DatabaseError).code === '23505');
  await db.transaction(async (tx) => {
    await tx.insert(things).values({ id: 24 });
    await tx.transaction(async (inner) => {
      await inner.insert(things).values({ id: 25 });
      inner.rollback();
    }).catch(() => {});
  });
  assert.deepEqual((await db.select({ id: things.id }).from(things).orderBy(things.id)).map((r) => r.id), [20, 24]);

  let outside: Promise<number> | undefined;
  await db.transaction(async (tx) => {
    await tx.insert(things).values({ id: 26 });
    outside = count();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await tx.insert(things).values({ id: 27 });
  });
  assert.equal(await outside, 4, 'the outside query ran after the commit, not inside the transaction');
  await client.exec('delete from things');
});

// A table with every kind of column Atrium's tables use (timestamps as Dates and as text, jsonb,
// bytea, numeric, bigint, arrays), for tests that check a query path reads and writes each kind
// exactly as Drizzle's own does.
import { bigint, customType, integer, jsonb, numeric, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { bytea, timestamptz } from '../../src/platform/db/columns.ts';

export const things = pgTable('things', {
  id: integer('id').primaryKey(),
  name: text('name').unique(),
  at: timestamptz('at'),
  atText: timestamp('at_text', { withTimezone: true, mode: 'string' }),
  data: jsonb('data'),
  blob: bytea('blob'),
  amount: numeric('amount'),
  big: bigint('big', { mode: 'bigint' }),
  tags: text('tags').array(),
  counts: integer('counts').array(),
  stamps: customType<{ data: string[] }>({ dataType: () => 'timestamptz[]' })('stamps'),
});

export const THINGS_DDL = `create table things (id int primary key, name text unique, at timestamptz, at_text timestamptz,
  data jsonb, blob bytea, amount numeric, big bigint, tags text[], counts int[], stamps timestamptz[])`;

/** A row with a value in every column, values chosen to trip a careless codec (precision, escaping, NULs in bytea). */
export const fullThing = (id: number) => ({
  id,
  name: `n${id}`,
  at: new Date('2026-11-26T01:02:03.456Z'),
  atText: '2026-11-26 01:02:03.456789+00',
  data: { a: [1, 'two', null], b: { c: true } },
  blob: Buffer.from([0, 1, 2, 255]),
  amount: '12345678901234567890.123',
  big: 9007199254740993n,
  tags: ['x', 'y z', 'é', 'd"e,f'],
  counts: [1, 2, 3],
  stamps: ['2026-11-26 01:02:03+00'],
});

/** A row with every nullable column null. */
export const emptyThing = (id: number) => ({ id, name: null, at: null, atText: null, data: null, blob: null, amount: null, big: null, tags: null, counts: null, stamps: null });

// The emitting statement is built once per event type and cause name and reused: a second cause
// under the same name would silently run the first one's SQL, so it is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'drizzle-orm';
import { Type } from 'typebox';
import type { Db } from '../../src/platform/db/engine.ts';
import { defineEvent } from '../../src/platform/events/catalogue.ts';
import { Events, type SingleCause } from '../../src/platform/events/emit.ts';

test('a cause name belongs to one builder per event type', async () => {
  const happened = defineEvent('thing.happened', Type.Object({ n: Type.Number() }), { description: 'test' });
  const events = new Events([happened]);
  // A handle whose every statement answers as the emitting statement does; the text is recorded.
  const texts: string[] = [];
  const db = { _: { session: { prepareQuery: (query: { sql: string }) => ({ execute: async () => { texts.push(query.sql); return [{ stored: 1 }]; } }) } } } as unknown as Db;
  const build = (table: string) => (): SingleCause => ({ ctes: sql.raw(`change as (select 1 from ${table})`), happened: sql`true`, result: sql`1 as one` });
  const first = build('a');
  await events.emitWithCause(db, crypto.randomUUID(), happened, { n: 1 }, { name: 'change', build: first, values: {} });
  await events.emitWithCause(db, crypto.randomUUID(), happened, { n: 2 }, { name: 'change', build: first, values: {} });
  assert.equal(texts.length, 2);
  assert.equal(texts[0], texts[1], 'the same text, built once');
  await assert.rejects(
    events.emitWithCause(db, crypto.randomUUID(), happened, { n: 3 }, { name: 'change', build: build('b'), values: {} }),
    /Two causes of thing\.happened are named "change"/,
  );
  await events.emitWithCause(db, crypto.randomUUID(), happened, { n: 4 }, { name: 'other change', build: build('b'), values: {} });
  assert.match(texts.at(-1)!, /from b/);
});

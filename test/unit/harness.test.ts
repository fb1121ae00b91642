// Checks the test harness itself: the throwaway PostgreSQL cluster from test/run.ts is reachable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { pgUrl, requireOrSkip } from '../support/env.ts';

test('throwaway PostgreSQL cluster accepts queries', async (t) => {
  if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
  const sql = postgres(pgUrl as string, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql`select 1 as one, current_database() as db`;
    assert.equal(row.one, 1);
    assert.equal(row.db, new URL(pgUrl as string).pathname.slice(1));
    const [{ max_connections }] = await sql`select current_setting('max_connections')::int as max_connections`;
    assert.ok(max_connections >= 100, `max_connections is ${max_connections}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
});

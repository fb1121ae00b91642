// Request budgets spent from leases (src/platform/limits/leases.ts) over an in-memory stand-in for
// the database's counters (test/support/memory-counters.ts): never more than the limit over all
// instances, few statements for a busy key, concurrent hits waiting on one reservation, and a new
// window after the last one ends. The same over the real database and two instances:
// test/integration/cluster-limits.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LeasedBudget } from '../../src/platform/limits/leases.ts';
import { memoryCounters } from '../support/memory-counters.ts';

test('two instances together allow at most the limit, and refuse at most one block each early', async () => {
  const now = () => 1_000_000;
  const { counters, asked } = memoryCounters(now);
  const limit = 160; // blocks grow to 10
  const instances = [new LeasedBudget(counters, limit, 60_000, now), new LeasedBudget(counters, limit, 60_000, now)];
  let allowed = 0;
  for (let i = 0; i < 400; i += 1) if ((await instances[i % 2]!.take('k')).allowed) allowed += 1;
  assert.ok(allowed <= limit, `${allowed} allowed`);
  assert.ok(allowed >= limit - 2 * 10, `${allowed} allowed`);
  assert.ok(asked.length < 40, `${asked.length} statements for 400 hits`);
});

test('a busy key costs a statement per block; concurrent hits share one reservation; refusals ask nothing', async () => {
  const now = () => 2_000_000;
  const { counters, asked, windows } = memoryCounters(now);
  const budget = new LeasedBudget(counters, 1600, 60_000, now); // blocks 1, 2, 4, … up to 100
  const first = await Promise.all(Array.from({ length: 50 }, () => budget.take('busy')));
  assert.ok(first.every((take) => take.allowed));
  assert.ok(asked.length <= 7, `${asked.length} statements for 50 concurrent hits`);
  let allowed = 50;
  while ((await budget.take('busy')).allowed) allowed += 1;
  assert.equal(allowed, 1600, 'alone, an instance spends the whole budget');
  assert.equal(windows.get('busy')!.count, 1600);
  const statements = asked.length;
  assert.ok(statements < 30, `${statements} statements for 1,600 hits`);
  const refused = await budget.take('busy');
  assert.deepEqual(refused, { allowed: false, resetAt: 2_000_000 + 60_000 });
  assert.equal(asked.length, statements, 'a refusal in an exhausted window sends nothing');
  assert.equal((await budget.take('other')).allowed, true, 'another key has its own budget');
});

test('the window ends (injected clock): the budget comes back from a block of one', async () => {
  let now = 3_000_000;
  const { counters, windows } = memoryCounters(() => now);
  const budget = new LeasedBudget(counters, 3, 30_000, () => now);
  for (let i = 0; i < 3; i += 1) assert.equal((await budget.take('k')).allowed, true);
  now += 10_000;
  assert.deepEqual(await budget.take('k'), { allowed: false, resetAt: 3_030_000 });
  now += 20_000;
  assert.deepEqual(await budget.take('k'), { allowed: true, resetAt: 3_060_000 });
  assert.equal(windows.get('k')!.count, 1, 'the new window counts what was reserved in it');
});

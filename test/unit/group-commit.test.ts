import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GroupCommit } from '../../src/platform/db/group-commit.ts';

/** A write that records what it was given and finishes when told to. */
function controlledWrite() {
  const writes: string[][] = [];
  const finish: (() => void)[] = [];
  const write = async (items: string[]) => {
    writes.push(items);
    await new Promise<void>((resolve) => finish.push(resolve));
    return items.map((item) => `${item}:${writes.length}`);
  };
  return { writes, finish, write };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('items added in one turn share the first write; those arriving while it is on its way share the next', async () => {
  const { writes, finish, write } = controlledWrite();
  const commit = new GroupCommit(write);
  const first = [commit.add('g', 'a'), commit.add('g', 'b')];
  await turn();
  assert.deepEqual(writes, [['a', 'b']]);
  const second = [commit.add('g', 'c'), commit.add('g', 'd'), commit.add('g', 'e')];
  await turn();
  assert.equal(writes.length, 1, 'nothing more is sent while a write of the group is on its way');
  finish.shift()!();
  assert.deepEqual(await Promise.all(first), ['a:1', 'b:1'], 'each item gets its own result');
  await turn();
  assert.deepEqual(writes, [['a', 'b'], ['c', 'd', 'e']]);
  finish.shift()!();
  assert.deepEqual(await Promise.all(second), ['c:2', 'd:2', 'e:2']);
});

test('groups are written independently', async () => {
  const { writes, finish, write } = controlledWrite();
  const commit = new GroupCommit(write);
  const answers = [commit.add('g1', 'a'), commit.add('g2', 'b'), commit.add('g1', 'c')];
  await turn();
  assert.deepEqual(writes.map((w) => w.join()).sort(), ['a,c', 'b']);
  for (const done of finish.splice(0)) done();
  assert.equal((await Promise.all(answers)).length, 3);
});

test('a failed write rejects its own items only; the group carries on', async () => {
  let calls = 0;
  const commit = new GroupCommit(async (items: number[]) => {
    calls += 1;
    if (calls === 1) throw new Error('the database is away');
    return items.map((n) => n * 2);
  });
  const failed = [commit.add('g', 1), commit.add('g', 2)];
  await Promise.all(failed.map((p) => assert.rejects(p, /the database is away/)));
  assert.deepEqual(await Promise.all([commit.add('g', 3), commit.add('g', 4)]), [6, 8]);
});

test('a lingering group waits for items spread over time, and flush sends it at once', async () => {
  const { writes, finish, write } = controlledWrite();
  const commit = new GroupCommit(write, { lingerMs: 60_000 });
  const early = commit.add('g', 'a');
  await turn();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const late = commit.add('g', 'b');
  await turn();
  assert.deepEqual(writes, [], 'nothing is sent before the linger ends');
  const flushed = commit.flush();
  assert.deepEqual(writes, [['a', 'b']], 'flush sends what lingers, together');
  let flushDone = false;
  void flushed.then(() => { flushDone = true; });
  await turn();
  assert.equal(flushDone, false, 'flush waits for the write under way');
  finish.shift()!();
  await flushed;
  assert.deepEqual(await Promise.all([early, late]), ['a:1', 'b:1']);
});

test('a lingering group is sent when its linger ends', async () => {
  const { writes, finish, write } = controlledWrite();
  const commit = new GroupCommit(write, { lingerMs: 30 });
  const answer = commit.add('g', 'a');
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.deepEqual(writes, [['a']]);
  finish.shift()!();
  assert.equal(await answer, 'a:1');
  await commit.flush();
});

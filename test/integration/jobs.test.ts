// The transactional outbox on both engines: jobs commit with the caller's transaction, run once per
// lease, survive a dead worker (the lease expires), retry on an injected clock, and are shared by
// several workers without running twice.
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { openDatabase, type Database } from '../../src/platform/db/engine.ts';
import { claimJobs, enqueue, enqueueWithSql, JOBS_CHANNEL, jobsTable, settleJobs, type ClaimedJob, type JobSettlement } from '../../src/platform/jobs/outbox.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { JobWorker, recordTogether, type JobHandler, type JobResult, type JobWorkerOptions, type RecordWriter } from '../../src/platform/jobs/worker.ts';
import { FakeClock } from '../support/clock.ts';
import { forEachEngine, isolatedDatabase } from '../support/service.ts';
import { sleep } from '../support/webhooks.ts';

// A full collection on demand, to check what the worker still holds.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

forEachEngine('jobs outbox', (engine) => {
  let database: Database;
  let drop: () => Promise<void>;
  before(async () => {
    const isolated = await isolatedDatabase(engine);
    drop = isolated.drop;
    database = await openDatabase({ databaseUrl: isolated.env.DATABASE_URL, dataDir: isolated.dataDir, poolSize: 10 });
  });
  after(async () => {
    await database?.close();
    await drop?.();
  });

  /** A topic of its own per test, so tests never see each other's jobs. */
  const topic = () => `test.${crypto.randomUUID()}`;
  const worker = (handlers: JobHandler[], options: Partial<JobWorkerOptions> = {}) =>
    new JobWorker(database, { handlers, concurrency: 20, batchSize: 10, pollMs: 1000, leaseMs: 30_000, log, ...options });
  const jobsOf = async (t: string) => database.db.select().from(jobsTable).where(sql`${jobsTable.topic} = ${t}`);

  test('a job commits and rolls back with the transaction that enqueued it', async () => {
    const t = topic();
    const ran: unknown[] = [];
    const w = worker([{ topic: t, run: async (job) => { ran.push(job.payload.n); return {}; } }]);
    await assert.rejects(database.db.transaction(async (tx) => {
      await enqueue(tx, { topic: t, payload: { n: 1 } });
      throw new Error('the change failed');
    }), /the change failed/);
    assert.equal(await w.drain(), 0);
    await database.db.transaction(async (tx) => {
      await enqueue(tx, [{ topic: t, payload: { n: 2 } }, { topic: t, payload: { n: 3 } }]);
    });
    assert.equal(await w.drain(), 2);
    assert.deepEqual(ran.sort(), [2, 3]);
    assert.deepEqual(await jobsOf(t), [], 'finished jobs are removed');
  });

  test('enqueueing an empty list writes nothing and is no error (callers pass what their change produced)', async () => {
    assert.equal(await database.db.transaction((tx) => enqueue(tx, [])), 0);
  });

  test('run times, handler retries and their records follow the injected clock', async () => {
    const t = topic();
    const clock = new FakeClock();
    const attempts: number[] = [];
    const handler: JobHandler = {
      topic: t,
      async run(job): Promise<JobResult> {
        attempts.push(job.attempts);
        const note = async (tx: Parameters<NonNullable<JobResult['record']>>[0]) => {
          await tx.execute(sql`update jobs set payload = payload || ${JSON.stringify({ noted: job.attempts })}::jsonb where id = ${job.id}::bigint`);
        };
        return job.attempts < 3 ? { retryAt: new Date(clock.now().getTime() + 60_000), error: `try ${job.attempts}`, record: note } : {};
      },
    };
    const w = worker([handler], { clock });
    await database.db.transaction((tx) => enqueue(tx, { topic: t, runAt: new Date(clock.now().getTime() + 10_000) }));
    assert.equal(await w.drain(), 0, 'not due yet');
    clock.advance(10_000);
    assert.equal(await w.drain(), 1);
    const [row] = await jobsOf(t);
    assert.equal(row!.lastError, 'try 1');
    assert.equal(row!.runAt.getTime(), clock.now().getTime() + 60_000);
    assert.deepEqual(row!.payload, { noted: 1 }, 'the record committed with the retry');
    clock.advance(59_000);
    assert.equal(await w.drain(), 0);
    clock.advance(1000);
    assert.equal(await w.drain(), 1);
    clock.advance(60_000);
    assert.equal(await w.drain(), 1);
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.deepEqual(await jobsOf(t), []);
  });

  test('records written together: one write per settlement for the items of its jobs; a failing item is retried alone', async () => {
    const t = topic();
    const clock = new FakeClock();
    const writes: number[][] = [];
    const writer: RecordWriter<number> = {
      async write(tx, items) {
        writes.push([...items]);
        if (items.includes(3)) throw new Error('item 3 cannot be written');
        await tx.execute(sql`select 1`);
      },
    };
    const w = worker([{ topic: t, run: async (job) => ({ recordTogether: recordTogether(writer, Number(job.payload.n)) }) }], { clock });
    await database.db.transaction((tx) => enqueue(tx, Array.from({ length: 8 }, (_, i) => ({ topic: t, payload: { n: i } }))));
    assert.equal(await w.drain(), 8);
    assert.deepEqual([...writes[0]!].sort(), [0, 1, 2, 3, 4, 5, 6, 7], 'the jobs claimed together are written in one call');
    assert.deepEqual(writes.slice(1).map((items) => items.length), Array(8).fill(1), 'after the failure, one by one');
    const rows = await jobsOf(t);
    assert.deepEqual(rows.map((r) => r.payload), [{ n: 3 }], 'only the job whose item failed is left, to retry');
    assert.match(rows[0]!.lastError ?? '', /item 3 cannot be written/);
  });

  test('a handler that throws backs off exponentially and ends dead after maxAttempts', async () => {
    const t = topic();
    const clock = new FakeClock();
    const w = worker([{ topic: t, maxAttempts: 3, run: async () => { throw new Error('boom'); } }], { clock });
    await database.db.transaction((tx) => enqueue(tx, { topic: t }));
    assert.equal(await w.drain(), 1);
    let [row] = await jobsOf(t);
    const firstWait = row!.runAt.getTime() - clock.now().getTime();
    assert.ok(firstWait >= 800 && firstWait <= 1200, `first backoff ${firstWait} ms`);
    clock.advance(1200);
    assert.equal(await w.drain(), 1);
    [row] = await jobsOf(t);
    const secondWait = row!.runAt.getTime() - clock.now().getTime();
    assert.ok(secondWait >= 1600 && secondWait <= 2400, `second backoff ${secondWait} ms`);
    clock.advance(2400);
    assert.equal(await w.drain(), 1);
    [row] = await jobsOf(t);
    assert.equal(row!.status, 'dead');
    assert.equal(row!.lastError, 'boom');
    clock.advance(86400_000);
    assert.equal(await w.drain(), 0, 'dead jobs never run');
  });

  test('a dead worker\'s job runs again after its lease', async () => {
    const t = topic();
    const clock = new FakeClock();
    const recorded: string[] = [];
    await database.db.transaction((tx) => enqueue(tx, { topic: t, payload: { n: 1 } }));
    // A worker claims the job and dies (it never settles).
    const [lost] = await claimJobs(database.db, { topics: [t], limit: 10, now: clock.now(), leaseMs: 30_000, leaseToken: crypto.randomUUID() });
    assert.ok(lost);
    const w = worker([{ topic: t, run: async (job) => ({ record: async () => { recorded.push(`by ${job.leaseToken}`); } }) }], { clock });
    clock.advance(29_000);
    assert.equal(await w.drain(), 0, 'leased: nobody else takes it');
    clock.advance(2000);
    assert.equal(await w.drain(), 1, 'lease expired: it runs again');
    assert.equal(recorded.length, 1);
  });

  test('a worker whose lease expired cannot settle a job another worker holds; the holder\'s settlement wins', async () => {
    const t = topic();
    const clock = new FakeClock();
    await database.db.transaction((tx) => enqueue(tx, { topic: t, payload: { n: 1 } }));
    const claim = (leaseMs = 30_000) => claimJobs(database.db, { topics: [t], limit: 10, now: clock.now(), leaseMs, leaseToken: crypto.randomUUID() });
    const settle = (settlements: JobSettlement[]) => database.db.transaction((tx) => settleJobs(tx, settlements));
    // The late worker claims, stalls past its lease, and another worker takes the job over.
    const [late] = await claim();
    clock.advance(31_000);
    const [holder] = await claim();
    assert.ok(late && holder && holder.id === late.id && holder.leaseToken !== late.leaseToken);
    const [held] = await jobsOf(t);
    assert.equal(held!.leaseToken, holder.leaseToken);
    assert.equal(held!.attempts, 2);

    // Every outcome the late worker could report changes nothing while the holder runs the job.
    const later = new Date(clock.now().getTime() + 3600_000);
    for (const settlement of [
      { id: late.id, leaseToken: late.leaseToken, kind: 'done' },
      { id: late.id, leaseToken: late.leaseToken, kind: 'retry', runAt: later, error: 'late retry' },
      { id: late.id, leaseToken: late.leaseToken, kind: 'dead', runAt: later, error: 'late death' },
    ] satisfies JobSettlement[]) {
      assert.equal((await settle([settlement])).size, 0, `late ${settlement.kind} is not ours`);
      assert.deepEqual(await jobsOf(t), [held], `late ${settlement.kind} left the row as the holder has it`);
    }

    // The holder's own settlement applies: a retry with its error and time, the lease released.
    const retryAt = new Date(clock.now().getTime() + 60_000);
    assert.deepEqual(await settle([{ id: holder.id, leaseToken: holder.leaseToken, kind: 'retry', runAt: retryAt, error: 'holder retry' }]), new Set([holder.id]));
    const [retried] = await jobsOf(t);
    assert.equal(retried!.status, 'pending');
    assert.equal(retried!.lastError, 'holder retry');
    assert.equal(retried!.runAt.getTime(), retryAt.getTime());
    assert.equal(retried!.leaseToken, null);
    // In one batch with a stale settlement, the current holder's 'done' still removes the job.
    clock.advance(60_000);
    const [next] = await claim();
    assert.ok(next);
    const owned = await settle([
      { id: late.id, leaseToken: late.leaseToken, kind: 'dead', runAt: later, error: 'late death' },
      { id: next.id, leaseToken: next.leaseToken, kind: 'done' },
    ]);
    assert.deepEqual(owned, new Set([next.id]));
    assert.deepEqual(await jobsOf(t), []);
  });

  test('enqueueing in the caller\'s statement: jobs due now, or at the run time each row gives', async () => {
    const t = topic();
    const clock = new FakeClock();
    const later = new Date(clock.now().getTime() + 60_000);
    const rows = sql`input as (select * from (values (1, null::timestamptz), (2, ${later.toISOString()}::timestamptz)) as v(n, at))`;
    const [result] = rowsOf<{ written: number; n: number }>(await database.db.execute(enqueueWithSql(
      rows,
      sql`select ${t}::text as topic, null::text as key, jsonb_build_object('n', n) as payload, at as run_at from input`,
      sql`(select count(*) from input)::int as n`,
      { runAt: true },
    )));
    assert.deepEqual({ written: Number(result!.written), n: Number(result!.n) }, { written: 2, n: 2 });
    const ran: unknown[] = [];
    const w = worker([{ topic: t, run: async (job) => { ran.push(job.payload.n); return {}; } }], { clock });
    assert.equal(await w.drain(), 1, 'the job without a run time is due now');
    assert.deepEqual(ran, [1]);
    clock.advance(60_000);
    assert.equal(await w.drain(), 1, 'the other one at its run time');
    assert.deepEqual(ran, [1, 2]);
  });

  test('keys de-duplicate; reschedule moves an idle job but not a running one', async () => {
    const t = topic();
    const clock = new FakeClock();
    const later = new Date(clock.now().getTime() + 3600_000);
    assert.equal(await database.db.transaction((tx) => enqueue(tx, { topic: t, key: 'k', runAt: later })), 1);
    assert.equal(await database.db.transaction((tx) => enqueue(tx, { topic: t, key: 'k' })), 0);
    assert.equal((await jobsOf(t))[0]!.runAt.getTime(), later.getTime());
    assert.equal(await database.db.transaction((tx) => enqueue(tx, { topic: t, key: 'k', payload: { v: 2 } }, { onConflict: 'reschedule' })), 1);
    const [row] = await jobsOf(t);
    assert.ok(row!.runAt.getTime() < later.getTime());
    assert.deepEqual(row!.payload, { v: 2 });
    await claimJobs(database.db, { topics: [t], limit: 1, now: undefined, leaseMs: 60_000, leaseToken: crypto.randomUUID() });
    assert.equal(await database.db.transaction((tx) => enqueue(tx, { topic: t, key: 'k' }, { onConflict: 'reschedule' })), 0, 'running: left alone');
  });

  test('started workers wake on commit (NOTIFY), share the queue and run each job once', async () => {
    const t = topic();
    const runs = new Map<number, number>();
    const handler: JobHandler = {
      topic: t,
      async run(job) {
        await sleep(2);
        const n = job.payload.n as number;
        runs.set(n, (runs.get(n) ?? 0) + 1);
        return {};
      },
    };
    // A long poll: only the notification can start them promptly.
    const a = worker([handler], { pollMs: 60_000 });
    const b = worker([handler], { pollMs: 60_000 });
    a.start();
    b.start();
    try {
      await sleep(200); // LISTEN is in place
      const t0 = Date.now();
      await database.db.transaction((tx) => enqueue(tx, { topic: t, payload: { n: 0 } }));
      while (!runs.has(0)) {
        assert.ok(Date.now() - t0 < 3000, 'woken by the notification, not the poll');
        await sleep(5);
      }
      const total = 400;
      for (let i = 1; i < total; i += 40) {
        await database.db.transaction((tx) => enqueue(tx, Array.from({ length: Math.min(40, total - i) }, (_, k) => ({ topic: t, payload: { n: i + k } }))));
      }
      const deadline = Date.now() + 20_000;
      while (runs.size < total && Date.now() < deadline) await sleep(20);
      assert.equal(runs.size, total);
      assert.deepEqual([...runs.values()].filter((c) => c !== 1), [], 'no job ran twice');
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  test('a worker waiting for work holds none of the jobs it ran: they can be collected at once', async () => {
    // A job kept until the next claim lives long enough to reach V8's old generation, whose
    // collections pause the server (docs/contributing/performance-journal.md, "Jobs no longer held while the worker sleeps").
    const t = topic();
    const payloads: WeakRef<object>[] = [];
    const w = worker([{ topic: t, run: async (job) => { payloads.push(new WeakRef(job.payload)); return {}; } }], { pollMs: 60_000 });
    w.start();
    try {
      await sleep(200); // LISTEN is in place
      await database.db.transaction((tx) => enqueue(tx, Array.from({ length: 5 }, (_, n) => ({ topic: t, payload: { n } }))));
      const deadline = Date.now() + 5000;
      while (payloads.length < 5 || (await jobsOf(t)).length > 0) {
        assert.ok(Date.now() < deadline, 'the jobs ran and were settled');
        await sleep(20);
      }
      await sleep(50); // the worker is now waiting for its next wake-up, a minute away
      collectGarbage();
      assert.deepEqual(payloads.map((p) => p.deref()), [undefined, undefined, undefined, undefined, undefined]);
    } finally {
      await w.stop();
    }
  });

  test('only jobs due now wake workers: one due later sends no notification', async () => {
    const t = topic();
    const heard: string[] = [];
    const unlisten = await database.listen(JOBS_CHANNEL, (payload) => heard.push(payload));
    try {
      await sleep(100); // LISTEN is in place
      await database.db.transaction((tx) => enqueue(tx, { topic: t, key: 'later', runAt: new Date(Date.now() + 60_000) }));
      await database.db.execute(enqueueWithSql(sql`base as (select 1)`, sql`select ${t}::text as topic, 'later-too'::text as key, '{}'::jsonb as payload, now() + interval '1 minute' as run_at`, undefined, { runAt: true }));
      await sleep(300);
      assert.deepEqual(heard.filter((h) => h === t), [], 'jobs due in a minute woke nobody');
      await database.db.transaction((tx) => enqueue(tx, { topic: t, key: 'now' }));
      const deadline = Date.now() + 3000;
      while (!heard.includes(t) && Date.now() < deadline) await sleep(10);
      assert.deepEqual(heard.filter((h) => h === t), [t], 'a job due now notifies once');
    } finally {
      await unlisten();
    }
  });

  test('a job running longer than its lease keeps it (renewal): no second run', async () => {
    const t = topic();
    let runs = 0;
    // The run outlasts three leases; a lease of 1 s leaves renewal room on a loaded machine.
    const handler: JobHandler = { topic: t, async run() { runs += 1; await sleep(3200); return {}; } };
    const a = worker([handler], { leaseMs: 1000, pollMs: 50 });
    const b = worker([handler], { leaseMs: 1000, pollMs: 50 });
    a.start();
    b.start();
    try {
      await database.db.transaction((tx) => enqueue(tx, { topic: t }));
      const deadline = Date.now() + 15_000;
      while ((await jobsOf(t)).length > 0 && Date.now() < deadline) await sleep(50);
      assert.deepEqual(await jobsOf(t), []);
      assert.equal(runs, 1);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  test('stop() releases jobs it had to abort, so they run again at once', async () => {
    const t = topic();
    const started: ClaimedJob[] = [];
    const handler: JobHandler = {
      topic: t,
      run: (job, { signal }) => new Promise((_resolve, reject) => {
        started.push(job);
        signal.addEventListener('abort', () => reject(new Error('aborted')));
      }),
    };
    const a = worker([handler], { stopGraceMs: 100, pollMs: 20 });
    a.start();
    await database.db.transaction((tx) => enqueue(tx, { topic: t }));
    while (started.length === 0) await sleep(10);
    await a.stop();
    const [row] = await jobsOf(t);
    assert.equal(row!.leaseToken, null);
    assert.ok(row!.runAt.getTime() <= Date.now());
    const done: number[] = [];
    const b = worker([{ topic: t, run: async (job) => { done.push(job.attempts); return {}; } }]);
    assert.equal(await b.drain(), 1);
    assert.deepEqual(done, [2]);
    const [count] = rowsOf<{ n: number }>(await database.db.execute(sql`select count(*)::int as n from jobs where topic = ${t}`));
    assert.equal(count!.n, 0);
  });
});

// The cron scheduler on both engines, on an injected clock: each due time fires once and runs as an
// outbox job, also with two schedulers and two workers racing on one database; a long gap is caught
// up with one run; a failing run is retried like a job; a changed cron takes effect at boot; and a
// module's schedule runs through the service's default workers.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { defaultWorkers } from '../../src/main.ts';
import { modules } from '../../src/modules/index.ts';
import { openDatabase, type Database, type Db } from '../../src/platform/db/engine.ts';
import type { Module } from '../../src/module.ts';
import { jobsTable } from '../../src/platform/jobs/outbox.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { DeclaredSchedules, Scheduler, scheduleTopic, type Schedule } from '../../src/platform/jobs/scheduler.ts';
import { JobWorker } from '../../src/platform/jobs/worker.ts';
import { FakeClock } from '../support/clock.ts';
import { forEachEngine, isolatedDatabase, startTestService } from '../support/service.ts';
import { eventually } from '../support/webhooks.ts';

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const at = (iso: string) => new Date(iso);

forEachEngine('scheduler', (engine) => {
  let database: Database;
  let drop: () => Promise<void>;
  let databaseUrl: string | undefined;
  let dataDir: string;
  before(async () => {
    const isolated = await isolatedDatabase(engine);
    drop = isolated.drop;
    databaseUrl = isolated.env.DATABASE_URL;
    dataDir = isolated.dataDir;
    database = await openDatabase({ databaseUrl, dataDir, poolSize: 10 });
  });
  after(async () => {
    await database?.close();
    await drop?.();
  });

  /** A schedule name of its own per test, so tests never see each other's rows and jobs. */
  const uniqueName = () => `test.${randomUUID().slice(0, 8)}`;
  /** Runs of a schedule, as the due times they were given. */
  function recorder(name: string, cron: string, fail?: (attempt: number) => boolean) {
    const runs: string[] = [];
    const schedule: Schedule = {
      name,
      cron,
      async run(_context, dueAt) {
        runs.push(dueAt.toISOString());
        if (fail?.(runs.length)) throw new Error(`run ${runs.length} failed`);
      },
    };
    return { schedule, runs };
  }
  /** What an instance runs: a scheduler and a worker for these schedules, on the injected clock. */
  function instance(schedules: Schedule[], clock: FakeClock, db = database) {
    const declared = new DeclaredSchedules(schedules);
    return {
      scheduler: new Scheduler(db, { timetables: [declared], pollMs: 1000, batchSize: 10, clock, log }),
      worker: new JobWorker(db, { handlers: declared.handlers(), concurrency: 10, batchSize: 10, pollMs: 1000, leaseMs: 30_000, clock, log }),
    };
  }
  async function rowOf(name: string, db: Db = database.db) {
    const [row] = rowsOf<{ cron: string; due_ms: number }>(await db.execute(sql`select cron, (extract(epoch from next_due_at) * 1000)::float8 as due_ms from schedules where name = ${name}`));
    return row && { cron: row.cron, nextDueAt: new Date(Number(row.due_ms)).toISOString() };
  }
  const jobsOf = (name: string) => database.db.select().from(jobsTable).where(eq(jobsTable.topic, scheduleTopic(name)));

  test('fires at each due time of the injected clock, as an outbox job carrying that due time', async () => {
    const name = uniqueName();
    const { schedule, runs } = recorder(name, '*/5 * * * *');
    const clock = new FakeClock(at('2031-03-04T05:06:30Z'));
    const { scheduler, worker } = instance([schedule], clock);
    assert.equal(await scheduler.tick(), 0);
    assert.deepEqual(await rowOf(name), { cron: '*/5 * * * *', nextDueAt: '2031-03-04T05:10:00.000Z' }, 'the first match after boot');

    clock.set(at('2031-03-04T05:09:59.999Z'));
    assert.equal(await scheduler.tick(), 0, 'not due yet');
    clock.set(at('2031-03-04T05:10:00Z'));
    assert.equal(await scheduler.tick(), 1);
    assert.equal(await scheduler.tick(), 0, 'a due time fires once');
    const [job] = await jobsOf(name);
    assert.equal(job!.key, `${name}@2031-03-04T05:10:00.000Z`);
    assert.deepEqual(job!.payload, { due_at: '2031-03-04T05:10:00.000Z' });
    assert.equal(job!.runAt.toISOString(), '2031-03-04T05:10:00.000Z');
    assert.deepEqual(await rowOf(name), { cron: '*/5 * * * *', nextDueAt: '2031-03-04T05:15:00.000Z' });
    assert.equal(await worker.drain(), 1);
    assert.deepEqual(runs, ['2031-03-04T05:10:00.000Z']);
    assert.deepEqual(await jobsOf(name), []);

    clock.set(at('2031-03-04T05:15:00.400Z'));
    assert.equal(await scheduler.tick(), 1);
    assert.equal(await worker.drain(), 1);
    clock.set(at('2031-03-04T05:20:59Z'));
    assert.equal(await scheduler.tick(), 1);
    assert.equal(await worker.drain(), 1);
    assert.deepEqual(runs, ['2031-03-04T05:10:00.000Z', '2031-03-04T05:15:00.000Z', '2031-03-04T05:20:00.000Z']);
  });

  test('two schedulers and two workers racing on one database enqueue and run each due time once', async () => {
    // Two instances: on PostgreSQL each has its own connection pool; PGlite is one process's database.
    const second = engine === 'postgres' ? await openDatabase({ databaseUrl, dataDir, poolSize: 10 }) : database;
    try {
      const clock = new FakeClock(at('2031-05-01T10:00:30Z'));
      const recorders = Array.from({ length: 5 }, () => recorder(uniqueName(), '* * * * *'));
      const a = instance(recorders.map((r) => r.schedule), clock);
      const b = instance(recorders.map((r) => r.schedule), clock, second);
      await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
      const minutes = 20;
      for (let i = 0; i < minutes; i += 1) {
        clock.advance(60_000);
        const fired = await Promise.all([a.scheduler.tick(), b.scheduler.tick(), a.scheduler.tick(), b.scheduler.tick()]);
        assert.equal(fired.reduce((x, y) => x + y, 0), recorders.length, `minute ${i}: each schedule enqueued once (${fired.join(' + ')})`);
        if (i % 4 === 3) await Promise.all([a.worker.drain(), b.worker.drain()]);
      }
      await Promise.all([a.worker.drain(), b.worker.drain()]);
      const expected = Array.from({ length: minutes }, (_, i) => new Date(Date.parse('2031-05-01T10:01:00Z') + i * 60_000).toISOString());
      for (const r of recorders) assert.deepEqual([...r.runs].sort(), expected, `${r.schedule.name} ran once per due time`);
    } finally {
      if (second !== database) await second.close();
    }
  });

  test('due times missed while no instance ran fire once, then the schedule carries on from now', async () => {
    const name = uniqueName();
    const { schedule, runs } = recorder(name, '* * * * *');
    const clock = new FakeClock(at('2031-06-01T05:06:30Z'));
    assert.equal(await instance([schedule], clock).scheduler.tick(), 0);
    assert.equal((await rowOf(name))!.nextDueAt, '2031-06-01T05:07:00.000Z');

    // Every instance is down for three hours; one starts again.
    clock.set(at('2031-06-01T08:07:10Z'));
    const restarted = instance([schedule], clock);
    assert.equal(await restarted.scheduler.tick(), 1, 'one run for 180 missed minutes');
    assert.equal(await restarted.scheduler.tick(), 0);
    assert.equal(await restarted.worker.drain(), 1);
    assert.deepEqual(runs, ['2031-06-01T05:07:00.000Z'], 'the run carries the earliest missed due time');
    assert.equal((await rowOf(name))!.nextDueAt, '2031-06-01T08:08:00.000Z', 'the next due time is the first match after now');
    clock.set(at('2031-06-01T08:08:00Z'));
    assert.equal(await restarted.scheduler.tick(), 1);
    assert.equal(await restarted.worker.drain(), 1);
    assert.deepEqual(runs, ['2031-06-01T05:07:00.000Z', '2031-06-01T08:08:00.000Z']);
  });

  test('a failing run is retried like any job, for the same due time, without firing again', async () => {
    const name = uniqueName();
    const { schedule, runs } = recorder(name, '0 * * * *', (attempt) => attempt === 1);
    const clock = new FakeClock(at('2031-07-01T04:59:00Z'));
    const { scheduler, worker } = instance([schedule], clock);
    await scheduler.tick();
    clock.set(at('2031-07-01T05:00:00Z'));
    assert.equal(await scheduler.tick(), 1);
    assert.equal(await worker.drain(), 1);
    const [failed] = await jobsOf(name);
    assert.equal(failed!.attempts, 1);
    assert.equal(failed!.lastError, 'run 1 failed');
    const wait = failed!.runAt.getTime() - clock.now().getTime();
    assert.ok(wait >= 800 && wait <= 1200, `retried after the job backoff (${wait} ms)`);
    clock.advance(1200);
    assert.equal(await scheduler.tick(), 0, 'the schedule does not fire again for a due time whose run failed');
    assert.equal(await worker.drain(), 1);
    assert.deepEqual(runs, ['2031-07-01T05:00:00.000Z', '2031-07-01T05:00:00.000Z']);
    assert.deepEqual(await jobsOf(name), []);
  });

  test('a cron changed in code takes effect at the next boot; an unchanged one keeps its due time', async () => {
    const name = uniqueName();
    const clock = new FakeClock(at('2031-08-01T05:06:30Z'));
    const hourly = recorder(name, '0 * * * *');
    assert.equal(await instance([hourly.schedule], clock).scheduler.tick(), 0);
    assert.deepEqual(await rowOf(name), { cron: '0 * * * *', nextDueAt: '2031-08-01T06:00:00.000Z' });

    clock.set(at('2031-08-01T05:31:00Z'));
    const everyTen = recorder(name, '*/10 * * * *');
    const deployed = instance([everyTen.schedule], clock);
    assert.equal(await deployed.scheduler.tick(), 0);
    assert.deepEqual(await rowOf(name), { cron: '*/10 * * * *', nextDueAt: '2031-08-01T05:40:00.000Z' }, 'new cron, next match from now');
    clock.set(at('2031-08-01T05:40:00Z'));
    assert.equal(await deployed.scheduler.tick(), 1);
    assert.equal(await deployed.worker.drain(), 1);
    assert.deepEqual(await rowOf(name), { cron: '*/10 * * * *', nextDueAt: '2031-08-01T05:50:00.000Z' });

    // Restarted with the same cron just after a due time nobody fired: the row keeps it, and it fires.
    clock.set(at('2031-08-01T05:50:30Z'));
    const restarted = instance([everyTen.schedule], clock);
    assert.equal(await restarted.scheduler.tick(), 1);
    assert.equal(await restarted.worker.drain(), 1);
    assert.deepEqual(everyTen.runs, ['2031-08-01T05:40:00.000Z', '2031-08-01T05:50:00.000Z']);
    assert.deepEqual(await rowOf(name), { cron: '*/10 * * * *', nextDueAt: '2031-08-01T06:00:00.000Z' });
    assert.deepEqual(hourly.runs, []);
  });

  test('a module\'s schedule runs through the service\'s default workers; close stops them', async () => {
    const name = uniqueName();
    const ran: { dueAt: string }[] = [];
    const probe: Module = { name: 'schedule-probe', schedules: () => [{ name, cron: '0 0 1 1 *', async run(_context, dueAt) { ran.push({ dueAt: dueAt.toISOString() }); } }] };
    const service = await startTestService(engine, { ATRIUM_JOBS_POLL_MS: '50', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }, {
      workers: (ctx) => defaultWorkers(ctx, [...modules, probe]),
    });
    try {
      // The first tick wrote the row (next New Year); make it due now, as after a long downtime.
      await eventually(() => rowOf(name, service.ctx.db));
      await service.ctx.db.execute(sql`update schedules set next_due_at = '2020-01-01T00:00:00Z' where name = ${name}`);
      await eventually(async () => ran.length > 0, 10_000, 20);
      assert.deepEqual(ran, [{ dueAt: '2020-01-01T00:00:00.000Z' }]);
      assert.ok(Date.parse((await rowOf(name, service.ctx.db))!.nextDueAt) > Date.now(), 'moved on to its next match');
    } finally {
      await service.stop();
    }
    assert.equal(ran.length, 1);
  });

  test("a module's timetable is fired by the service's default workers; close stops it", async () => {
    let ticks = 0;
    const probe: Module = {
      name: 'timetable-probe',
      timetables: () => [{ async fireDue() { ticks += 1; return 0; } }],
    };
    const service = await startTestService(engine, { ATRIUM_JOBS_POLL_MS: '50', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) }, {
      workers: (ctx) => defaultWorkers(ctx, [...modules, probe]),
    });
    try {
      await eventually(async () => ticks >= 2, 10_000, 20);
    } finally {
      await service.stop();
    }
    const stopped = ticks;
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(ticks, stopped);
  });
});

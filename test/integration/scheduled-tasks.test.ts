// Scheduled tasks on both engines: every endpoint (spec and earlier flat bodies), schedule
// validation, and firing on an injected clock — cron, interval, once, a daylight-saving change,
// catch-up after downtime, two schedulers racing — with each run delivered to a fake room server
// that verifies the signature, and the run's status, attempts and error on the way
// (pending → submitting → submitted | retrying → failed).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { deliveryHandler, scheduledTaskTimetable } from '../../src/modules/scheduled-tasks/firing.ts';
import { deliverRunJob } from '../../src/modules/scheduled-tasks/jobs.ts';
import { firstRun, parseSchedule } from '../../src/modules/scheduled-tasks/schedule.ts';
import { lockDueTasks } from '../../src/modules/scheduled-tasks/store.ts';
import { openDatabase, type Database } from '../../src/platform/db/engine.ts';
import { RoomServerClient } from '../../src/platform/http/room-server.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { Scheduler } from '../../src/platform/jobs/scheduler.ts';
import { JobWorker } from '../../src/platform/jobs/worker.ts';
import { FakeClock } from '../support/clock.ts';
import { startFakeRoomServer, type FakeRoomServer, type RoomServerCall } from '../support/room-server.ts';
import { call, createTenant, forEachEngine, type Tenant, type TestService } from '../support/service.ts';
import { eventually, startWebhookService } from '../support/webhooks.ts';

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const at = (iso: string) => new Date(iso);

forEachEngine('scheduled tasks', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let roomServer: FakeRoomServer;
  let project: string;
  let roomId: string;
  const ROOM = 'ops';

  before(async () => {
    roomServer = await startFakeRoomServer();
    // No background work: the tests fire and deliver by hand on an injected clock.
    service = await startWebhookService(engine, { ATRIUM_ROOM_SERVER_URL: roomServer.url }, () => []);
    tenant = await createTenant(service, 'tasks');
    project = `/accounts/projects/${tenant.projectId}`;
    roomServer.connect({ url: service.url, projectId: tenant.projectId, apiKey: tenant.apiKey });
    roomId = (await call(service, 'POST', `${project}/rooms`, { token: tenant.apiKey, json: { name: ROOM } })).body.id;
  });
  after(async () => {
    await service?.stop();
    await roomServer?.close();
  });

  const api = (method: string, path: string, json?: unknown) => call(service, method, `${project}${path}`, { token: tenant.apiKey, ...(json !== undefined ? { json } : {}) });
  const create = async (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const r = await api('POST', `/rooms/${ROOM}/scheduled-tasks`, { spec: { queue: { name: 'inbox', payload: { n: 1 } }, ...spec }, ...extra });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as { task_id: string; [k: string]: any };
  };
  const runsOf = async (taskId: string) => (await api('GET', `/scheduled-tasks/${taskId}/runs`)).body.runs as any[];
  const messagesOf = (taskId: string) => roomServer.calls.filter((c) => c.path === '/atrium/v1/queue-messages' && c.json.task_id === taskId);

  /** Puts a task on the test's timeline: its schedule set at `anchor`, first due accordingly. */
  async function placeAt(taskId: string, anchor: Date) {
    const [row] = rowsOf<{ schedule: string; time_zone: string }>(await service.ctx.db.execute(sql`select schedule, time_zone from scheduled_tasks where id = ${taskId}::uuid`));
    const next = firstRun(parseSchedule(row!.schedule, row!.time_zone, 0, anchor), anchor)!;
    await service.ctx.db.execute(sql`update scheduled_tasks set anchor_at = ${anchor.toISOString()}::timestamptz, next_run_at = ${next.toISOString()}::timestamptz where id = ${taskId}::uuid`);
    return next;
  }
  /** An instance's scheduler and delivery worker on the injected clock (its own connection pool on PostgreSQL). */
  function instance(clock: FakeClock, database: Database = service.ctx.database) {
    const client = new RoomServerClient({ baseUrl: roomServer.url, issuer: service.ctx.config.publicUrl, keys: service.ctx.keys });
    return {
      scheduler: new Scheduler(database, { timetables: [scheduledTaskTimetable()], pollMs: 1000, batchSize: 50, clock, log }),
      worker: new JobWorker(database, { handlers: [deliverRunJob.bind(deliveryHandler(service.ctx, client, clock))], concurrency: 50, batchSize: 50, pollMs: 1000, leaseMs: 30_000, clock, log }),
    };
  }

  describe('the API', () => {
    test('create with a spec or the earlier flat body, list with filters, replace, patch, delete', async () => {
      const spec = await create({ schedule: '0 6 * * *', metadata: { name: 'digest', annotations: { team: 'ops' } }, queue: { name: 'digest', payload: { kind: 'daily' }, storage_write_path: 'out/digest.json' } }, { time_zone: 'Europe/Berlin' });
      assert.equal(spec.id, spec.task_id);
      assert.equal(spec.room_id, roomId);
      assert.equal(spec.room_name, ROOM);
      assert.deepEqual(spec.spec, { version: 'v1', kind: 'ScheduledTask', metadata: { name: 'digest', annotations: { team: 'ops' } }, schedule: '0 6 * * *', active: true, once: false, queue: { name: 'digest', payload: { kind: 'daily' }, storage_write_path: 'out/digest.json' } });
      assert.equal(spec.time_zone, 'Europe/Berlin');
      assert.equal(spec.queue_name, 'digest');
      assert.ok(Date.parse(spec.next_run_at) > Date.now());
      assert.equal(spec.last_run_id, null);

      const flatId = randomUUID();
      const flat = await api('POST', `/rooms/${ROOM}/scheduled-tasks`, { id: flatId, queue_name: 'pings', payload: { a: 1 }, schedule: '30 minutes', active: false, annotations: {} });
      assert.equal(flat.status, 201, JSON.stringify(flat.body));
      assert.equal(flat.body.task_id, flatId);
      assert.equal(flat.body.next_run_at, null, 'inactive');
      assert.equal((await api('POST', `/rooms/${ROOM}/scheduled-tasks`, { id: flatId, queue_name: 'pings', schedule: '30 minutes' })).status, 409);
      const projectLevel = await api('POST', '/scheduled-tasks', { room_name: ROOM, queue_name: 'legacy', payload: {}, schedule: '0 * * * *', once: true, annotations: { v: 'old' } });
      assert.equal(projectLevel.status, 201, JSON.stringify(projectLevel.body));
      assert.equal(projectLevel.body.once, true);

      const all = (await api('GET', '/scheduled-tasks')).body;
      assert.ok(all.total >= 3);
      assert.deepEqual((await api('GET', `/scheduled-tasks?task_id=${flatId}`)).body.tasks.map((t: any) => t.id), [flatId]);
      assert.ok((await api('GET', '/scheduled-tasks?active=false')).body.tasks.every((t: any) => t.active === false));
      assert.ok((await api('GET', `/scheduled-tasks?room_id=${roomId}&page_size=1`)).body.tasks.length === 1);

      // A flat update changes only what it names; a spec replaces the whole task.
      const patched = await api('PUT', `/scheduled-tasks/${flatId}`, { payload: { a: 2 }, active: true });
      assert.equal(patched.status, 200);
      assert.deepEqual([patched.body.queue_name, patched.body.payload, patched.body.schedule, patched.body.active], ['pings', { a: 2 }, '30 minutes', true]);
      assert.ok(patched.body.next_run_at !== null, 'activated: scheduled from now');
      const replaced = await api('PUT', `/scheduled-tasks/${flatId}`, { spec: { schedule: '0 0 * * 1', queue: { name: 'weekly' } } });
      assert.deepEqual([replaced.body.queue_name, replaced.body.payload, replaced.body.annotations, replaced.body.time_zone], ['weekly', {}, {}, 'UTC']);

      assert.equal((await api('DELETE', `/scheduled-tasks/${flatId}`)).status, 204);
      assert.equal((await api('DELETE', `/scheduled-tasks/${flatId}`)).status, 404);
      assert.equal((await api('GET', `/scheduled-tasks/${flatId}/runs`)).status, 404);
      assert.equal((await api('POST', '/rooms/no-such-room/scheduled-tasks', { spec: { schedule: '0 6 * * *', queue: { name: 'q' } } })).status, 404);
      const other = await createTenant(service, 'tasks-other');
      assert.equal((await call(service, 'PUT', `/accounts/projects/${other.projectId}/scheduled-tasks/${spec.id}`, { token: other.apiKey, json: { schedule: '0 7 * * *' } })).status, 404);
      // The firing tests below move the clock years ahead: leave no task behind for them.
      for (const id of [spec.id, projectLevel.body.id]) assert.equal((await api('DELETE', `/scheduled-tasks/${id}`)).status, 204);
    });

    test('an invalid schedule is a 400 that names the problem', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ spec: { schedule: 'every day', queue: { name: 'q' } } }, /neither a 5-field cron expression nor an interval/],
        [{ spec: { schedule: '61 * * * *', queue: { name: 'q' } } }, /neither a 5-field cron/],
        [{ spec: { schedule: '* * * * * *', queue: { name: 'q' } } }, /neither a 5-field cron/],
        [{ spec: { schedule: '0 0 30 2 *', queue: { name: 'q' } } }, /never matches/],
        [{ spec: { schedule: '*/30 * * * *', queue: { name: 'q' } }, time_zone: 'Mars/Olympus' }, /not an IANA time zone/],
        [{ spec: { schedule: '30 seconds', queue: { name: 'q' } } }, /runs every 30 s; the minimum period is 60 s/],
        [{ queue_name: 'q', schedule: '0 seconds' }, /interval of zero/],
        [{ spec: { schedule: '0 6 * * *', container: { image: 'x' } } }, /container tasks are not supported/],
        [{ spec: { schedule: '0 6 * * *' } }, /spec.queue is required/],
        [{ payload: {} }, /queue_name is required/],
      ];
      for (const [body, message] of cases) {
        const r = await api('POST', `/rooms/${ROOM}/scheduled-tasks`, body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.match(r.body.error.message, message, JSON.stringify(body));
      }
    });
  });

  describe('firing on an injected clock', () => {
    test('cron: each due time fires once, as a signed message the room server verifies; the run goes to submitted', async () => {
      const task = await create({ schedule: '*/5 * * * *' });
      const clock = new FakeClock(at('2031-03-04T05:06:30Z'));
      assert.equal((await placeAt(task.task_id, clock.now())).toISOString(), '2031-03-04T05:10:00.000Z');
      const { scheduler, worker } = instance(clock);
      clock.set(at('2031-03-04T05:09:59.999Z'));
      assert.equal(await scheduler.tick(), 0);
      clock.set(at('2031-03-04T05:10:00Z'));
      assert.equal(await scheduler.tick(), 1);
      assert.equal(await scheduler.tick(), 0, 'a due time fires once');
      const [pending] = await runsOf(task.task_id);
      assert.deepEqual([pending.status, pending.attempt_count, pending.scheduled_time], ['pending', 0, '2031-03-04T05:10:00.000Z']);
      // While the room server takes its time, the run shows as submitting.
      roomServer.respond = (c: RoomServerCall) => (c.json.task_id === task.task_id ? { delayMs: 400 } : {});
      try {
        const draining = worker.drain();
        await eventually(async () => (await runsOf(task.task_id))[0]?.status === 'submitting');
        assert.equal(await draining, 1);
      } finally {
        roomServer.respond = () => ({});
      }

      const [message] = messagesOf(task.task_id);
      assert.deepEqual(message!.json, {
        id: pending.queued_message_id, project_id: tenant.projectId, room_id: roomId, room_name: ROOM, queue: 'inbox', payload: { n: 1 },
        task_id: task.task_id, run_id: pending.id, scheduled_time: '2031-03-04T05:10:00.000Z',
      });
      assert.equal(message!.claims.iss, service.ctx.config.publicUrl);
      assert.equal(message!.claims.aud, roomServer.url);
      const [run] = await runsOf(task.task_id);
      assert.deepEqual([run.status, run.attempt_count, run.error, run.target], ['submitted', 1, null, 'queue']);
      assert.ok(run.started_at && run.completed_at);
      const listed = (await api('GET', `/scheduled-tasks?task_id=${task.task_id}`)).body.tasks[0];
      assert.deepEqual([listed.last_run_id, listed.last_status, listed.next_run_at], [run.id, 'submitted', '2031-03-04T05:15:00.000Z']);
      // The runs list filters by state on the server.
      assert.deepEqual((await api('GET', `/scheduled-tasks/${task.task_id}/runs?status=submitted`)).body, { runs: [run], total: 1 });
      assert.deepEqual((await api('GET', `/scheduled-tasks/${task.task_id}/runs?status=failed`)).body, { runs: [], total: 0 });
      assert.equal((await api('GET', `/scheduled-tasks/${task.task_id}/runs?status=done`)).status, 400);

      clock.set(at('2031-03-04T05:15:00.400Z'));
      assert.equal(await scheduler.tick(), 1);
      assert.equal(await worker.drain(), 1);
      assert.deepEqual((await runsOf(task.task_id)).map((r) => r.scheduled_time), ['2031-03-04T05:15:00.000Z', '2031-03-04T05:10:00.000Z']);
      assert.deepEqual(roomServer.refused, []);
      await api('DELETE', `/scheduled-tasks/${task.task_id}`);
    });

    test('interval and once; catch-up after downtime fires once, then carries on from now', async () => {
      const interval = await create({ schedule: '15 minutes' });
      const once = await create({ schedule: '0 * * * *', once: true });
      const everyMinute = await create({ schedule: '* * * * *' });
      const clock = new FakeClock(at('2031-06-01T05:06:30Z'));
      await placeAt(interval.task_id, clock.now());
      await placeAt(once.task_id, clock.now());
      await placeAt(everyMinute.task_id, clock.now());
      const { scheduler, worker } = instance(clock);

      clock.set(at('2031-06-01T05:21:30Z'));
      assert.equal(await scheduler.tick(), 2, 'the interval (05:21:30) and the minute task');
      // Every instance is down for three hours; one starts again.
      clock.set(at('2031-06-01T08:07:10Z'));
      assert.equal(await scheduler.tick(), 3, 'one run each for all that was missed');
      assert.equal(await scheduler.tick(), 0);
      await worker.drain();
      assert.deepEqual((await runsOf(interval.task_id)).map((r) => r.scheduled_time), ['2031-06-01T05:36:30.000Z', '2031-06-01T05:21:30.000Z'], 'the earliest missed due time');
      assert.deepEqual((await runsOf(everyMinute.task_id)).map((r) => r.scheduled_time), ['2031-06-01T05:22:00.000Z', '2031-06-01T05:07:00.000Z']);
      assert.deepEqual((await runsOf(once.task_id)).map((r) => r.scheduled_time), ['2031-06-01T06:00:00.000Z']);
      const tasks = Object.fromEntries((await api('GET', `/scheduled-tasks?room_id=${roomId}&limit=1000`)).body.tasks.map((t: any) => [t.id, t]));
      assert.equal(tasks[interval.task_id].next_run_at, '2031-06-01T08:21:30.000Z', 'the interval keeps its phase');
      assert.equal(tasks[everyMinute.task_id].next_run_at, '2031-06-01T08:08:00.000Z');
      assert.deepEqual([tasks[once.task_id].active, tasks[once.task_id].next_run_at], [false, null], 'a one-time task deactivates');
      clock.set(at('2031-06-01T09:00:00Z'));
      await scheduler.tick();
      await worker.drain();
      assert.equal((await runsOf(once.task_id)).length, 1);
      for (const t of [interval, once, everyMinute]) await api('DELETE', `/scheduled-tasks/${t.task_id}`);
    });

    test('across a daylight-saving change a Berlin cron keeps wall-clock time: skipped 02:30 runs at 03:00, repeated 02:30 once', async () => {
      const task = await create({ schedule: '30 2 * * *' }, { time_zone: 'Europe/Berlin' });
      const clock = new FakeClock(at('2031-03-28T12:00:00Z'));
      await placeAt(task.task_id, clock.now());
      const { scheduler, worker } = instance(clock);
      const fired: string[] = [];
      for (const day of ['2031-03-29', '2031-03-30', '2031-03-31']) {
        clock.set(at(`${day}T12:00:00Z`));
        await scheduler.tick();
      }
      clock.set(at('2031-10-25T12:00:00Z'));
      await api('PUT', `/scheduled-tasks/${task.task_id}`, { spec: { schedule: '30 2 * * *', queue: { name: 'inbox', payload: { n: 1 } } }, time_zone: 'Europe/Berlin' });
      await placeAt(task.task_id, clock.now());
      for (const instant of ['2031-10-26T00:45:00Z', '2031-10-26T01:45:00Z', '2031-10-26T12:00:00Z', '2031-10-27T12:00:00Z']) {
        clock.set(at(instant));
        await scheduler.tick();
      }
      await worker.drain();
      fired.push(...(await runsOf(task.task_id)).map((r) => r.scheduled_time).reverse());
      assert.deepEqual(fired, [
        '2031-03-29T01:30:00.000Z', // 02:30 CET
        '2031-03-30T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST
        '2031-03-31T00:30:00.000Z', // 02:30 CEST
        '2031-10-26T00:30:00.000Z', // the first 02:30 (CEST), not the second (CET)
        '2031-10-27T01:30:00.000Z', // 02:30 CET
      ]);
      await api('DELETE', `/scheduled-tasks/${task.task_id}`);
    });

    test('a failing room server: retrying with attempt count and error, then failed; a 4xx fails at once', async () => {
      const task = await create({ schedule: '0 * * * *' });
      const clock = new FakeClock(at('2031-07-01T04:30:00Z'));
      await placeAt(task.task_id, clock.now());
      const { scheduler, worker } = instance(clock);
      roomServer.respond = (c: RoomServerCall) => (c.json.task_id === task.task_id ? (c.json.scheduled_time.startsWith('2031-07-01T05') ? { status: 500, body: '{"error":"down"}' } : { status: 400, body: '{"error":"no such queue"}' }) : {});
      try {
        clock.set(at('2031-07-01T05:00:00Z'));
        await scheduler.tick();
        await worker.drain();
        let [run] = await runsOf(task.task_id);
        assert.deepEqual([run.status, run.attempt_count], ['retrying', 1]);
        assert.match(run.error, /^HTTP 500: \{"error":"down"\}/);
        for (let attempt = 2; attempt <= 6; attempt += 1) {
          clock.advance(2 * 3600_000);
          await worker.drain();
          [run] = await runsOf(task.task_id);
          assert.equal(run.attempt_count, attempt);
        }
        assert.equal(run.status, 'failed', 'retries used up');
        assert.ok(run.completed_at);
        assert.equal(messagesOf(task.task_id).length, 6);

        clock.set(at('2031-07-02T06:00:00Z'));
        await scheduler.tick();
        await worker.drain();
        [run] = await runsOf(task.task_id);
        assert.deepEqual([run.status, run.attempt_count], ['failed', 1]);
        assert.match(run.error, /HTTP 400/);
      } finally {
        roomServer.respond = () => ({});
        await api('DELETE', `/scheduled-tasks/${task.task_id}`);
      }
    });

    test('changing or deleting a task affects only later runs: a fired run delivers what it had', async () => {
      const task = await create({ schedule: '0 * * * *', queue: { name: 'inbox', payload: { version: 1 } } });
      const clock = new FakeClock(at('2031-08-01T04:30:00Z'));
      await placeAt(task.task_id, clock.now());
      const { scheduler, worker } = instance(clock);
      clock.set(at('2031-08-01T05:00:00Z'));
      await scheduler.tick();
      await api('PUT', `/scheduled-tasks/${task.task_id}`, { payload: { version: 2 } });
      await api('DELETE', `/scheduled-tasks/${task.task_id}`);
      clock.set(at('2031-08-01T06:00:00Z'));
      assert.equal(await scheduler.tick(), 0, 'no run after the delete');
      assert.equal(await worker.drain(), 1);
      assert.deepEqual(messagesOf(task.task_id).map((m) => m.json.payload), [{ version: 1 }]);
    });

    // PGlite is one connection in one process: two instances can only share PostgreSQL.
    if (engine === 'postgres') {
      test('a due task that one instance is firing is skipped by the others, not fired twice or waited for', async () => {
        const task = await create({ schedule: '* * * * *' });
        const clock = new FakeClock(at('2031-10-01T10:00:30Z'));
        await placeAt(task.task_id, clock.now());
        clock.advance(60_000);
        const second = await openDatabase({ databaseUrl: service.ctx.config.databaseUrl, dataDir: service.dataDir, poolSize: 2 });
        try {
          await service.ctx.db.transaction(async (tx) => {
            const held = await lockDueTasks(tx, clock.now(), 100);
            assert.ok(held.some((t) => t.id === task.task_id), 'the first instance holds the due task');
            const seen = await second.db.transaction(async (other) => {
              await other.execute(sql`set local lock_timeout = '2s'`);
              return lockDueTasks(other, clock.now(), 100);
            });
            assert.ok(!seen.some((t) => t.id === task.task_id), 'the second instance skips it');
          });
        } finally {
          await second.close();
          await api('DELETE', `/scheduled-tasks/${task.task_id}`);
        }
      });
    }

    test('two instances racing on one database fire each due time once and deliver each run once', async () => {
      const second = engine === 'postgres' ? await openDatabase({ databaseUrl: service.ctx.config.databaseUrl, dataDir: service.dataDir, poolSize: 10 }) : service.ctx.database;
      try {
        const tasks = [];
        for (let i = 0; i < 20; i += 1) tasks.push(await create({ schedule: '* * * * *' }));
        const clock = new FakeClock(at('2031-09-01T10:00:30Z'));
        for (const t of tasks) await placeAt(t.task_id, clock.now());
        const a = instance(clock);
        const b = instance(clock, second);
        for (let minute = 0; minute < 5; minute += 1) {
          clock.advance(60_000);
          const fired = await Promise.all([a.scheduler.tick(), b.scheduler.tick(), a.scheduler.tick(), b.scheduler.tick()]);
          assert.equal(fired.reduce((x, y) => x + y, 0), tasks.length, `minute ${minute}: each task fired once (${fired.join(' + ')})`);
          await Promise.all([a.worker.drain(), b.worker.drain()]);
        }
        for (const t of tasks) {
          const runs = await runsOf(t.task_id);
          assert.equal(runs.length, 5);
          assert.ok(runs.every((r) => r.status === 'submitted' && r.attempt_count === 1));
          assert.equal(messagesOf(t.task_id).length, 5, 'each run delivered once');
          await api('DELETE', `/scheduled-tasks/${t.task_id}`);
        }
      } finally {
        if (second !== service.ctx.database) await second.close();
      }
    });
  });
});

// Retention on an injected clock: the modules' schedules delete what is older than
// ATRIUM_RETENTION_DAYS — finished webhook deliveries with their attempts, dead jobs, events no
// delivery needs, development mail, ended rate-limit windows — in bounded batches, keep everything
// younger or still pending, and count what they deleted.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { modules } from '../../src/modules/index.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { prunedRows, pruneInBatches } from '../../src/platform/jobs/retention.ts';
import type { Schedule } from '../../src/platform/jobs/scheduler.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const DAY = 86_400_000;
const NOW = new Date('2031-06-01T12:00:00Z');
const ago = (days: number) => new Date(NOW.getTime() - days * DAY).toISOString();

async function prunedSoFar(table: string): Promise<number> {
  const metric = await prunedRows.get();
  return metric.values.filter((v) => v.labels.table === table).reduce((sum, v) => sum + v.value, 0);
}

forEachEngine('retention', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let schedules: Map<string, Schedule>;
  before(async () => {
    // A database of its own: the injected clock makes every row of other test files old.
    service = await startTestService(engine, { ATRIUM_RETENTION_DAYS: '30', ATRIUM_RETENTION_BATCH_SIZE: '2' }, { workers: () => [] });
    tenant = await createTenant(service, 'retention');
    schedules = new Map(modules.flatMap((m) => m.schedules?.(service.ctx) ?? []).map((s) => [s.name, s]));
  });
  after(() => service?.stop());

  const count = async (query: ReturnType<typeof sql>) => Number(rowsOf<{ n: number }>(await service.ctx.db.execute(query))[0]!.n);
  const run = (name: string) => schedules.get(name)!.run({ db: service.ctx.database.background, signal: new AbortController().signal }, NOW);

  test('the schedules are declared through Module.schedules', () => {
    assert.ok(schedules.has('webhooks.prune-deliveries'));
    assert.ok(schedules.has('platform.retention'));
    // The existing ones are still there (same mechanism).
    assert.ok(schedules.has('sessions.prune-telemetry'));
  });

  test('finished deliveries and their attempts older than the retention go; pending and younger ones stay', async () => {
    const { db } = service.ctx;
    const hook = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/webhooks`, {
      token: tenant.apiKey, json: { name: 'retention', url: 'https://receiver.example.com/atrium', events: ['storage.file.updated'] },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const rows: { id: string; status: string; age: number; attempts: number }[] = [
      ...Array.from({ length: 5 }, () => ({ id: randomUUID(), status: 'succeeded', age: 31, attempts: 2 })),
      { id: randomUUID(), status: 'failed', age: 45, attempts: 3 },
      { id: randomUUID(), status: 'cancelled', age: 31, attempts: 0 },
      { id: randomUUID(), status: 'pending', age: 60, attempts: 1 },
      { id: randomUUID(), status: 'succeeded', age: 29, attempts: 1 },
    ];
    const eventOf = new Map<string, string>();
    for (const row of rows) {
      const eventId = randomUUID();
      eventOf.set(row.id, eventId);
      await db.execute(sql`insert into events (id, project_id, type, data, created_at) values (${eventId}, ${tenant.projectId}, 'storage.file.updated', '{}'::jsonb, ${ago(row.age)}::timestamptz)`);
      await db.execute(sql`insert into webhook_deliveries (id, project_id, webhook_id, event_id, status, created_at) values (${row.id}, ${tenant.projectId}, ${hook.body.id}, ${eventId}, ${row.status}, ${ago(row.age)}::timestamptz)`);
      for (let i = 1; i <= row.attempts; i++) {
        await db.execute(sql`insert into webhook_attempts (delivery_id, attempt, trigger, started_at, latency_ms, succeeded) values (${row.id}, ${i}, 'scheduled', ${ago(row.age)}::timestamptz, 5, true)`);
      }
    }
    const deliveriesBefore = await prunedSoFar('webhook_deliveries');
    const attemptsBefore = await prunedSoFar('webhook_attempts');
    await run('webhooks.prune-deliveries');

    const left = rowsOf<{ id: string }>(await db.execute(sql`select id from webhook_deliveries where project_id = ${tenant.projectId}`)).map((r) => r.id).sort();
    const kept = rows.filter((r) => r.status === 'pending' || r.age < 30);
    assert.deepEqual(left, kept.map((r) => r.id).sort());
    assert.equal(await count(sql`select count(*)::int as n from webhook_attempts where delivery_id in (select id from webhook_deliveries)`), 2);
    assert.equal(await count(sql`select count(*)::int as n from webhook_attempts`), 2, 'no orphaned attempts');
    // 7 deliveries in batches of 2 (4 statements), 13 attempts with them: all counted.
    assert.equal((await prunedSoFar('webhook_deliveries')) - deliveriesBefore, 7);
    assert.equal((await prunedSoFar('webhook_attempts')) - attemptsBefore, 13);

    // Events: those whose deliveries went (and are old) go next; the pending one's and the young one's stay.
    await run('platform.retention');
    const eventsLeft = await count(sql`select count(*)::int as n from events where project_id = ${tenant.projectId}`);
    assert.equal(eventsLeft, 2);
    for (const row of kept) assert.equal(await count(sql`select count(*)::int as n from events where id = ${eventOf.get(row.id)!}`), 1);
  });

  test('dead jobs, development mail and ended rate-limit windows older than the retention go', async () => {
    const { db } = service.ctx;
    const topic = `retention.test.${randomUUID()}`;
    for (const [status, age] of [['dead', 31], ['dead', 40], ['dead', 2], ['pending', 90]] as const) {
      await db.execute(sql`insert into jobs (topic, status, created_at, run_at) values (${topic}, ${status}, ${ago(age)}::timestamptz, ${new Date(NOW.getTime() + 365 * DAY).toISOString()}::timestamptz)`);
    }
    for (const age of [31, 1]) await db.execute(sql`insert into dev_mail_outbox (id, recipient, subject, text_body, created_at) values (${randomUUID()}, 'someone@example.test', ${`age ${age}`}, 'x', ${ago(age)}::timestamptz)`);
    await db.execute(sql`insert into rate_limits (key, count, window_ends) values ('test:ended', 3, ${ago(1)}::timestamptz), ('test:live', 1, ${new Date(NOW.getTime() + 60_000).toISOString()}::timestamptz)`);

    await run('platform.retention');
    assert.deepEqual(rowsOf<{ status: string }>(await db.execute(sql`select status from jobs where topic = ${topic} order by status`)).map((r) => r.status), ['dead', 'pending']);
    assert.deepEqual(rowsOf<{ subject: string }>(await db.execute(sql`select subject from dev_mail_outbox where subject like 'age %'`)).map((r) => r.subject), ['age 1']);
    assert.deepEqual(rowsOf<{ key: string }>(await db.execute(sql`select key from rate_limits where key like 'test:%'`)).map((r) => r.key), ['test:live']);
  });

  test('a run is bounded: at most maxBatches statements of batchSize rows, the rest waits for the next run', async () => {
    const counted = await prunedSoFar('test_table');
    let remaining = 11;
    const statements: number[] = [];
    const deleted = await pruneInBatches('test_table', { batchSize: 3, maxBatches: 2 }, async (limit) => {
      const n = Math.min(limit, remaining);
      remaining -= n;
      statements.push(n);
      return n;
    });
    assert.equal(deleted, 6);
    assert.deepEqual(statements, [3, 3]);
    assert.equal(await pruneInBatches('test_table', { batchSize: 3, maxBatches: 10 }, async (limit) => {
      const n = Math.min(limit, remaining);
      remaining -= n;
      return n;
    }), 5);
    assert.equal((await prunedSoFar('test_table')) - counted, 11);
  });
});

// Events, their consumers and jobs as declared in the module descriptors: the generated map
// (docs/events.md) is current; each event's emitting statement — the event row with every consumer's
// fan-out and jobs — is valid SQL on the engine, and is written out for reviewers
// (test-artifacts/event-statements.sql); a job whose payload does not fit its type never reaches its
// handler; a consumer whose job nobody runs stops the boot.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import { EVENTS_DOC, renderEventsDoc } from '../../scripts/events-doc.ts';
import { openContext } from '../../src/main.ts';
import type { Module } from '../../src/module.ts';
import { modules } from '../../src/modules/index.ts';
import { ALL_EVENTS, defineConsumer, takes } from '../../src/platform/events/catalogue.ts';
import { enqueue, jobsTable } from '../../src/platform/jobs/outbox.ts';
import { defineJob } from '../../src/platform/jobs/types.ts';
import { JobWorker } from '../../src/platform/jobs/worker.ts';
import { forEachEngine, startTestService, testConfig, type TestService } from '../support/service.ts';

const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

forEachEngine('events, consumers and jobs', (engine) => {
  let service: TestService;
  before(async () => {
    service = await startTestService(engine, {}, { workers: () => [] });
  });
  after(() => service?.stop());

  test('docs/events.md is up to date', () => {
    const expected = renderEventsDoc({ modules, consumers: service.ctx.events.consumers });
    let committed = '';
    try {
      committed = readFileSync(EVENTS_DOC, 'utf8');
    } catch {
      // missing: reported below
    }
    assert.ok(committed === expected, 'docs/events.md is stale or missing: run `npm run docs:events` and commit the result');
  });

  test('each event\'s emitting statement, with every consumer that takes it, is valid SQL here', async (t) => {
    const { events } = service.ctx;
    const rendered: string[] = [];
    for (const definition of events.definitions) {
      const text = events.statementText(definition);
      for (const consumer of events.consumers) {
        const queued = text.includes(`'${consumer.queues.topic}'::text as topic`);
        assert.equal(queued, takes(consumer, definition), `${definition.type}: ${consumer.name} ${takes(consumer, definition) ? 'takes it' : 'does not take it'}`);
      }
      // Prepared, not run: the server parses and plans it with the types its casts give.
      await service.ctx.db.transaction(async (tx) => {
        await tx.execute(sql.raw(`prepare emit_statement as ${text}`));
        await tx.execute(sql.raw('deallocate emit_statement'));
      });
      rendered.push(`-- ${definition.type}: ${events.consumers.filter((c) => takes(c, definition)).map((c) => `${c.name} → ${c.queues.topic}`).join(', ')}\n${text};\n`);
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    const file = join(ARTIFACTS, `event-statements.${engine}.sql`);
    writeFileSync(file, rendered.join('\n'));
    t.diagnostic(`the emitting statements are in ${file}`);
  });

  test('a job whose payload does not fit its type is kept dead with the reason, and never reaches its handler', async () => {
    const topic = `test.typed-${crypto.randomUUID().slice(0, 8)}`;
    const type = defineJob({ topic, description: 'test', key: 'a test key', payload: Type.Object({ project_id: Type.String({ format: 'uuid' }), n: Type.Integer() }) });
    const ran: unknown[] = [];
    await service.ctx.db.transaction(async (tx) => {
      await enqueue(tx, type.of({ key: 'good', payload: { project_id: crypto.randomUUID(), n: 1 } }));
      // Written by hand, as a row of an older version or another writer could be.
      await enqueue(tx, [{ topic, key: 'bad', payload: { project_id: 'not-a-uuid', n: 'one' } }, { topic, payload: { project_id: crypto.randomUUID(), n: 2 } }]);
    });
    const worker = new JobWorker(service.ctx.database, {
      handlers: [type.bind({ run: async (job) => { ran.push(job.payload.n); return {}; } })], concurrency: 5, batchSize: 10, pollMs: 50, leaseMs: 30_000, log,
    });
    worker.start();
    try {
      for (let i = 0; i < 200; i++) {
        const rows = await service.ctx.db.select().from(jobsTable).where(sql`${jobsTable.topic} = ${topic}`);
        if (rows.every((r) => r.status === 'dead')) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    } finally {
      await worker.stop();
    }
    assert.deepEqual(ran, [1]);
    const left = await service.ctx.db.select().from(jobsTable).where(sql`${jobsTable.topic} = ${topic}`).orderBy(jobsTable.id);
    assert.deepEqual(left.map((r) => [r.key, r.status]), [['bad', 'dead'], [null, 'dead']]);
    assert.match(left[0]!.lastError!, /payload does not fit .*\/project_id.*format/s);
    assert.match(left[1]!.lastError!, /needs a key \(a test key\)/);
    await service.ctx.db.delete(jobsTable).where(sql`${jobsTable.topic} = ${topic}`);
  });
});

test('a consumer whose job type no module handles stops the boot', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'atrium-test-'));
  try {
    const orphan = defineJob({ topic: 'test.orphan', description: 'test', payload: Type.Object({ id: Type.String() }) });
    const consumer = defineConsumer({ name: 'orphans', takes: ALL_EVENTS, queues: orphan, fanout: () => ({ jobs: { from: sql`event`, payload: { id: sql`event.id` } } }) });
    const withOrphan: Module[] = [...modules, { name: 'orphans', eventConsumers: () => [consumer] }];
    await assert.rejects(openContext(testConfig('pglite', dataDir), log, withOrphan), /Event consumer orphans queues test\.orphan, which no module handles/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

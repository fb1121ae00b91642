// The order of a feed flush's work, checked step by step on both engines: the batch is reserved,
// its file written, then the batch acknowledged and the file announced. The service runs without
// background work and each flush below is the job handler run by the test, so nothing else writes
// or acknowledges meanwhile. (Delivery with the workers running, end to end: feeds.test.ts; across a
// SIGKILL: e2e/feeds-crash.test.ts.)
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import type * as Sdk from '@meshagent/meshagent';
import { flushHandler } from '../../src/modules/feeds/delivery.ts';
import { subscriptionsTable } from '../../src/modules/feeds/store.ts';
import { eventsTable } from '../../src/platform/events/store.ts';
import type { ClaimedJob } from '../../src/platform/jobs/outbox.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { allLines, filesUnder } from '../support/storage.ts';

const require = createRequire(import.meta.url);
const { Meshagent } = require('@meshagent/meshagent') as typeof Sdk;

forEachEngine('feed delivery: each message once per subscription, across failed writes and repeated flushes', (engine) => {
  let quiet: TestService;
  let owner: Tenant;
  let quietSdk: InstanceType<typeof Meshagent>;
  before(async () => {
    quiet = await startTestService(engine, { ATRIUM_FEEDS_FLUSH_SECONDS: '1', ATRIUM_FEEDS_FLUSH_MESSAGES: '5' }, { workers: () => [] });
    owner = await createTenant(quiet, 'feeds-once');
    quietSdk = new Meshagent({ baseUrl: quiet.url, token: owner.apiKey });
    // An event is stored when something consumes it: a webhook (never delivered here) does.
    const hook = await call(quiet, 'POST', `/accounts/projects/${owner.projectId}/webhooks`, { token: owner.apiKey, json: { name: 'files', url: 'https://receiver.example.test/files', events: ['storage.file.updated'] } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
  });
  after(() => quiet?.stop());

  const flush = (subscriptionId: string) => flushHandler(quiet.ctx).run(
    { id: crypto.randomUUID(), topic: 'feeds.flush', key: null, payload: { subscription_id: subscriptionId }, attempts: 1, createdAt: new Date(), leaseToken: crypto.randomUUID() } satisfies ClaimedJob,
    { db: quiet.ctx.db, signal: new AbortController().signal },
  );
  const subscription = async (id: string) => (await quiet.ctx.db.select().from(subscriptionsTable).where(eq(subscriptionsTable.id, id)))[0]!;
  const announced = async (folder: string) => (await quiet.ctx.db.select().from(eventsTable)
    .where(and(eq(eventsTable.projectId, owner.projectId), eq(eventsTable.type, 'storage.file.updated'))))
    .map((e) => String(e.data.path)).filter((path) => path.startsWith(folder));
  async function subscribed(name: string) {
    const room = (await call(quiet, 'POST', `/accounts/projects/${owner.projectId}/rooms`, { token: owner.apiKey, json: { name } })).body as { name: string };
    const feed = await quietSdk.createFeed({ projectId: owner.projectId, name, visibility: 'project' });
    const sub = await quietSdk.createFeedSubscription({ projectId: owner.projectId, feedId: feed.id, room: room.name, path: 'out' });
    return { feed, sub, folder: `rooms/${room.name}/out` };
  }

  test('a file that cannot be written leaves its batch unacknowledged; the next flush writes it, announced once', async () => {
    const { feed, sub, folder } = await subscribed('unwritable');
    await quietSdk.publishFeedBatch({ projectId: owner.projectId, feedId: feed.id, messages: [1, 2, 3, 4, 5] });
    const blobs = quiet.ctx.blobs;
    const put = blobs.put.bind(blobs);
    blobs.put = async (key, body) => {
      body.resume();
      throw new Error(`the disk is full (writing ${key})`);
    };
    try {
      await assert.rejects(flush(sub.id), /the disk is full/);
    } finally {
      blobs.put = put;
    }
    const held = await subscription(sub.id);
    assert.deepEqual([held.deliveredSeq, held.pendingToSeq], [0, 5], 'the batch is reserved, not acknowledged');
    assert.deepEqual(await announced(folder), []);
    await flush(sub.id);
    const done = await subscription(sub.id);
    assert.deepEqual([done.deliveredSeq, done.pendingToSeq], [5, null]);
    const files = await filesUnder(quiet, owner, folder);
    assert.deepEqual(allLines(files), ['1', '2', '3', '4', '5']);
    assert.deepEqual(await announced(folder), [...files.keys()]);
  });

  test('flushes of one batch running at once write one file and acknowledge and announce it once', async () => {
    const { feed, sub, folder } = await subscribed('repeated');
    await quietSdk.publishFeedBatch({ projectId: owner.projectId, feedId: feed.id, messages: [1, 2, 3, 4, 5] });
    await Promise.all([flush(sub.id), flush(sub.id), flush(sub.id)]);
    // Another repeat after the acknowledgement, and the next batch: nothing moves backwards.
    await flush(sub.id);
    await quietSdk.publishFeedBatch({ projectId: owner.projectId, feedId: feed.id, messages: [6, 7, 8, 9, 10] });
    await Promise.all([flush(sub.id), flush(sub.id)]);
    const done = await subscription(sub.id);
    assert.deepEqual([done.deliveredSeq, done.pendingToSeq], [10, null]);
    const files = await filesUnder(quiet, owner, folder);
    assert.equal(files.size, 2);
    assert.deepEqual(allLines(files), ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    assert.deepEqual((await announced(folder)).sort(), [...files.keys()], 'each file announced once');
  });
});

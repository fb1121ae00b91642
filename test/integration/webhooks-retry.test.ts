// Webhook retry timing with an injected clock (no sleeping): the default schedule end to end,
// Retry-After, and disabling an endpoint that has failed for days. The service runs without its
// own workers; the test drives a worker whose clock it moves.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, test } from 'node:test';
import { eq } from 'drizzle-orm';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { webhookDeliveryHandler, type DeliveryHandler } from '../../src/modules/webhooks/delivery.ts';
import { deliverJob } from '../../src/modules/webhooks/jobs.ts';
import { webhooksTable } from '../../src/modules/webhooks/store.ts';
import { JobWorker } from '../../src/platform/jobs/worker.ts';
import { FakeClock } from '../support/clock.ts';
import { call, createTenant, forEachEngine, type Tenant } from '../support/service.ts';
import { startReceiver, startWebhookService, verifyDelivery, type Receiver, type Received, type WebhookTestService } from '../support/webhooks.ts';

const SECOND = 1000;
const HOUR = 3600 * SECOND;

forEachEngine('webhook retries on an injected clock', (engine) => {
  let service: WebhookTestService;
  let tenant: Tenant;
  let receiver: Receiver;
  let clock: FakeClock;
  let handler: DeliveryHandler;
  let worker: JobWorker;
  before(async () => {
    service = await startWebhookService(engine, {}, () => []);
    receiver = await startReceiver();
  });
  after(async () => {
    handler?.close();
    await receiver?.close();
    await service?.stop();
  });
  beforeEach(async () => {
    // A project per test: earlier tests' webhooks must not receive this test's events.
    tenant = await createTenant(service, 'retry');
    clock = new FakeClock();
    handler?.close();
    // random 0.5: the jitter factor is exactly 1, so times can be asserted to the millisecond.
    handler = webhookDeliveryHandler(service.ctx, { clock, random: () => 0.5 });
    worker = new JobWorker(service.ctx.database, { handlers: [deliverJob.bind(handler)], concurrency: 10, batchSize: 10, pollMs: 1000, leaseMs: 60_000, clock, log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger });
  });

  afterEach(async () => {
    // Leave no due jobs behind for the next test's drain counts: drop the webhooks, run what is left.
    const listed = await call(service, 'GET', hooks.replace('{p}', tenant.projectId), { token: tenant.apiKey });
    for (const w of listed.body.webhooks) await call(service, 'DELETE', `${hooks.replace('{p}', tenant.projectId)}/${w.id}`, { token: tenant.apiKey });
    clock.advance(1000 * HOUR);
    await worker.drain();
  });

  const hooks = `/accounts/projects/${'{p}'}/webhooks`;
  async function makeHook(options: { secret?: boolean } = {}) {
    const tag = crypto.randomUUID();
    const created = await call(service, 'POST', hooks.replace('{p}', tenant.projectId), { token: tenant.apiKey, json: { name: 'retry', url: `${receiver.url}/${tag}`, events: ['room.started'], ...options } });
    assert.equal(created.status, 201);
    return { id: created.body.id as string, mine: (r: Received) => r.url === `/${tag}` };
  }
  const startSession = () => call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'retry-room' } });
  const delivery = async (hookId: string) => {
    const listed = await call(service, 'GET', `${hooks.replace('{p}', tenant.projectId)}/${hookId}/deliveries`, { token: tenant.apiKey });
    return listed.body.deliveries[0];
  };

  test('the default schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed', async () => {
    const hook = await makeHook();
    receiver.respond = () => ({ status: 500 });
    await startSession();
    const schedule = [5, 300, 1800, 7200, 18000, 36000, 36000].map((s) => s * SECOND);
    assert.equal(await worker.drain(), 1);
    let last = clock.now().getTime();
    for (const [i, wait] of schedule.entries()) {
      const d = await delivery(hook.id);
      assert.equal(d.status, 'pending');
      assert.equal(d.attempt_count, i + 1);
      assert.equal(new Date(d.next_attempt_at).getTime(), last + wait, `wait before attempt ${i + 2}`);
      clock.advance(wait - 1);
      assert.equal(await worker.drain(), 0, `attempt ${i + 2} is not due a millisecond early`);
      clock.advance(1);
      assert.equal(await worker.drain(), 1, `attempt ${i + 2} runs when due`);
      last = clock.now().getTime();
    }
    const d = await delivery(hook.id);
    assert.equal(d.status, 'failed');
    assert.equal(d.attempt_count, 8);
    assert.equal(d.next_attempt_at, null);
    clock.advance(100 * HOUR);
    assert.equal(await worker.drain(), 0, 'nothing left to run');
    const mine = receiver.received.filter(hook.mine);
    assert.deepEqual(mine.map((r) => r.headers['service-delivery-attempt']), ['1', '2', '3', '4', '5', '6', '7', '8']);
    assert.equal(new Set(mine.map((r) => r.headers['service-event-id'])).size, 1);
    assert.equal((mine.at(-1)!.at - mine[0]!.at) < 60_000, true, 'and no real time passed');
  });

  test('after a rotation the previous secret signs until the overlap ends, and not after', async () => {
    const hook = await makeHook({ secret: true });
    const rotated = await call(service, 'POST', `${hooks.replace('{p}', tenant.projectId)}/${hook.id}/rotate-secret`, { token: tenant.apiKey, json: { overlap_seconds: 3600 } });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    const expiresAt = Date.parse(rotated.body.previous_secret_expires_at);
    assert.ok(Number.isFinite(expiresAt), 'an overlap was set');
    const last = () => receiver.received.filter(hook.mine).at(-1)!;

    clock.set(new Date(expiresAt - SECOND));
    await startSession();
    assert.equal(await worker.drain(), 1);
    assert.ok(last().headers['service-signature-previous'], 'the old secret still signs within the overlap');
    await verifyDelivery(rotated.body.secret, last().body, last().headers['service-signature'], clock.now());

    clock.set(new Date(expiresAt + SECOND));
    await startSession();
    assert.equal(await worker.drain(), 1);
    assert.equal(last().headers['service-signature-previous'], undefined, 'the overlap has ended');
    await verifyDelivery(rotated.body.secret, last().body, last().headers['service-signature'], clock.now());
  });

  test('Retry-After is honoured when longer than the schedule', async () => {
    const hook = await makeHook();
    receiver.respond = () => ({ status: 503, headers: { 'retry-after': '120' } });
    await startSession();
    assert.equal(await worker.drain(), 1);
    const t1 = clock.now().getTime();
    assert.equal(new Date((await delivery(hook.id)).next_attempt_at).getTime(), t1 + 120 * SECOND);
    clock.advance(119 * SECOND);
    assert.equal(await worker.drain(), 0);
    receiver.respond = () => ({ status: 429, headers: { 'retry-after': new Date(clock.now().getTime() + 3 * HOUR).toUTCString() } });
    clock.advance(SECOND);
    assert.equal(await worker.drain(), 1);
    // The schedule says 5 min; the receiver asked for 3 h (to the second, as HTTP dates go).
    const next = new Date((await delivery(hook.id)).next_attempt_at).getTime() - clock.now().getTime();
    assert.ok(next > 3 * HOUR - 2 * SECOND && next <= 3 * HOUR, `waits ${next} ms`);
  });

  test('an endpoint failing for five days is disabled, with the reason on the webhook', async () => {
    const hook = await makeHook();
    receiver.respond = () => ({ status: 500 });
    await startSession();
    assert.equal(await worker.drain(), 1);
    const row = async () => (await service.ctx.db.select().from(webhooksTable).where(eq(webhooksTable.id, hook.id)))[0]!;
    assert.equal((await row()).failingSince?.getTime(), clock.now().getTime());

    // A success clears the failing streak.
    receiver.respond = () => ({});
    clock.advance(5 * SECOND);
    assert.equal(await worker.drain(), 1);
    assert.equal((await row()).failingSince, null);

    receiver.respond = () => ({ status: 500 });
    await startSession();
    assert.equal(await worker.drain(), 1);
    const since = clock.now().getTime();
    // Days later, the next retry fails too: that is five days of failing.
    clock.advance(120 * HOUR);
    assert.equal(await worker.drain(), 1);
    const disabled = await row();
    assert.equal(disabled.enabled, false);
    assert.match(disabled.disabledReason!, new RegExp(`failed since ${new Date(since).toISOString()}`));
    const listed = await call(service, 'GET', hooks.replace('{p}', tenant.projectId), { token: tenant.apiKey });
    const view = listed.body.webhooks.find((w: { id: string }) => w.id === hook.id);
    assert.equal(view.enabled, false);
    assert.match(view.disabled_reason, /HTTP 500/);
    assert.equal((await delivery(hook.id)).status, 'failed');
    // Disabled: later events are not delivered to it.
    await startSession();
    clock.advance(HOUR);
    assert.equal(await worker.drain(), 0);
  });
});

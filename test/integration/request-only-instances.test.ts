// ATRIUM_JOBS_WORKER=false: an instance that only serves requests. The work its requests cause is
// written as usual, waits while no instance on the database runs background work, and is done as
// soon as one does (docs/operations.md, "Instances that only serve requests").
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pgUrl, requireOrSkip } from '../support/env.ts';
import { call, createTenant, isolatedDatabase, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { eventually, sleep, startReceiver, type Receiver } from '../support/webhooks.ts';

describe('an instance with ATRIUM_JOBS_WORKER=false', () => {
  let front: TestService | undefined;
  let worker: TestService | undefined;
  let receiver: Receiver | undefined;
  let drop: () => Promise<void> = async () => {};
  let env: Record<string, string> = {};
  let tenant: Tenant;
  before(async () => {
    if (!pgUrl) return;
    const database = await isolatedDatabase('postgres');
    drop = database.drop;
    // A short poll: a worker running here would have found the job many times over during the wait below.
    env = { ...database.env, ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true', ATRIUM_JOBS_POLL_MS: '50' };
    front = await startTestService('postgres', { ...env, ATRIUM_JOBS_WORKER: 'false' });
    tenant = await createTenant(front, 'request-only');
    receiver = await startReceiver();
  });
  after(async () => {
    await front?.stop();
    await worker?.stop();
    await receiver?.close();
    await drop();
  });

  test('writes the work its requests cause, runs none of it, and another instance does it', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const hooks = `/accounts/projects/${tenant.projectId}/webhooks`;
    const hook = await call(front!, 'POST', hooks, { token: tenant.apiKey, json: { name: 'sink', url: `${receiver!.url}/hook`, events: ['room.started'] } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const started = await call(front!, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'r1' } });
    assert.equal(started.status, 201, JSON.stringify(started.body));

    // Written and due, but nobody here delivers it.
    await sleep(1500);
    assert.equal(receiver!.received.length, 0);
    const pending = await call(front!, 'GET', `${hooks}/${hook.body.id}/deliveries`, { token: tenant.apiKey });
    assert.equal(pending.status, 200);
    assert.deepEqual(pending.body.deliveries.map((d: { status: string; attempt_count: number }) => [d.status, d.attempt_count]), [['pending', 0]]);

    // An instance with the default setting picks it up, with no request of its own.
    worker = await startTestService('postgres', env);
    await receiver!.waitFor((all) => all.length === 1);
    assert.equal(receiver!.received[0]!.json.event, 'room.started');
    assert.equal(receiver!.received[0]!.json.data.session_id, started.body.id);
    await eventually(async () => {
      const settled = await call(front!, 'GET', `${hooks}/${hook.body.id}/deliveries`, { token: tenant.apiKey });
      return settled.body.deliveries[0]?.status === 'succeeded';
    }, 10_000);
  });
});

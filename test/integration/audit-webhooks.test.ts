// Audit entries as webhook events: a webhook subscribed to `audit.recorded` receives each of its
// project's entries (changes and refusals) as the API lists them, signed like every delivery; the
// event is written by the entry's statement, so an entry that cannot be written leaves no event;
// other projects' entries and webhooks subscribed to other events get nothing.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { whileInsertsFail } from '../support/failing-inserts.ts';
import { call, createTenant, forEachEngine, type Tenant } from '../support/service.ts';
import { sleep, startReceiver, startWebhookService, verifyDelivery, type Receiver, type WebhookTestService } from '../support/webhooks.ts';

const SECRET = 'an-audit-webhook-secret-long-enough-0001';

forEachEngine('audit entries as webhook events', (engine) => {
  let service: WebhookTestService;
  let tenant: Tenant;
  let other: Tenant;
  let receiver: Receiver;
  let memberKey: string;
  let roomId: string;

  const project = (t: Tenant) => `/accounts/projects/${t.projectId}`;
  const audits = (path: string) => receiver.received.filter((r) => r.url === path && r.json?.event === 'audit.recorded');

  before(async () => {
    service = await startWebhookService(engine);
    tenant = await createTenant(service, 'audit-hook');
    other = await createTenant(service, 'audit-hook-other');
    receiver = await startReceiver();
    const hook = async (t: Tenant, path: string, events: string[]) => {
      const created = await call(service, 'POST', `${project(t)}/webhooks`, { token: t.apiKey, json: { name: path.slice(1), url: `${receiver.url}${path}`, events, secret: SECRET } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
    };
    await hook(tenant, '/audit', ['audit.recorded']);
    await hook(tenant, '/rooms-only', ['room.started']);
    await hook(other, '/other', ['audit.recorded']);
    const key = await call(service, 'POST', `${project(tenant)}/api-keys`, { token: tenant.apiKey, json: { name: 'member only', roles: ['member'] } });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    memberKey = key.body.value;
  });
  after(async () => {
    await receiver?.close();
    await service?.stop();
  });

  test('a change\'s entry is delivered, signed, as the API lists it', async () => {
    const created = await call(service, 'POST', `${project(tenant)}/rooms`, { token: tenant.apiKey, json: { name: 'audited-room' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    roomId = created.body.id;
    await receiver.waitFor(() => audits('/audit').some((r) => r.json.data.action === 'room.create'));
    const delivery = audits('/audit').find((r) => r.json.data.action === 'room.create')!;
    await verifyDelivery(SECRET, delivery.body, delivery.headers['service-signature']);
    const listed = await call(service, 'GET', `${project(tenant)}/audit-log?action=room.create`, { token: tenant.apiKey });
    assert.equal(listed.status, 200);
    assert.deepEqual(delivery.json.data, listed.body.entries[0]);
    assert.equal(delivery.json.data.target.id, created.body.id);
    assert.equal(delivery.json.data.request_id, created.headers.get('x-request-id'));
  });

  test('a refusal\'s entry is delivered too', async () => {
    const refused = await call(service, 'POST', `${project(tenant)}/api-keys`, { token: memberKey, json: { name: 'not allowed' } });
    assert.equal(refused.status, 403);
    await service.ctx.audit.flush();
    await receiver.waitFor(() => audits('/audit').some((r) => r.json.data.outcome === 'refused'));
    const delivery = audits('/audit').find((r) => r.json.data.outcome === 'refused')!;
    assert.equal(delivery.json.data.action, 'api_key.create');
    assert.equal(delivery.json.data.request_id, refused.headers.get('x-request-id'));
    const listed = await call(service, 'GET', `${project(tenant)}/audit-log?outcome=refused`, { token: tenant.apiKey });
    assert.deepEqual(delivery.json.data, listed.body.entries[0]);
  });

  test('an entry that cannot be written leaves no event', async () => {
    const { db } = service.ctx;
    const failed = await whileInsertsFail(db, 'audit_log', `new.action = 'room.update'`, 'the entry cannot be written', async () => {
      const r = await call(service, 'PUT', `${project(tenant)}/rooms/${roomId}`, { token: tenant.apiKey, json: { name: 'renamed-never', metadata: { topic: 'never written' } } });
      assert.equal(r.status, 500, JSON.stringify(r.body));
      return String(r.headers.get('x-request-id'));
    });
    // A later change's event arrives; the failed one's was never written.
    const later = await call(service, 'POST', `${project(tenant)}/rooms`, { token: tenant.apiKey, json: { name: 'after-the-failure' } });
    await receiver.waitFor(() => audits('/audit').some((r) => r.json.data.target.id === later.body.id));
    assert.ok(!audits('/audit').some((r) => r.json.data.request_id === failed));
    const stored = rowsOf<{ n: number }>(await db.execute(sql`select count(*)::int as n from events where type = 'audit.recorded' and data->>'request_id' = ${failed}`));
    assert.equal(stored[0]!.n, 0);
  });

  test('other projects\' entries and other subscriptions get nothing', async () => {
    const theirs = await call(service, 'POST', `${project(other)}/rooms`, { token: other.apiKey, json: { name: 'their-room' } });
    await receiver.waitFor(() => audits('/other').some((r) => r.json.data.target.id === theirs.body.id));
    await sleep(300);
    assert.ok(audits('/other').every((r) => r.json.data.project_id === other.projectId));
    assert.ok(audits('/audit').every((r) => r.json.data.project_id === tenant.projectId));
    assert.deepEqual(receiver.received.filter((r) => r.url === '/rooms-only').map((r) => r.json.event), []);
  });
});

// POST …/webhooks/{id}/test: a signed webhook.test delivery to that one webhook, through the usual
// queue, shown in its history; refused for a disabled webhook and another project's.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, createTenant, forEachEngine, type Tenant } from '../support/service.ts';
import { eventually, startReceiver, startWebhookService, verifyDelivery, type Receiver, type WebhookTestService } from '../support/webhooks.ts';

const SECRET = 'a-test-secret-that-is-long-enough-123456';

forEachEngine('webhook test event', (engine) => {
  let service: WebhookTestService;
  let tenant: Tenant;
  let other: Tenant;
  let receiver: Receiver;

  before(async () => {
    service = await startWebhookService(engine);
    tenant = await createTenant(service, 'hook-test');
    other = await createTenant(service, 'hook-other');
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    await service?.stop();
  });

  const hooks = (t: Tenant) => `/accounts/projects/${t.projectId}/webhooks`;

  test('a signed webhook.test delivery reaches the receiver and shows in the history', async () => {
    const created = await call(service, 'POST', hooks(tenant), { token: tenant.apiKey, json: { name: 'h', url: `${receiver.url}/t`, events: ['room.started'], secret: SECRET } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const sent = await call(service, 'POST', `${hooks(tenant)}/${created.body.id}/test`, { token: tenant.apiKey, json: {} });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    await receiver.waitFor((all) => all.some((r) => r.url === '/t'));
    const delivery = receiver.received.find((r) => r.url === '/t')!;
    await verifyDelivery(SECRET, delivery.body, delivery.headers['service-signature']);
    assert.equal(delivery.json.event, 'webhook.test');
    const history = await eventually(async () => {
      const listed = await call(service, 'GET', `${hooks(tenant)}/${created.body.id}/deliveries`, { token: tenant.apiKey });
      return listed.body.deliveries.find((d: { id: string; status: string }) => d.id === sent.body.id && d.status === 'succeeded');
    });
    assert.equal(history.event, 'webhook.test');

    // Another project's webhook is not found; a disabled one is refused.
    assert.equal((await call(service, 'POST', `${hooks(other)}/${created.body.id}/test`, { token: other.apiKey, json: {} })).status, 404);
    assert.equal((await call(service, 'PUT', `${hooks(tenant)}/${created.body.id}`, { token: tenant.apiKey, json: { enabled: false } })).status, 200);
    assert.equal((await call(service, 'POST', `${hooks(tenant)}/${created.body.id}/test`, { token: tenant.apiKey, json: {} })).status, 409);
  });
});

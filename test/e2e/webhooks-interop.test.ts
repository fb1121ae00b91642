// The delivery engine against the receiver helper this repo ships: what the sender signs, the
// library verifies, for every event type, and across a secret rotation.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createWebhookReceiver, type WebhookReceiver } from '../../src/webhooks-receiver/index.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

interface Seen { type: string; data: Record<string, unknown>; id: string | undefined }

forEachEngine('webhook sender and receiver helper', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let receiver: WebhookReceiver;
  let url: string;
  const seen: Seen[] = [];
  const secret = 'interop-secret-0123456789';
  const rejected: string[] = [];

  before(async () => {
    service = await startTestService(engine, { ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    tenant = await createTenant(service, 'interop');
    const record = (event: { type: string; data: unknown; id?: string | undefined }) => {
      seen.push({ type: event.type, data: event.data as Record<string, unknown>, id: event.id });
    };
    receiver = createWebhookReceiver({
      secret,
      port: 0,
      host: '127.0.0.1',
      handlers: {
        'storage.file.updated': record,
        'storage.file.deleted': record,
        'room.started': record,
        'room.ended': record,
        'room.call': record,
      },
      onRejected: (rejection) => { rejected.push(`${rejection.status} ${rejection.code}: ${rejection.message}`); },
    });
    ({ url } = await receiver.listen());
  });
  after(async () => {
    await receiver?.close();
    await service?.stop();
  });

  const waitFor = async (predicate: () => boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; saw ${JSON.stringify(seen.map((s) => s.type))}, rejected ${JSON.stringify(rejected)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  test('every event type arrives verified, then a rotated secret still verifies', async () => {
    const webhooks = `/accounts/projects/${tenant.projectId}/webhooks`;
    const created = await call(service, 'POST', webhooks, { token: tenant.apiKey, json: { name: 'interop', description: '', url, events: ['*'], action: '', payload: null, secret } });
    assert.equal(created.status, 201, JSON.stringify(created.body));

    const upload = await call(service, 'POST', `/projects/${tenant.projectId}/storage/upload?path=notes/a.txt`, { token: tenant.apiKey, body: 'hello', headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(upload.status, 200);
    assert.equal((await call(service, 'DELETE', `/projects/${tenant.projectId}/storage?path=notes/a.txt`, { token: tenant.apiKey })).status, 200);
    const session = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'lobby' } });
    assert.ok(session.status < 300, JSON.stringify(session.body));
    assert.equal((await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions/${session.body.id}/end`, { token: tenant.apiKey, json: {} })).status, 200);

    await waitFor(() => ['storage.file.updated', 'storage.file.deleted', 'room.started', 'room.ended'].every((t) => seen.some((s) => s.type === t)), 'all four events');
    assert.deepEqual(rejected, []);
    assert.equal(seen.find((s) => s.type === 'storage.file.updated')!.data.path, 'notes/a.txt');
    assert.equal(seen.find((s) => s.type === 'room.started')!.data.room_name, 'lobby');
    assert.ok(seen.every((s) => typeof s.id === 'string' && s.id.length > 0), 'every delivery carries an event id');

    // Rotate to a secret the receiver does not know: the previous-secret header keeps it verifying.
    const rotated = await call(service, 'POST', `${webhooks}/${created.body.id}/rotate-secret`, { token: tenant.apiKey, json: { overlap_seconds: 600 } });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.notEqual(rotated.body.secret, secret);
    const before = seen.length;
    await call(service, 'POST', `/projects/${tenant.projectId}/storage/upload?path=notes/b.txt`, { token: tenant.apiKey, body: 'again', headers: { 'content-type': 'application/octet-stream' } });
    await waitFor(() => seen.slice(before).some((s) => s.type === 'storage.file.updated' && s.data.path === 'notes/b.txt'), 'the upload after rotation');
    assert.deepEqual(rejected, []);
  });

  test('a call webhook hands the room over with a participant token that validates', async () => {
    const project = await createTenant(service, 'interop-call');
    const hook = await call(service, 'POST', `/accounts/projects/${project.projectId}/webhooks`, {
      token: project.apiKey,
      json: { name: 'call', description: '', url, events: ['room.started'], action: 'call', payload: { greeting: 'hi' }, secret },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const session = await call(service, 'POST', `/accounts/projects/${project.projectId}/sessions`, { token: project.apiKey, json: { room_name: 'studio' } });
    assert.ok(session.status < 300);
    await waitFor(() => seen.some((s) => s.type === 'room.call' && s.data.room_name === 'studio'), 'room.call');
    const handoff = seen.find((s) => s.type === 'room.call' && s.data.room_name === 'studio')!.data;
    assert.deepEqual(handoff.arguments, { greeting: 'hi' });
    assert.match(String(handoff.room_url), /\/rooms\/studio$/);
    const validated = await call(service, 'POST', '/api/participant-token/validate', { json: { token: handoff.token } });
    assert.equal(validated.status, 200);
    assert.equal(validated.body.sub, project.projectId);
    assert.deepEqual(rejected, []);
  });
});

// SSRF: with private targets not allowed (the default with DATABASE_URL), webhook URLs on loopback,
// private, link-local or reserved addresses are refused when registered, and refused again when
// delivering: for a literal address, and after DNS for a name (localhost) that resolves to one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { startService, type RunningService } from '../../src/main.ts';
import { call, createTenant, forEachEngine, freePort, isolatedDatabase, testConfig, type Tenant } from '../support/service.ts';
import { eventually, startReceiver, type Receiver } from '../support/webhooks.ts';

test('private targets are allowed by default only with the embedded database', () => {
  assert.equal(loadConfig({}).webhooks.allowPrivate, true);
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/atrium' }).webhooks.allowPrivate, false);
  assert.equal(loadConfig({ DATABASE_URL: 'postgres://db/atrium', ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' }).webhooks.allowPrivate, true);
  assert.equal(loadConfig({ ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'false' }).webhooks.allowPrivate, false);
});

forEachEngine('webhook SSRF protection', (engine) => {
  let receiver: Receiver;
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let service: RunningService | undefined;
  let tenant: Tenant;
  const hookIds: string[] = [];
  const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

  const start = async (allowPrivate: boolean) => {
    const port = await freePort();
    return startService(testConfig(engine, database.dataDir, {
      PORT: String(port),
      ATRIUM_PUBLIC_URL: `http://127.0.0.1:${port}`,
      ATRIUM_WEBHOOKS_ALLOW_PRIVATE: String(allowPrivate),
      ATRIUM_WEBHOOKS_RETRY_SCHEDULE: '3600',
      ...database.env,
    }), { log });
  };

  before(async () => {
    receiver = await startReceiver();
    database = await isolatedDatabase(engine);
    // Webhooks registered while the operator allowed private targets...
    const permissive = await start(true);
    tenant = await createTenant(permissive, 'ssrf');
    for (const url of [`http://127.0.0.1:${receiver.port}/literal`, `http://localhost:${receiver.port}/by-name`]) {
      const created = await call(permissive, 'POST', `/accounts/projects/${tenant.projectId}/webhooks`, { token: tenant.apiKey, json: { name: 'local', url, events: ['room.started'] } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      hookIds.push(created.body.id);
    }
    await permissive.close();
    // ...then the same data served by an instance that does not allow them.
    service = await start(false);
  });
  after(async () => {
    await service?.close();
    await receiver?.close();
    await database?.drop();
  });

  test('refused at registration', async () => {
    const refused = [
      `http://127.0.0.1:${receiver.port}/`, `http://localhost:${receiver.port}/`, 'http://10.0.0.7/', 'http://192.168.1.20/hook',
      'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://0x7f000001/', 'http://0/',
      'http://100.64.1.1/', 'http://[fd00::1]/',
    ];
    for (const url of refused) {
      const response = await call(service!, 'POST', `/accounts/projects/${tenant.projectId}/webhooks`, { token: tenant.apiKey, json: { name: 'x', url, events: ['*'] } });
      assert.equal(response.status, 400, url);
      assert.equal(response.body.error.code, 'invalid_url');
      assert.match(response.body.error.message, /private, loopback or reserved/);
      const updated = await call(service!, 'PUT', `/accounts/projects/${tenant.projectId}/webhooks/${hookIds[0]}`, { token: tenant.apiKey, json: { url } });
      assert.equal(updated.status, 400, `update to ${url}`);
    }
    // A public address is fine (nothing is sent to it in this test).
    const ok = await call(service!, 'POST', `/accounts/projects/${tenant.projectId}/webhooks`, { token: tenant.apiKey, json: { name: 'public', url: 'https://93.184.215.14/hook', events: ['storage.file.deleted'] } });
    assert.equal(ok.status, 201);
  });

  test('refused at delivery: literal address, and a name that resolves to loopback', async () => {
    const started = await call(service!, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'ssrf' } });
    assert.equal(started.status, 201);
    for (const [i, hookId] of hookIds.entries()) {
      const delivery = await eventually(async () => {
        const listed = await call(service!, 'GET', `/accounts/projects/${tenant.projectId}/webhooks/${hookId}/deliveries`, { token: tenant.apiKey });
        const d = listed.body.deliveries[0];
        return d?.attempt_count >= 1 ? d : undefined;
      });
      assert.equal(delivery.attempts[0].succeeded, false);
      assert.equal(delivery.attempts[0].http_status, null);
      assert.match(delivery.attempts[0].error, /private, loopback or reserved address/);
      // The name passes the URL check; the socket's lookup refuses what it resolved to.
      if (i === 1) assert.match(delivery.attempts[0].error, /localhost resolved to (127\.0\.0\.1|::1)/);
      assert.equal(delivery.status, 'pending', 'retried later, like any failure');
    }
    assert.equal(receiver.received.length, 0, 'nothing reached the private address');
  });
});

// The official TypeScript SDK (@meshagent/meshagent 0.39.9) reading sessions that a fake room
// server reported, with telemetry it exported over OTLP, and terminating one: listActiveSessions,
// listRecentSessions, getSession, listSessionEvents, listSessionSpans, listSessionMetrics and
// terminateSession, on both engines. (Loaded through require(): see test/e2e/sdk.test.ts.)
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import type * as Sdk from '@meshagent/meshagent';
import { createTenant, forEachEngine, type Tenant, type TestService } from '../support/service.ts';
import { startFakeRoomServer, type FakeRoomServer } from '../support/room-server.ts';
import { eventually, startWebhookService } from '../support/webhooks.ts';

const require = createRequire(import.meta.url);
const { Meshagent } = require('@meshagent/meshagent') as typeof Sdk;

forEachEngine('official SDK: sessions', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let roomServer: FakeRoomServer;
  let sdk: InstanceType<typeof Meshagent>;

  before(async () => {
    roomServer = await startFakeRoomServer();
    service = await startWebhookService(engine, { ATRIUM_ROOM_SERVER_URL: roomServer.url, ATRIUM_JOBS_POLL_MS: '100' });
    tenant = await createTenant(service, 'sdk-sessions');
    roomServer.connect({ url: service.url, projectId: tenant.projectId, apiKey: tenant.apiKey });
    sdk = new Meshagent({ baseUrl: service.url, token: tenant.userToken });
  });
  after(async () => {
    await service?.stop();
    await roomServer?.close();
  });

  test('list, fetch and read the telemetry of sessions, then terminate one', async () => {
    const done = await roomServer.startSession('standup');
    await roomServer.endSession(done.id);
    const live = await roomServer.startSession('standup');
    await roomServer.reportParticipants(live.id, [{ type: 'joined', participant_id: 'u1', role: 'user' }]);
    const resource = { 'atrium.session.id': live.id };
    await roomServer.exportSpans(resource, [{ name: 'turn' }], 'protobuf');
    await roomServer.exportLogs(resource, [{ body: 'hello' }], 'json');
    await roomServer.exportMetrics(resource, (meter) => meter.createCounter('messages').add(2), 'protobuf');

    const active = await sdk.listActiveSessions(tenant.projectId);
    assert.deepEqual(active.map((s) => [s.id, s.roomName, s.isActive]), [[live.id, 'standup', true]]);
    assert.ok(active[0]!.createdAt instanceof Date && !Number.isNaN(active[0]!.createdAt.getTime()));
    assert.deepEqual(active[0]!.participants, { user: 1 });
    const recent = await sdk.listRecentSessions(tenant.projectId);
    assert.deepEqual(recent.map((s) => [s.id, s.isActive]), [[live.id, true], [done.id, false]]);

    const session = await sdk.getSession(tenant.projectId, live.id);
    assert.equal(session.id, live.id);
    assert.equal(session.room_name, 'standup');

    const events = await sdk.listSessionEvents(tenant.projectId, live.id);
    assert.deepEqual(events.map((e) => e.type), ['session.started', 'participant.joined', 'log']);
    assert.equal((events[2]!.data as { body: string }).body, 'hello');
    const spans = await sdk.listSessionSpans(tenant.projectId, live.id);
    assert.deepEqual(spans.map((s) => s.name), ['turn']);
    assert.equal(typeof spans[0]!.duration, 'number');
    const metrics = await sdk.listSessionMetrics(tenant.projectId, live.id);
    assert.deepEqual(metrics.map((m) => [m.name, m.kind, m.value]), [['messages', 'sum', 2]]);

    await sdk.terminateSession(tenant.projectId, live.id);
    await roomServer.waitFor((calls) => calls.some((c) => c.json.session_id === live.id));
    await eventually(async () => (await sdk.listActiveSessions(tenant.projectId)).length === 0);
    const ended = await sdk.getSession(tenant.projectId, live.id);
    assert.equal(ended.is_active, false);
    assert.equal(ended.ended_reason, 'terminated');
    // Terminating it again is accepted and changes nothing.
    await sdk.terminateSession(tenant.projectId, live.id);
  });
});

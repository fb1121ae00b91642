// Sessions on both engines, driven through a fake room server that follows docs/room-servers.md:
// reports (start, end, participants) with a `room_server` key, the read API, terminate round trips
// through the outbox to the room server and back (and its timeout and retries), OTLP telemetry from
// the official exporters (JSON and protobuf) landing in the right session, OTLP's error, back-off (429)
// and partial-success semantics, the per-session bound, idempotent resends and pruning.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { defaultWorkers } from '../../src/main.ts';
import { modules } from '../../src/modules/index.ts';
import { pruneTelemetry } from '../../src/modules/sessions/telemetry.ts';
import { AdvancingClock } from '../support/clock.ts';
import { call, createTenant, forEachEngine, type Tenant, type TestService } from '../support/service.ts';
import { startFakeRoomServer, type FakeRoomServer } from '../support/room-server.ts';
import { eventually, startWebhookService } from '../support/webhooks.ts';

const MAX_ITEMS = 40;
/** Long enough never to pass by itself; the timeout's test moves the workers' clock past it. */
const TERMINATE_TIMEOUT_SECONDS = 600;

forEachEngine('sessions', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let roomServer: FakeRoomServer;
  let project: string;
  const clock = new AdvancingClock();

  before(async () => {
    roomServer = await startFakeRoomServer();
    service = await startWebhookService(engine, {
      ATRIUM_ROOM_SERVER_URL: roomServer.url,
      ATRIUM_JOBS_POLL_MS: '100',
      ATRIUM_SESSION_TERMINATE_TIMEOUT_SECONDS: String(TERMINATE_TIMEOUT_SECONDS),
      ATRIUM_SESSION_TELEMETRY_MAX_ITEMS: String(MAX_ITEMS),
    }, (ctx) => defaultWorkers(ctx, modules, clock));
    tenant = await createTenant(service, 'sessions');
    project = `/accounts/projects/${tenant.projectId}`;
    const key = await call(service, 'POST', `${project}/api-keys`, { token: tenant.apiKey, json: { name: 'room server', roles: ['room_server'] } });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    roomServer.connect({ url: service.url, projectId: tenant.projectId, apiKey: key.body.value });
  });
  after(async () => {
    await service?.stop();
    await roomServer?.close();
  });

  const get = (path: string) => call(service, 'GET', `${project}${path}`, { token: tenant.apiKey });

  describe('reports and reads', () => {
    test('a room_server key reports a session; it cannot read sessions; readers can', async () => {
      await call(service, 'POST', `${project}/rooms`, { token: tenant.apiKey, json: { name: 'lobby' } });
      const session = await roomServer.startSession('lobby');
      assert.equal(session.room_name, 'lobby');
      assert.equal(typeof session.room_id, 'string', 'linked to the registered room');
      assert.equal(session.is_active, true);
      assert.equal(session.status, 'active');
      assert.equal(session.kind, 'room');
      assert.equal((await roomServer.api('GET', `${project}/sessions/${session.id}`)).status, 403, 'room servers report, they do not read');
      const got = await get(`/sessions/${session.id}`);
      assert.equal(got.status, 200);
      assert.equal(got.body.id, session.id);

      const counts = await roomServer.reportParticipants(session.id, [
        { type: 'joined', participant_id: 'u1', role: 'user', name: 'Ada' },
        { type: 'joined', participant_id: 'u2', role: 'user' },
        { type: 'joined', participant_id: 'a1', role: 'agent' },
        { type: 'joined', participant_id: 'u1', role: 'user' },
        { type: 'left', participant_id: 'u2' },
      ]);
      assert.deepEqual(counts, { participants: { user: 2, agent: 1 }, active: { user: 1, agent: 1 } });
      assert.deepEqual((await get(`/sessions/${session.id}/participants`)).body, counts);
      const repeated = await roomServer.reportParticipants(session.id, [{ type: 'left', participant_id: 'u2' }]);
      assert.deepEqual(repeated, counts, 'a repeated leave changes nothing');

      const ended = await roomServer.endSession(session.id);
      assert.equal(ended.is_active, false);
      assert.equal(ended.ended_reason, 'reported');
      const events = (await get(`/sessions/${session.id}/events`)).body.events as { type: string; data: any }[];
      assert.deepEqual(events.map((e) => e.type), ['session.started', 'participant.joined', 'participant.joined', 'participant.joined', 'participant.left', 'session.ended']);
      assert.equal(events[1]!.data.participant_id, 'u1');
      const conflict = await roomServer.api('POST', `${project}/sessions/${session.id}/participants`, { events: [{ type: 'joined', participant_id: 'late', role: 'user' }] });
      assert.equal(conflict.status, 409, 'nobody joins an ended session');
    });

    test('lists: active and recent (newest first, limit, room filters), agent sessions', async () => {
      const room = `list-${randomUUID().slice(0, 8)}`;
      const created = await call(service, 'POST', `${project}/rooms`, { token: tenant.apiKey, json: { name: room } });
      const first = await roomServer.startSession(room);
      const second = await roomServer.startSession(room);
      await roomServer.endSession(first.id);
      const other = await roomServer.startSession(`elsewhere-${randomUUID().slice(0, 8)}`);
      await call(service, 'POST', `${project}/agents`, { token: tenant.apiKey, json: { configuration: { metadata: { name: 'helper' } }, if_not_exists: true } });
      const agentSession = await roomServer.startSession(room, { agent_name: 'Helper' });
      assert.equal(agentSession.kind, 'agent');
      assert.equal(agentSession.agent_name, 'helper');
      assert.equal(typeof agentSession.agent_id, 'string');

      const byRoom = (await get(`/sessions?room_id=${created.body.id}`)).body;
      assert.deepEqual(byRoom.sessions.map((s: any) => s.id), [agentSession.id, second.id, first.id], 'newest first');
      assert.equal(byRoom.total, 3);
      assert.deepEqual((await get(`/sessions?room_name=${room}&limit=1`)).body.sessions.map((s: any) => s.id), [agentSession.id]);
      const active = (await get('/sessions/active')).body.sessions.map((s: any) => s.id);
      assert.ok(active.includes(second.id) && active.includes(other.id) && !active.includes(first.id));
      assert.deepEqual((await get('/agents/sessions/active')).body.sessions.map((s: any) => s.id), [agentSession.id]);
      assert.deepEqual((await get(`/agents/sessions?agent_id=${agentSession.agent_id}&limit=5`)).body.sessions.map((s: any) => s.id), [agentSession.id]);
      assert.deepEqual((await get(`/agents/sessions?agent_id=${randomUUID()}`)).body.sessions, []);
    });

    test("another project's session is 404 everywhere", async () => {
      const session = await roomServer.startSession('private');
      const other = await createTenant(service, 'sessions-other');
      for (const path of ['', '/events', '/spans', '/metrics', '/participants']) {
        const r = await call(service, 'GET', `/accounts/projects/${other.projectId}/sessions/${session.id}${path}`, { token: other.apiKey });
        assert.equal(r.status, 404, path);
      }
      const r = await call(service, 'POST', `/accounts/projects/${other.projectId}/sessions/${session.id}/terminate`, { token: other.apiKey });
      assert.equal(r.status, 404);
      assert.equal((await get(`/sessions/${session.id}`)).body.status, 'active');
    });
  });

  describe('terminate', () => {
    test('round trip: a signed call to the room server, which ends the session', async () => {
      const session = await roomServer.startSession('to-terminate');
      const before = roomServer.calls.length;
      const r = await call(service, 'POST', `${project}/sessions/${session.id}/terminate`, { token: tenant.apiKey });
      assert.equal(r.status, 204);
      assert.equal((await get(`/sessions/${session.id}`)).body.status !== 'active', true);
      await roomServer.waitFor((calls) => calls.slice(before).some((c) => c.json.session_id === session.id));
      const sent = roomServer.calls.find((c) => c.json.session_id === session.id)!;
      assert.equal(sent.path, '/atrium/v1/session-terminations');
      assert.deepEqual({ ...sent.json, requested_at: undefined }, { id: session.id, project_id: tenant.projectId, session_id: session.id, room_id: null, room_name: 'to-terminate', requested_at: undefined });
      assert.equal(sent.claims.iss, service.ctx.config.publicUrl);
      const ended = await eventually(async () => {
        const s = (await get(`/sessions/${session.id}`)).body;
        return s.status === 'ended' && s.termination.status === 'submitted' && s;
      });
      assert.equal(ended.ended_reason, 'terminated');
      assert.equal(ended.termination.attempt_count, 1);
      assert.deepEqual(roomServer.refused, []);

      // Again, and on an ended session: nothing happens.
      assert.equal((await call(service, 'POST', `${project}/sessions/${session.id}/terminate`, { token: tenant.apiKey, json: {} })).status, 204);
      const types = (await get(`/sessions/${session.id}/events`)).body.events.map((e: any) => e.type);
      assert.deepEqual(types, ['session.started', 'session.terminate_requested', 'session.ended']);
      assert.equal(roomServer.calls.filter((c) => c.json.session_id === session.id).length, 1);
    });

    test('a failing room server is retried, the status and error visible meanwhile', async () => {
      const session = await roomServer.startSession('flaky');
      let failures = 1;
      roomServer.respond = (c) => (c.json.session_id === session.id && failures-- > 0 ? { status: 503, body: '{"error":"busy"}' } : {});
      try {
        await call(service, 'POST', `${project}/sessions/${session.id}/terminate`, { token: tenant.apiKey });
        const retrying = await eventually(async () => {
          const s = (await get(`/sessions/${session.id}`)).body;
          return s.termination.status === 'retrying' && s;
        });
        assert.match(retrying.termination.error, /HTTP 503/);
        assert.equal(retrying.termination.attempt_count, 1);
        // The retry is due seconds later: let them pass.
        clock.advance(60_000);
        const ended = await eventually(async () => {
          const s = (await get(`/sessions/${session.id}`)).body;
          return s.status === 'ended' && s;
        }, 20_000, 200);
        assert.equal(ended.termination.attempt_count, 2);
        assert.equal(ended.ended_reason, 'terminated');
      } finally {
        roomServer.respond = () => ({});
      }
    });

    test('a room server that never reports the end: the session ends after the timeout, marked so', async () => {
      roomServer.endOnTerminate = false;
      try {
        const session = await roomServer.startSession('stubborn');
        await call(service, 'POST', `${project}/sessions/${session.id}/terminate`, { token: tenant.apiKey });
        await eventually(async () => (await get(`/sessions/${session.id}`)).body.termination.status === 'submitted');
        assert.equal((await get(`/sessions/${session.id}`)).body.status, 'terminating', 'not ended before the timeout');
        clock.advance(TERMINATE_TIMEOUT_SECONDS * 1000);
        const ended = await eventually(async () => {
          const s = (await get(`/sessions/${session.id}`)).body;
          return s.status === 'ended' && s;
        }, 20_000, 200);
        assert.equal(ended.ended_reason, 'terminate_timeout');
        assert.equal(ended.termination.status, 'submitted');
      } finally {
        roomServer.endOnTerminate = true;
      }
    });
  });

  describe('OTLP telemetry', () => {
    for (const protocol of ['json', 'protobuf'] as const) {
      test(`spans, logs and metrics from the official exporters (${protocol}) land in the named session`, async () => {
        const session = await roomServer.startSession(`otlp-${protocol}`);
        const decoy = await roomServer.startSession(`otlp-${protocol}-decoy`);
        const resource = { 'atrium.session.id': session.id, 'service.name': 'room-server' };
        await roomServer.exportSpans(resource, [{ name: 'turn', attributes: { 'turn.n': 1 } }, { name: 'llm.call', parent: 'turn', attributes: { model: 'gpt' } }], protocol);
        await roomServer.exportLogs(resource, [{ body: 'participant joined', attributes: { who: 'u1' } }, { body: 'tool failed', severity: 'ERROR' }], protocol);
        await roomServer.exportMetrics(resource, (meter) => {
          meter.createCounter('messages', { unit: '1' }).add(3, { queue: 'inbox' });
          meter.createHistogram('latency', { unit: 'ms' }).record(12.5);
          meter.createGauge('room.participants').record(2);
        }, protocol);

        const spans = (await get(`/sessions/${session.id}/spans`)).body;
        assert.equal(spans.total, 2);
        const byName = Object.fromEntries(spans.spans.map((s: any) => [s.name, s]));
        assert.equal(byName['llm.call'].parent_span_id, byName.turn.span_id);
        assert.equal(byName['llm.call'].trace_id, byName.turn.trace_id);
        assert.match(byName.turn.trace_id, /^[0-9a-f]{32}$/);
        assert.deepEqual(byName.turn.span_attributes, { 'turn.n': 1 });
        assert.equal(byName.turn.resource_attributes['service.name'], 'room-server');
        assert.equal(typeof byName.turn.duration, 'number');
        assert.equal(byName.turn.scope_name, 'fake-room-server');

        const logs = (await get(`/sessions/${session.id}/events?type=log`)).body.events;
        assert.deepEqual(logs.map((e: any) => [e.data.body, e.data.severity_text]), [['participant joined', 'INFO'], ['tool failed', 'ERROR']]);
        assert.deepEqual(logs[0].data.log_attributes, { who: 'u1' });

        const metrics = (await get(`/sessions/${session.id}/metrics`)).body.metrics;
        const metric = Object.fromEntries(metrics.map((m: any) => [m.name, m]));
        assert.equal(metric.messages.kind, 'sum');
        assert.equal(metric.messages.value, 3);
        assert.deepEqual(metric.messages.metric_attributes, { queue: 'inbox' });
        assert.equal(metric.latency.kind, 'histogram');
        assert.equal(metric.latency.count, 1);
        assert.equal(metric.latency.sum, 12.5);
        assert.equal(metric['room.participants'].kind, 'gauge');
        assert.equal(metric['room.participants'].value, 2);

        for (const kind of ['spans', 'metrics'] as const) assert.equal((await get(`/sessions/${decoy.id}/${kind}`)).body.total, 0);
        assert.deepEqual((await get(`/sessions/${session.id}`)).body.telemetry, { spans: 2, events: 3, metrics: 3 });
      });
    }

    const post = (signal: string, body: unknown) => call(service, 'POST', `/otlp/v1/${signal}`, { token: tenant.apiKey, json: body });
    const spanRequest = (resource: Record<string, string>, spans: { traceId: string; spanId: string; name?: string }[]) => ({
      resourceSpans: [{
        resource: { attributes: Object.entries(resource).map(([key, value]) => ({ key, value: { stringValue: value } })) },
        scopeSpans: [{ spans: spans.map((s) => ({ name: 'x', kind: 1, startTimeUnixNano: '1795243070529000000', endTimeUnixNano: 1795243070929000000, ...s })) }],
      }],
    });
    const hex = (bytes: number) => randomUUID().replaceAll('-', '').padEnd(32, '1').slice(0, bytes * 2);

    test('exponential histograms and summaries keep their count, sum and bounds (a summary\'s 0 and 1 quantiles)', async () => {
      const session = await roomServer.startSession(`metrics-${randomUUID().slice(0, 8)}`);
      const point = { attributes: [{ key: 'route', value: { stringValue: '/chat' } }], startTimeUnixNano: '1795243070529000000', timeUnixNano: '1795243071529000000' };
      const r = await post('metrics', {
        resourceMetrics: [{
          resource: { attributes: [{ key: 'atrium.session.id', value: { stringValue: session.id } }] },
          scopeMetrics: [{
            metrics: [
              { name: 'tokens', unit: '1', exponentialHistogram: { aggregationTemporality: 2, dataPoints: [{ ...point, count: '4', sum: 42.5, min: 1, max: 30, scale: 2, zeroCount: '0', positive: { offset: 0, bucketCounts: ['1', '3'] } }] } },
              { name: 'reply.seconds', unit: 's', summary: { dataPoints: [{ ...point, count: '10', sum: 7.5, quantileValues: [{ quantile: 0, value: 0.2 }, { quantile: 0.5, value: 0.7 }, { quantile: 1, value: 1.9 }] }] } },
            ],
          }],
        }],
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(r.body, {});
      const metrics = (await get(`/sessions/${session.id}/metrics`)).body.metrics;
      const metric = Object.fromEntries(metrics.map((m: any) => [m.name, m]));
      assert.deepEqual([metric.tokens.kind, metric.tokens.count, metric.tokens.sum, metric.tokens.min, metric.tokens.max], ['exponential_histogram', 4, 42.5, 1, 30]);
      assert.deepEqual(metric.tokens.metric_attributes, { route: '/chat' });
      assert.deepEqual([metric['reply.seconds'].kind, metric['reply.seconds'].count, metric['reply.seconds'].sum, metric['reply.seconds'].min, metric['reply.seconds'].max], ['summary', 10, 7.5, 0.2, 1.9]);
    });

    test('resends are stored once; room names attribute to the running session; unknown sessions are a partial success', async () => {
      const room = `named-${randomUUID().slice(0, 8)}`;
      const session = await roomServer.startSession(room);
      const trace = hex(16);
      const request = spanRequest({ 'atrium.room.name': room }, [{ traceId: trace, spanId: hex(8) }, { traceId: trace, spanId: hex(8) }]);
      for (let i = 0; i < 3; i += 1) {
        const r = await post('traces', request);
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, {});
      }
      assert.equal((await get(`/sessions/${session.id}/spans`)).body.total, 2);
      assert.equal((await get(`/sessions/${session.id}`)).body.telemetry.spans, 2, 'a resend does not count against the bound');
      assert.equal((await get(`/sessions/${session.id}/spans?trace_id=${trace.toUpperCase()}`)).body.total, 2);

      const mixed = await post('traces', {
        resourceSpans: [
          ...spanRequest({ 'atrium.session.id': randomUUID() }, [{ traceId: hex(16), spanId: hex(8) }]).resourceSpans,
          ...spanRequest({ 'atrium.session.id': 'not-a-uuid' }, [{ traceId: hex(16), spanId: hex(8) }]).resourceSpans,
          ...spanRequest({}, [{ traceId: hex(16), spanId: hex(8) }]).resourceSpans,
          ...spanRequest({ 'atrium.session.id': session.id }, [{ traceId: '00000000000000000000000000000000', spanId: hex(8) }, { traceId: hex(16), spanId: hex(8) }]).resourceSpans,
        ],
      });
      assert.equal(mixed.status, 200);
      assert.equal(mixed.body.partialSuccess.rejectedSpans, '4');
      assert.match(mixed.body.partialSuccess.errorMessage, /no such session/);
      assert.match(mixed.body.partialSuccess.errorMessage, /names no session/);
      assert.match(mixed.body.partialSuccess.errorMessage, /malformed/);
      assert.equal((await get(`/sessions/${session.id}/spans`)).body.total, 3);
    });

    test("an export that names another project's real session, or its running room, lands in none of its sessions", async () => {
      const room = `theirs-${randomUUID().slice(0, 8)}`;
      const theirs = await roomServer.startSession(room);
      const other = await createTenant(service, 'sessions-otlp-other');
      const key = await call(service, 'POST', `/accounts/projects/${other.projectId}/api-keys`, { token: other.apiKey, json: { name: 'room server', roles: ['room_server'] } });
      const send = (resource: Record<string, string>) => call(service, 'POST', '/otlp/v1/traces', { token: key.body.value, json: spanRequest(resource, [{ traceId: hex(16), spanId: hex(8) }]) });
      const resources: Record<string, string>[] = [{ 'atrium.session.id': theirs.id }, { 'atrium.room.name': room }];
      for (const resource of resources) {
        const r = await send(resource);
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.partialSuccess?.rejectedSpans, '1', `${JSON.stringify(resource)}: ${JSON.stringify(r.body)}`);
      }
      assert.equal((await get(`/sessions/${theirs.id}/spans`)).body.total, 0, 'nothing reached the other project\'s session');
      assert.equal((await get(`/sessions/${theirs.id}`)).body.telemetry.spans, 0);
    });

    test('gzip bodies, and the error semantics: 400, 413, 415, 401 and 403 as google.rpc.Status', async () => {
      const session = await roomServer.startSession('gzip');
      const body = gzipSync(JSON.stringify(spanRequest({ 'atrium.session.id': session.id }, [{ traceId: hex(16), spanId: hex(8) }])));
      const zipped = await call(service, 'POST', '/otlp/v1/traces', { token: tenant.apiKey, body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
      assert.equal(zipped.status, 200, JSON.stringify(zipped.body));
      assert.equal((await get(`/sessions/${session.id}/spans`)).body.total, 1);

      const bad = await post('traces', { resourceSpans: 'no' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 3);
      assert.match(bad.body.message, /^invalid_request: /);
      assert.equal((await call(service, 'POST', '/otlp/v1/traces', { token: tenant.apiKey, body: '{"resourceSpans": [', headers: { 'content-type': 'application/json' } })).status, 400);
      const notProto = await call(service, 'POST', '/otlp/v1/traces', { token: tenant.apiKey, body: Buffer.from([0xff, 0xff, 0xff]), headers: { 'content-type': 'application/x-protobuf' } });
      assert.equal(notProto.status, 400);
      assert.equal(notProto.headers.get('content-type'), 'application/x-protobuf');
      const bomb = gzipSync(Buffer.alloc(9 * 1024 * 1024, 32));
      const tooBig = await call(service, 'POST', '/otlp/v1/logs', { token: tenant.apiKey, body: bomb, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
      assert.equal(tooBig.status, 413);
      assert.equal(tooBig.body.code, 8);
      const deflate = await call(service, 'POST', '/otlp/v1/logs', { token: tenant.apiKey, body: '{}', headers: { 'content-type': 'application/json', 'content-encoding': 'br' } });
      assert.equal(deflate.status, 415);
      const anonymous = await call(service, 'POST', '/otlp/v1/metrics', { json: {} });
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.body.code, 16);
      const asUser = await call(service, 'POST', '/otlp/v1/metrics', { token: tenant.userToken, json: {} });
      assert.equal(asUser.status, 403, 'the project comes from the key: user tokens name none');
      const readOnly = await call(service, 'POST', `${project}/api-keys`, { token: tenant.apiKey, json: { name: 'reader', roles: ['session_inventory'] } });
      assert.equal((await call(service, 'POST', '/otlp/v1/metrics', { token: readOnly.body.value, json: {} })).status, 403);
      assert.deepEqual((await post('metrics', {})).body, {}, 'an empty export is a success');
    });

    test('more exports at once than an instance ingests: 429 with Retry-After, as google.rpc.Status; accepted again once they end', async () => {
      // Exports whose bodies never finish hold their places (counted after authentication, before the body).
      const url = new URL('/otlp/v1/traces', service.url);
      const held = Array.from({ length: 32 }, () => {
        const req = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json', 'content-length': '1000' } });
        req.on('error', () => {});
        req.write('{"resourceSpans": [');
        return req;
      });
      try {
        const refused = await eventually(async () => {
          const r = await call(service, 'POST', '/otlp/v1/traces', { token: tenant.apiKey, json: { resourceSpans: [] } });
          return r.status === 429 ? r : undefined;
        });
        assert.equal(refused.headers.get('retry-after'), '1');
        assert.equal(refused.body.code, 8, 'RESOURCE_EXHAUSTED');
        assert.match(refused.body.message, /^rate_limited: /);
      } finally {
        for (const req of held) req.destroy();
      }
      await eventually(async () => (await call(service, 'POST', '/otlp/v1/traces', { token: tenant.apiKey, json: { resourceSpans: [] } })).status === 200);
    });

    test('a session keeps at most the bound of each kind; pruning deletes what is older than the retention', async () => {
      const session = await roomServer.startSession('bounded');
      const spans = Array.from({ length: MAX_ITEMS + 5 }, () => ({ traceId: hex(16), spanId: hex(8) }));
      const first = await post('traces', spanRequest({ 'atrium.session.id': session.id }, spans.slice(0, 30)));
      assert.deepEqual(first.body, {});
      const second = await post('traces', spanRequest({ 'atrium.session.id': session.id }, spans.slice(30)));
      assert.equal(second.body.partialSuccess.rejectedSpans, '5');
      assert.match(second.body.partialSuccess.errorMessage, new RegExp(`limit of ${MAX_ITEMS} spans`));
      assert.equal((await get(`/sessions/${session.id}/spans?limit=1000`)).body.total, MAX_ITEMS);
      assert.equal((await get(`/sessions/${session.id}/spans?limit=10&offset=35`)).body.spans.length, 5);

      // Nothing is old yet; a run a year and a day ahead deletes everything, counts included.
      await pruneTelemetry(service.ctx, { db: service.ctx.db, signal: new AbortController().signal }, new Date());
      assert.equal((await get(`/sessions/${session.id}`)).body.telemetry.spans, MAX_ITEMS);
      await pruneTelemetry(service.ctx, { db: service.ctx.db, signal: new AbortController().signal }, new Date(Date.now() + 366 * 86_400_000));
      assert.deepEqual((await get(`/sessions/${session.id}`)).body.telemetry, { spans: 0, events: 0, metrics: 0 });
      assert.equal((await get(`/sessions/${session.id}/spans`)).body.total, 0);
      assert.deepEqual((await post('traces', spanRequest({ 'atrium.session.id': session.id }, spans.slice(0, 3)))).body, {}, 'room again after pruning');
    });
  });
});

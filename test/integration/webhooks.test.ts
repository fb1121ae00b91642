// Webhooks end to end on both engines: management, every event type delivered to a real local
// receiver and verified independently, room.call handoff, secret rotation, retries and faults,
// delivery history and redelivery.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { eventsTable } from '../../src/platform/events/store.ts';
import { call, createTenant, createUserWithToken, forEachEngine, type Tenant } from '../support/service.ts';
import { sleep, startReceiver, startWebhookService, verifyDelivery, type Receiver, type Received, type WebhookTestService } from '../support/webhooks.ts';

forEachEngine('webhooks', (engine) => {
  let service: WebhookTestService;
  let tenant: Tenant;
  let receiver: Receiver;
  before(async () => {
    // A short retry schedule and timeout keep the fault cases fast; the real schedule is tested
    // with an injected clock in webhooks-retry.test.ts.
    service = await startWebhookService(engine, { ATRIUM_WEBHOOKS_RETRY_SCHEDULE: '1,1,1', ATRIUM_WEBHOOKS_TIMEOUT_SECONDS: '1' });
    tenant = await createTenant(service, 'webhooks');
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    await service?.stop();
  });
  beforeEach(() => {
    receiver.respond = () => ({});
  });

  const hooks = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}/webhooks`;
  const create = (json: unknown, t: Tenant = tenant) => call(service, 'POST', hooks(t), { token: t.apiKey, json });
  /** A webhook with its own path on the receiver, so tests can tell their deliveries apart. */
  async function makeHook(json: Record<string, unknown>, t: Tenant = tenant) {
    const tag = crypto.randomUUID();
    const created = await create({ name: 'hook', url: `${receiver.url}/hook/${tag}`, events: ['*'], ...json }, t);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return { ...created.body, tag, mine: (r: Received) => r.url === `/hook/${tag}` } as { id: string; secret?: string; tag: string; mine: (r: Received) => boolean; [k: string]: unknown };
  }
  const deliveriesOf = async (hookId: string, t: Tenant = tenant) => {
    const listed = await call(service, 'GET', `${hooks(t)}/${hookId}/deliveries`, { token: t.apiKey });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    return listed.body.deliveries as any[];
  };

  test('every event type reaches the receiver, signed, and the signature binds body and time', async () => {
    const hook = await makeHook({ secret: true, payload: { team: 'blue', event: 'not ours', data: 'not ours' } });
    assert.equal(typeof hook.secret, 'string');
    assert.ok(hook.secret!.length >= 32);
    assert.equal(hook.has_secret, true);

    // storage.file.updated and .deleted, by an API key; room.started and .ended, reported by a room server.
    const path = `reports/${crypto.randomUUID()}.txt`;
    const up = await call(service, 'POST', `/projects/${tenant.projectId}/storage/upload?path=${encodeURIComponent(path)}`, { token: tenant.apiKey, body: 'hello', headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(up.status, 200);
    const del = await call(service, 'DELETE', `/projects/${tenant.projectId}/storage?path=${encodeURIComponent(path)}`, { token: tenant.apiKey });
    assert.equal(del.status, 200);
    const room = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms`, { token: tenant.apiKey, json: { name: 'stage' } });
    const started = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'stage', participants: { user: 1 } } });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    assert.equal(started.body.room_id, room.body.id, 'the session points at the registered room');
    assert.equal(started.body.is_active, true);
    assert.deepEqual(started.body.participants, { user: 1 });
    const sessionId = started.body.id;
    const ended = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions/${sessionId}/end`, { token: tenant.apiKey, json: {} });
    assert.equal(ended.status, 200);
    assert.equal(ended.body.is_active, false);

    // Each of those changes is also an audit entry, which `*` takes too (audit.recorded).
    const expected = ['audit.recorded', 'room.ended', 'room.started', 'storage.file.deleted', 'storage.file.updated'];
    const types = () => new Set(receiver.received.filter(hook.mine).map((r) => r.json.event as string));
    await receiver.waitFor(() => expected.every((type) => types().has(type)));
    const byType = new Map(receiver.received.filter(hook.mine).map((r) => [r.json.event, r]).reverse() as [string, (typeof receiver.received)[number]][]);
    assert.deepEqual([...types()].sort(), expected);
    const got = [...byType.values()];

    // participant_id: the API key that wrote (its id), or the user for a user's token.
    const keys = (await call(service, 'GET', `/accounts/projects/${tenant.projectId}/api-keys`, { token: tenant.apiKey })).body.keys as { id: string }[];
    assert.equal(keys.length, 1);
    assert.deepEqual(byType.get('storage.file.updated')!.json.data, { path, participant_id: keys[0]!.id });
    assert.deepEqual(byType.get('storage.file.deleted')!.json.data, { path, participant_id: keys[0]!.id });
    const byUser = await call(service, 'POST', `/projects/${tenant.projectId}/storage/upload?path=by-user.txt`, { token: tenant.userToken, body: 'u', headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(byUser.status, 200);
    await receiver.waitFor((all) => all.some((r) => hook.mine(r) && r.json.data.path === 'by-user.txt'));
    assert.equal(receiver.received.find((r) => hook.mine(r) && r.json.data.path === 'by-user.txt')!.json.data.participant_id, tenant.userId);
    assert.deepEqual(byType.get('room.started')!.json.data, { room_name: 'stage', room_url: `ws://127.0.0.1:${new URL(service.url).port}/rooms/stage`, session_id: sessionId });
    assert.deepEqual(byType.get('room.ended')!.json.data, { room_name: 'stage', room_url: `ws://127.0.0.1:${new URL(service.url).port}/rooms/stage`, session_id: sessionId });

    for (const r of got) {
      // Envelope: our event/data win over payload keys of the same name; other payload keys merge in.
      assert.equal(r.json.team, 'blue');
      assert.notEqual(r.json.event, 'not ours');
      assert.equal(typeof r.json.data, 'object');
      assert.equal(r.method, 'POST');
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.headers['user-agent'], 'Atrium-Webhooks/1');
      assert.match(String(r.headers['service-event-id']), /^[0-9a-f-]{36}$/);
      assert.equal(r.headers['service-delivery-attempt'], '1');
      const ts = Number(r.headers['service-event-timestamp']);
      assert.ok(Math.abs(ts - Date.now() / 1000) < 60, `timestamp ${ts}`);
      const { payload } = await verifyDelivery(hook.secret!, r.body, r.headers['service-signature']);
      assert.equal((payload.exp as number) - (payload.iat as number), 300);
      assert.equal(r.headers['service-signature-previous'], undefined);

      // A tampered body no longer matches the signed hash.
      const tampered = Buffer.from(r.body.toString('utf8').replace('"data"', '"data" ').replace('stage', 'stagf'));
      await assert.rejects(verifyDelivery(hook.secret!, tampered, r.headers['service-signature']), /does not match/);
      // The token expires: five minutes and a bit later it is refused.
      await assert.rejects(verifyDelivery(hook.secret!, r.body, r.headers['service-signature'], new Date((payload.exp as number) * 1000 + 1000)), /exp/);
      // And a wrong secret fails.
      await assert.rejects(verifyDelivery('x'.repeat(32), r.body, r.headers['service-signature']), /signature/);
    }
    // The body is Python-style JSON (what Python receivers re-serialise before hashing).
    assert.match(got[0]!.body.toString('utf8'), /^\{"event": "/);

    // The five deliveries above, and the audit entries' (as many as the changes were audited).
    const history = await eventuallyDeliveries(hook.id, (d) => d.filter((x) => x.event !== 'audit.recorded').length === 5 && d.every((x) => x.status !== 'pending'));
    for (const d of history) {
      assert.equal(d.status, 'succeeded');
      assert.equal(d.attempt_count, 1);
      assert.equal(d.attempts.length, 1);
      assert.equal(d.attempts[0].http_status, 200);
      assert.equal(d.attempts[0].response_excerpt, '{"ok":true}');
      assert.equal(d.next_attempt_at, null);
    }
  });

  test('only subscribed events are delivered; a project without webhooks writes no events', async () => {
    const other = await createTenant(service, 'webhooks-sub');
    const hook = await makeHook({ events: ['room.ended'] }, other);
    const s = await call(service, 'POST', `/accounts/projects/${other.projectId}/sessions`, { token: other.apiKey, json: { room_name: 'r1' } });
    await call(service, 'POST', `/accounts/projects/${other.projectId}/sessions/${s.body.id}/end`, { token: other.apiKey });
    await receiver.waitFor((all) => all.some(hook.mine));
    const mine = receiver.received.filter(hook.mine);
    assert.deepEqual(mine.map((r) => r.json.event), ['room.ended']);
    // Unsigned when no secret was asked for.
    assert.equal(mine[0]!.headers['service-signature'], undefined);
    // Events nobody subscribed to leave no rows behind.
    const eventsOf = async (projectId: string) => (await service.ctx.db.select().from(eventsTable).where(eq(eventsTable.projectId, projectId))).map((e) => e.type);
    assert.deepEqual(await eventsOf(other.projectId), ['room.ended']);
    const quiet = await createTenant(service, 'webhooks-none');
    assert.equal((await call(service, 'POST', `/accounts/projects/${quiet.projectId}/sessions`, { token: quiet.apiKey, json: { room_name: 'r2' } })).status, 201);
    assert.deepEqual(await eventsOf(quiet.projectId), []);
  });

  test('one emitting statement serves every project: each event reaches its own project\'s hooks with its own data', async () => {
    // The statement writing room.started is built once and reused; the project, the event's data
    // and the cause's values are bound per call, so alternating projects must never mix them.
    const a = await createTenant(service, 'webhooks-stmt-a');
    const b = await createTenant(service, 'webhooks-stmt-b');
    const hookA = await makeHook({ events: ['room.started'] }, a);
    const hookB = await makeHook({ events: ['room.started'] }, b);
    const rooms: Record<string, string[]> = { [a.projectId]: [], [b.projectId]: [] };
    for (let i = 0; i < 6; i += 1) {
      const t = i % 2 === 0 ? a : b;
      const room = `stmt-${i}`;
      rooms[t.projectId]!.push(room);
      const started = await call(service, 'POST', `/accounts/projects/${t.projectId}/sessions`, { token: t.apiKey, json: { room_name: room, participants: { user: i } } });
      assert.equal(started.status, 201, JSON.stringify(started.body));
      assert.equal(started.body.room_name, room);
      assert.deepEqual(started.body.participants, { user: i });
    }
    await receiver.waitFor((all) => all.filter(hookA.mine).length === 3 && all.filter(hookB.mine).length === 3);
    const roomsOf = (mine: (r: Received) => boolean) => receiver.received.filter(mine).map((r) => r.json.data.room_name).sort();
    assert.deepEqual(roomsOf(hookA.mine), rooms[a.projectId]);
    assert.deepEqual(roomsOf(hookB.mine), rooms[b.projectId]);
    for (const t of [a, b]) {
      const events = await service.ctx.db.select().from(eventsTable).where(eq(eventsTable.projectId, t.projectId));
      assert.deepEqual(events.map((e) => (e.data as { room_name: string }).room_name).sort(), rooms[t.projectId]);
    }
  });

  test('repeated session reports are idempotent: one event each', async () => {
    const other = await createTenant(service, 'webhooks-idem');
    const hook = await makeHook({ events: ['room.started', 'room.ended'] }, other);
    const id = crypto.randomUUID();
    const first = await call(service, 'POST', `/accounts/projects/${other.projectId}/sessions`, { token: other.apiKey, json: { room_name: 'r', session_id: id } });
    assert.equal(first.status, 201);
    const again = await call(service, 'POST', `/accounts/projects/${other.projectId}/sessions`, { token: other.apiKey, json: { room_name: 'r', session_id: id } });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, id);
    const clash = await call(service, 'POST', `/accounts/projects/${other.projectId}/sessions`, { token: other.apiKey, json: { room_name: 'other', session_id: id } });
    assert.equal(clash.status, 409);
    for (let i = 0; i < 2; i += 1) {
      const end = await call(service, 'POST', `/accounts/projects/${other.projectId}/sessions/${id}/end`, { token: other.apiKey, json: { participants: { user: 2 } } });
      assert.equal(end.status, 200);
      assert.deepEqual(end.body.participants, { user: 2 });
    }
    assert.equal((await call(service, 'POST', `/accounts/projects/${other.projectId}/sessions/${crypto.randomUUID()}/end`, { token: other.apiKey })).status, 404);
    // Another project's session is not found.
    assert.equal((await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions/${id}/end`, { token: tenant.apiKey })).status, 404);
    // Events commit with the report that causes them: these are all there will ever be.
    const events = await service.ctx.db.select().from(eventsTable).where(eq(eventsTable.projectId, other.projectId));
    assert.deepEqual(events.map((e) => e.type).sort(), ['room.ended', 'room.started']);
    // Once both deliveries have succeeded at their first attempt, no job is left to send anything more.
    const settled = await eventuallyDeliveries(hook.id, (d) => d.length === 2 && d.every((x) => x.status === 'succeeded'), 10_000, other);
    assert.deepEqual(settled.map((d) => d.attempt_count), [1, 1]);
    assert.deepEqual(receiver.received.filter(hook.mine).map((r) => r.json.event).sort(), ['room.ended', 'room.started']);
  });

  test('room.call handoff: a participant token for the room, the payload as arguments', async () => {
    const hook = await makeHook({ events: ['room.started'], action: 'call', payload: { agent: 'greeter' }, secret: 'a-caller-chosen-secret-123' });
    assert.equal(hook.secret, 'a-caller-chosen-secret-123');
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'lobby' } });
    await receiver.waitFor((all) => all.some(hook.mine));
    const r = receiver.received.find(hook.mine)!;
    await verifyDelivery('a-caller-chosen-secret-123', r.body, r.headers['service-signature']);
    assert.equal(r.json.event, 'room.call');
    assert.deepEqual(Object.keys(r.json).sort(), ['data', 'event']);
    assert.equal(r.json.data.room_name, 'lobby');
    assert.match(r.json.data.room_url, /\/rooms\/lobby$/);
    assert.deepEqual(r.json.data.arguments, { agent: 'greeter' });
    const validated = await call(service, 'POST', '/api/participant-token/validate', { json: { token: r.json.data.token } });
    assert.equal(validated.status, 200, JSON.stringify(validated.body));
    assert.equal(validated.body.sub, tenant.projectId);
    assert.deepEqual(decodeJwt(r.json.data.token).grants, [{ name: 'room', scope: 'lobby' }, { name: 'role', scope: 'agent' }, validated.body.grants[2]]);
    // A call webhook needs room events.
    const bad = await create({ name: 'x', url: `${receiver.url}/x`, events: ['storage.file.updated'], action: 'call' });
    assert.equal(bad.status, 400);
  });

  test('secret rotation: both secrets sign during the overlap, then only the new one', async () => {
    const hook = await makeHook({ events: ['room.started'], secret: true });
    const rotated = await call(service, 'POST', `${hooks()}/${hook.id}/rotate-secret`, { token: tenant.apiKey, json: { overlap_seconds: 3600 } });
    assert.equal(rotated.status, 200);
    const newSecret = rotated.body.secret as string;
    assert.ok(newSecret && newSecret !== hook.secret);
    assert.ok(rotated.body.previous_secret_expires_at);
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'rot' } });
    await receiver.waitFor((all) => all.some(hook.mine));
    const r = receiver.received.filter(hook.mine).at(-1)!;
    await verifyDelivery(newSecret, r.body, r.headers['service-signature']);
    await verifyDelivery(hook.secret!, r.body, r.headers['service-signature-previous']);
    await assert.rejects(verifyDelivery(hook.secret!, r.body, r.headers['service-signature']));

    // Without overlap the old secret stops at once.
    const again = await call(service, 'POST', `${hooks()}/${hook.id}/rotate-secret`, { token: tenant.apiKey, json: { overlap_seconds: 0 } });
    assert.equal(again.body.previous_secret_expires_at, null);
    const count = receiver.received.filter(hook.mine).length;
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'rot2' } });
    await receiver.waitFor((all) => all.filter(hook.mine).length > count);
    const last = receiver.received.filter(hook.mine).at(-1)!;
    await verifyDelivery(again.body.secret, last.body, last.headers['service-signature']);
    assert.equal(last.headers['service-signature-previous'], undefined);
    // The secret is never listed.
    const listed = await call(service, 'GET', hooks(), { token: tenant.apiKey });
    assert.ok(!JSON.stringify(listed.body).includes(again.body.secret));
    assert.ok(listed.body.webhooks.every((w: { secret?: string }) => w.secret === undefined));
  });

  test('500 then 200: retried with the same event id and the next attempt number', async () => {
    const hook = await makeHook({ events: ['room.started'] });
    let calls = 0;
    receiver.respond = (r) => (hook.mine(r) && ++calls === 1 ? { status: 500, body: 'x'.repeat(5000) } : {});
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'flaky' } });
    await receiver.waitFor((all) => all.filter(hook.mine).length >= 2);
    const [first, second] = receiver.received.filter(hook.mine);
    assert.equal(first!.headers['service-event-id'], second!.headers['service-event-id']);
    assert.equal(first!.headers['service-delivery-attempt'], '1');
    assert.equal(second!.headers['service-delivery-attempt'], '2');
    assert.ok(second!.at - first!.at >= 700, `retried after ${second!.at - first!.at} ms (schedule 1 s ± 20 %)`);
    const [delivery] = await eventuallyDeliveries(hook.id, (d) => d[0]?.status === 'succeeded');
    assert.equal(delivery.attempt_count, 2);
    assert.deepEqual(delivery.attempts.map((a: any) => [a.attempt, a.http_status, a.succeeded]), [[1, 500, false], [2, 200, true]]);
    assert.equal(Buffer.byteLength(delivery.attempts[0].response_excerpt), 1024);
    assert.equal(delivery.attempts[0].error, 'HTTP 500');
  });

  test('a receiver that times out is retried; the attempt records the timeout', async () => {
    const hook = await makeHook({ events: ['room.started'] });
    let calls = 0;
    receiver.respond = (r) => (hook.mine(r) && ++calls === 1 ? { delayMs: 2500 } : {});
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'slow' } });
    const [delivery] = await eventuallyDeliveries(hook.id, (d) => d[0]?.status === 'succeeded', 15_000);
    assert.equal(delivery.attempts[0].succeeded, false);
    assert.equal(delivery.attempts[0].http_status, null);
    assert.match(delivery.attempts[0].error, /ETIMEDOUT|within 1000 ms/);
    assert.ok(delivery.attempts[0].latency_ms >= 900);
    assert.ok(delivery.attempts[0].latency_ms < 2_400, `given up at the deadline, not when the receiver answered: ${delivery.attempts[0].latency_ms} ms`);
    const mine = receiver.received.filter(hook.mine);
    assert.equal(new Set(mine.map((r) => r.headers['service-event-id'])).size, 1);
  });

  test('a receiver that answers 200 and then stalls its body past the deadline has not taken the delivery', async () => {
    const hook = await makeHook({ events: ['room.started'] });
    let calls = 0;
    receiver.respond = (r) => (hook.mine(r) && ++calls === 1 ? { stallBodyMs: 2500 } : {});
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'stalling' } });
    const [delivery] = await eventuallyDeliveries(hook.id, (d) => d[0]?.status === 'succeeded', 15_000);
    assert.deepEqual(delivery.attempts.map((a: any) => [a.attempt, a.succeeded]), [[1, false], [2, true]]);
    assert.match(delivery.attempts[0].error, /ETIMEDOUT|within 1000 ms/);
    assert.ok(delivery.attempts[0].latency_ms < 2_400, `given up at the deadline: ${delivery.attempts[0].latency_ms} ms`);
  });

  // Only PostgreSQL has two transactions at once to lock each other out; PGlite runs one at a time.
  if (engine === 'postgres') {
    test('deleting a webhook while an attempt of it is being recorded waits for it: 200, never a deadlock', async () => {
      const statuses: number[] = [];
      for (let round = 0; round < 16; round += 1) {
        const hook = await makeHook({ events: ['room.started'] });
        let deleting: Promise<number> | undefined;
        // The first failure starts the webhook's failing streak, recorded with the attempt: the
        // delete is sent as the answer leaves, so it meets that record.
        receiver.respond = (r) => {
          // A little later each round, to fall within the record's statements in one of them.
          if (hook.mine(r) && !deleting) deleting = sleep(round).then(() => call(service, 'DELETE', `${hooks()}/${hook.id}`, { token: tenant.apiKey })).then((d) => d.status);
          return { status: 500 };
        };
        await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: `deleted-${round}` } });
        await receiver.waitFor(() => deleting !== undefined);
        statuses.push(await deleting!);
      }
      receiver.respond = () => ({});
      assert.deepEqual(statuses, statuses.map(() => 200));
    });
  }

  test('a receiver that answers with a large body: its status counts, the rest is not read', async () => {
    const hook = await makeHook({ events: ['room.started'] });
    receiver.respond = (r) => (hook.mine(r) ? { status: 200, body: 'y'.repeat(1_000_000) } : {});
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'chatty' } });
    const [delivery] = await eventuallyDeliveries(hook.id, (d) => d[0]?.status === 'succeeded');
    assert.deepEqual(delivery.attempts.map((a: any) => [a.attempt, a.http_status, a.succeeded]), [[1, 200, true]]);
    assert.equal(delivery.attempts[0].response_excerpt, 'y'.repeat(1024));
  });

  test('redirects are failures, not followed', async () => {
    const hook = await makeHook({ events: ['room.started'] });
    receiver.respond = (r) => (hook.mine(r) ? { status: 302, headers: { location: `${receiver.url}/elsewhere` } } : {});
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'moved' } });
    const [delivery] = await eventuallyDeliveries(hook.id, (d) => d[0]?.status === 'failed', 15_000);
    assert.equal(delivery.attempt_count, 4, 'first attempt and the three retries of the test schedule');
    assert.match(delivery.attempts[0].error, /Redirects are not followed \(HTTP 302/);
    assert.ok(!receiver.received.some((r) => r.url === '/elsewhere'));
  });

  test('410 Gone disables the webhook with a reason; re-enabling works, redeliver resends', async () => {
    const hook = await makeHook({ events: ['room.started'] });
    receiver.respond = (r) => (hook.mine(r) ? { status: 410 } : {});
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'gone' } });
    const [delivery] = await eventuallyDeliveries(hook.id, (d) => d[0]?.status === 'failed');
    assert.equal(delivery.attempt_count, 1);
    const listed = (await call(service, 'GET', hooks(), { token: tenant.apiKey })).body.webhooks.find((w: { id: string }) => w.id === hook.id);
    assert.equal(listed.enabled, false);
    assert.match(listed.disabled_reason, /410/);
    // Disabled: new events are not delivered to it.
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/sessions`, { token: tenant.apiKey, json: { room_name: 'gone2' } });
    assert.equal((await deliveriesOf(hook.id)).length, 1);
    const refused = await call(service, 'POST', `${hooks()}/${hook.id}/deliveries/${delivery.id}/redeliver`, { token: tenant.apiKey });
    assert.equal(refused.status, 409);

    receiver.respond = () => ({});
    const enabled = await call(service, 'PUT', `${hooks()}/${hook.id}`, { token: tenant.apiKey, json: { enabled: true } });
    assert.equal(enabled.body.enabled, true);
    assert.equal(enabled.body.disabled_reason, null);
    const before = receiver.received.filter(hook.mine).length;
    const again = await call(service, 'POST', `${hooks()}/${hook.id}/deliveries/${delivery.id}/redeliver`, { token: tenant.apiKey });
    assert.equal(again.status, 202, JSON.stringify(again.body));
    const [redelivered] = await eventuallyDeliveries(hook.id, (d) => d.find((x) => x.id === delivery.id)?.status === 'succeeded');
    void redelivered;
    const after = (await deliveriesOf(hook.id)).find((x) => x.id === delivery.id);
    assert.deepEqual(after.attempts.map((a: any) => [a.attempt, a.trigger, a.http_status]), [[1, 'scheduled', 410], [2, 'manual', 200]]);
    const resent = receiver.received.filter(hook.mine).slice(before);
    assert.equal(resent.length, 1);
    assert.equal(resent[0]!.headers['service-event-id'], delivery.event_id);
  });

  async function eventuallyDeliveries(hookId: string, done: (d: any[]) => boolean, timeoutMs = 10_000, t: Tenant = tenant) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const d = await deliveriesOf(hookId, t);
      if (done(d)) return d;
      if (Date.now() > deadline) throw new Error(`deliveries not as expected: ${JSON.stringify(d)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  describe('management', () => {
    test('create, list, update, delete; fields and validation', async () => {
      const created = await create({ name: 'ci', description: 'builds', url: `${receiver.url}/ci`, events: ['room.started', 'room.started', 'storage.file.updated'], action: '', payload: '' });
      assert.equal(created.status, 201);
      const w = created.body;
      assert.deepEqual(
        { ...w, id: undefined, created_at: undefined, updated_at: undefined },
        { id: undefined, name: 'ci', description: 'builds', url: `${receiver.url}/ci`, events: ['room.started', 'storage.file.updated'], action: '', payload: null, enabled: true, disabled_reason: null, has_secret: false, previous_secret_expires_at: null, created_at: undefined, updated_at: undefined },
      );
      // SDK shapes: action null, payload as a JSON string, secret null.
      const sdk = await create({ name: 'sdk', description: '', url: `${receiver.url}/sdk`, events: ['*'], action: null, payload: '{"k": 1}', secret: null });
      assert.equal(sdk.status, 201, JSON.stringify(sdk.body));
      assert.deepEqual(sdk.body.payload, { k: 1 });
      assert.equal(sdk.body.action, '');
      assert.equal(sdk.body.secret, undefined);

      const listed = await call(service, 'GET', hooks(), { token: tenant.apiKey });
      assert.equal(listed.status, 200);
      assert.ok(listed.body.webhooks.some((x: { id: string }) => x.id === w.id));

      const updated = await call(service, 'PUT', `${hooks()}/${w.id}`, { token: tenant.apiKey, json: { name: 'ci2', description: 'd', url: `${receiver.url}/ci2`, events: ['*'], action: '', payload: { a: [1, 2] }, secret: true } });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.name, 'ci2');
      assert.deepEqual(updated.body.events, ['*']);
      assert.deepEqual(updated.body.payload, { a: [1, 2] });
      assert.equal(typeof updated.body.secret, 'string');
      assert.equal(updated.body.has_secret, true);
      const partial = await call(service, 'PUT', `${hooks()}/${w.id}`, { token: tenant.apiKey, json: { description: 'only this' } });
      assert.equal(partial.body.name, 'ci2');
      assert.equal(partial.body.has_secret, true);
      assert.equal(partial.body.secret, undefined);
      const unsigned = await call(service, 'PUT', `${hooks()}/${w.id}`, { token: tenant.apiKey, json: { secret: false } });
      assert.equal(unsigned.body.has_secret, false);

      assert.equal((await call(service, 'DELETE', `${hooks()}/${w.id}`, { token: tenant.apiKey })).status, 200);
      assert.equal((await call(service, 'DELETE', `${hooks()}/${w.id}`, { token: tenant.apiKey })).status, 404);
      assert.equal((await call(service, 'PUT', `${hooks()}/${w.id}`, { token: tenant.apiKey, json: { name: 'x' } })).status, 404);
    });

    test('bad input is a 4xx naming the problem', async () => {
      const base = { name: 'x', url: `${receiver.url}/x`, events: ['*'] };
      const cases: [unknown, RegExp][] = [
        [{ ...base, events: ['room.exploded'] }, /Unknown event type "room.exploded"/],
        [{ ...base, events: [] }, /events/],
        [{ ...base, url: 'not a url' }, /absolute http/],
        [{ ...base, url: 'ftp://example.com/x' }, /http or https/],
        [{ ...base, url: `${receiver.url}/${'x'.repeat(2100)}` }, /url/],
        [{ ...base, payload: '[1,2]' }, /payload must be a JSON object/],
        [{ ...base, payload: 42 }, /payload/],
        [{ ...base, payload: { big: 'x'.repeat(70_000) } }, /at most 65536 bytes/],
        [{ ...base, action: 'shout' }, /action/],
        [{ ...base, secret: 'short' }, /at least 16/],
        [{ ...base, name: '' }, /name/],
        [{ name: 'x', events: ['*'] }, /url is required/],
      ];
      for (const [json, message] of cases) {
        const response = await create(json);
        assert.equal(response.status, 400, JSON.stringify(json).slice(0, 200));
        assert.match(response.body.error.message, message);
      }
    });

    test('developers manage webhooks, members may not; another project answers 404', async () => {
      const member = await createUserWithToken(service, 'wh-member');
      await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: member.userId, roles: ['member'] } });
      assert.equal((await call(service, 'GET', hooks(), { token: member.token })).status, 403);
      assert.equal((await call(service, 'POST', hooks(), { token: member.token, json: { name: 'x', url: `${receiver.url}/x`, events: ['*'] } })).status, 403);
      const dev = await createUserWithToken(service, 'wh-dev');
      await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: dev.userId, roles: ['developer'] } });
      const made = await call(service, 'POST', hooks(), { token: dev.token, json: { name: 'dev', url: `${receiver.url}/dev`, events: ['*'] } });
      assert.equal(made.status, 201);

      const other = await createTenant(service, 'webhooks-other');
      assert.equal((await call(service, 'PUT', `${hooks(other)}/${made.body.id}`, { token: other.apiKey, json: { name: 'stolen' } })).status, 404);
      assert.equal((await call(service, 'DELETE', `${hooks(other)}/${made.body.id}`, { token: other.apiKey })).status, 404);
      assert.equal((await call(service, 'GET', `${hooks(other)}/${made.body.id}/deliveries`, { token: other.apiKey })).status, 404);
      assert.equal((await call(service, 'POST', `${hooks(other)}/${made.body.id}/rotate-secret`, { token: other.apiKey, json: {} })).status, 404);
      assert.ok(!(await call(service, 'GET', hooks(other), { token: other.apiKey })).body.webhooks.some((w: { id: string }) => w.id === made.body.id));
      // Using the other project's key on this project's path is refused as well.
      assert.equal((await call(service, 'GET', hooks(), { token: other.apiKey })).status, 404);
    });
  });

  describe('project storage listing and delete', () => {
    test('lists a folder\'s direct children; delete removes a file and 404s when missing', async () => {
      const t = await createTenant(service, 'storage-list');
      for (const p of ['a.txt', 'docs/b.md', 'docs/deep/c.md']) {
        const r = await call(service, 'POST', `/projects/${t.projectId}/storage/upload?path=${p}`, { token: t.apiKey, body: p, headers: { 'content-type': 'application/octet-stream' } });
        assert.equal(r.status, 200);
      }
      const root = await call(service, 'GET', `/projects/${t.projectId}/storage`, { token: t.apiKey });
      assert.equal(root.status, 200);
      assert.deepEqual(root.body.files.map((f: any) => [f.name, f.path, f.is_folder, f.size]), [['a.txt', 'a.txt', false, 5], ['docs', 'docs', true, null]]);
      const docs = await call(service, 'GET', `/projects/${t.projectId}/storage?path=docs/`, { token: t.apiKey });
      assert.deepEqual(docs.body.files.map((f: any) => [f.path, f.is_folder]), [['docs/b.md', false], ['docs/deep', true]]);
      assert.equal(docs.body.path, 'docs');
      assert.deepEqual((await call(service, 'GET', `/projects/${t.projectId}/storage?path=nothing`, { token: t.apiKey })).body.files, []);
      assert.equal((await call(service, 'GET', `/projects/${t.projectId}/storage?path=../x`, { token: t.apiKey })).status, 400);
      assert.equal((await call(service, 'DELETE', `/projects/${t.projectId}/storage?path=docs/b.md`, { token: t.apiKey })).status, 200);
      assert.equal((await call(service, 'DELETE', `/projects/${t.projectId}/storage?path=docs/b.md`, { token: t.apiKey })).status, 404);
      assert.equal((await call(service, 'GET', `/projects/${t.projectId}/storage/download?path=docs/b.md`, { token: t.apiKey })).status, 404);
      // Another project's key sees nothing here.
      assert.equal((await call(service, 'GET', `/projects/${t.projectId}/storage`, { token: tenant.apiKey })).status, 404);
    });
  });
});

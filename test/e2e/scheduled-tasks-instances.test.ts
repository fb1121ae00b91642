// Scheduled tasks against real `atrium serve` processes and a fake room server: two instances on one
// PostgreSQL fire 200 tasks due in the same minute exactly once each, and an instance SIGKILLed
// while deliveries are in flight loses none of them once it is back.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pgUrl, requireOrSkip } from '../support/env.ts';
import { startFakeRoomServer, type FakeRoomServer, type RoomServerCall } from '../support/room-server.ts';
import { forEachEngine, isolatedDatabase } from '../support/service.ts';
import { atriumCommand, childEnv, eventually, spawnAtrium, type AtriumChild } from '../support/webhooks.ts';

const PASSWORD = 'correct horse battery staple';
const ROOM = 'cron-room';

async function setUp(engine: 'pglite' | 'postgres', roomServer: FakeRoomServer, extraEnv: Record<string, string>) {
  const database = await isolatedDatabase(engine);
  const env = { ...childEnv(database), ATRIUM_ROOM_SERVER_URL: roomServer.url, ATRIUM_JOBS_POLL_MS: '200', ...extraEnv };
  const boot = JSON.parse(atriumCommand(['bootstrap', '--email', `tasks-${randomUUID()}@example.test`, '--password', PASSWORD, '--project', 'tasks', '--json'], env)) as { project_id: string; api_key: string };
  return {
    env,
    boot,
    async cleanUp() {
      await database.drop();
    },
  };
}

/** Creates `count` one-time tasks that all fall due at the next minute boundary. */
async function createTasks(roomServer: FakeRoomServer, projectId: string, count: number): Promise<string[]> {
  const project = `/accounts/projects/${projectId}`;
  assert.equal((await roomServer.api('POST', `${project}/rooms`, { name: ROOM })).status, 201);
  // Creating them takes a second or two: late in a minute, wait for the next one, so that all fall
  // due at the same boundary.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 40_000) await sleep(60_000 - intoMinute + 100);
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const r = await roomServer.api('POST', `${project}/rooms/${ROOM}/scheduled-tasks`, { spec: { schedule: '* * * * *', once: true, queue: { name: 'tick', payload: { i } } } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    ids.push(r.body.task_id);
  }
  return ids;
}

const messages = (calls: RoomServerCall[]) => calls.filter((c) => c.path === '/atrium/v1/queue-messages');

async function deliveredBy(instance: AtriumChild): Promise<number> {
  const text = await (await fetch(`${instance.url}/metrics`)).text();
  return Number(/atrium_jobs_settled_total\{topic="scheduled-tasks\.deliver",outcome="done"\} (\d+)/.exec(text)?.[1] ?? 0);
}

test('two instances on one PostgreSQL fire 200 tasks due in the same minute exactly once each', { timeout: 240_000 }, async (t) => {
  if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
  const roomServer = await startFakeRoomServer();
  t.after(() => roomServer.close());
  // Small claims, so that both instances take part in firing and delivering; one public URL for
  // both, as behind a load balancer (the issuer the room server checks).
  const publicUrl = 'http://atrium.pair.test';
  const setup = await setUp('postgres', roomServer, { ATRIUM_JOBS_BATCH_SIZE: '5', ATRIUM_PUBLIC_URL: publicUrl });
  const servers = [await spawnAtrium(setup.env), await spawnAtrium(setup.env)];
  try {
    roomServer.connect({ url: servers[0]!.url, issuer: publicUrl, projectId: setup.boot.project_id, apiKey: setup.boot.api_key });
    const ids = await createTasks(roomServer, setup.boot.project_id, 200);
    await roomServer.waitFor((calls) => new Set(messages(calls).map((c) => c.json.task_id)).size >= ids.length, 150_000);
    // Every delivery job is done once the instances' counts add up; then both stop, after which
    // nothing more can reach the room server.
    const settled = await eventually(async () => {
      const counts = await Promise.all(servers.map(deliveredBy));
      return counts[0]! + counts[1]! >= ids.length && counts;
    });
    await Promise.all(servers.map((s) => s.kill('SIGTERM')));
    const received = messages(roomServer.calls);
    assert.equal(received.length, ids.length, `each task once (${received.length} messages for ${ids.length} tasks)`);
    assert.deepEqual(new Set(received.map((c) => c.json.task_id)), new Set(ids));
    assert.ok(received.every((c) => new Date(c.json.scheduled_time).getUTCSeconds() === 0), 'due at a minute boundary');
    assert.equal(new Set(received.map((c) => c.json.scheduled_time)).size, 1, 'all due in the same minute');
    assert.ok(settled[0]! > 0 && settled[1]! > 0, `both instances delivered (${settled.join(' + ')})`);
    assert.deepEqual(roomServer.refused, []);
    process.stdout.write(`# two instances: ${settled.join(' + ')} deliveries of ${ids.length} tasks, due at ${[...new Set(received.map((c) => c.json.scheduled_time))].join(', ')}\n`);
  } finally {
    await Promise.all(servers.map((s) => s.kill('SIGTERM')));
    await setup.cleanUp();
  }
});

forEachEngine('scheduled tasks survive SIGKILL', (engine) => {
  test('an instance killed while deliveries are in flight delivers every run once it is back', { timeout: 240_000 }, async (t) => {
    const roomServer = await startFakeRoomServer();
    t.after(() => roomServer.close());
    // A short lease, so that the dead instance's claimed deliveries come back within seconds; one
    // public URL for both lives of the instance (the issuer the room server checks), as in production.
    const publicUrl = 'http://atrium.crash.test';
    const setup = await setUp(engine, roomServer, { ATRIUM_JOBS_LEASE_SECONDS: '3', ATRIUM_JOBS_CONCURRENCY: '20', ATRIUM_JOBS_BATCH_SIZE: '10', ATRIUM_PUBLIC_URL: publicUrl });
    const connect = (instance: AtriumChild) => roomServer.connect({ url: instance.url, issuer: publicUrl, projectId: setup.boot.project_id, apiKey: setup.boot.api_key });
    // Every answer takes a while, so that deliveries are in flight (sent, not yet recorded) when the kill lands.
    roomServer.respond = () => ({ delayMs: 400 });
    let server = await spawnAtrium(setup.env);
    try {
      connect(server);
      const ids = await createTasks(roomServer, setup.boot.project_id, 60);
      await roomServer.waitFor((calls) => messages(calls).length >= 15, 150_000);
      const killedAt = Date.now();
      await server.kill('SIGKILL');
      // Received before the kill, answered after it: the instance cannot have recorded them.
      const inFlight = messages(roomServer.calls).filter((c) => c.at + 400 > killedAt).map((c) => c.json.id as string);

      server = await spawnAtrium(setup.env);
      connect(server);
      const runs = await eventually(async () => {
        const all = await Promise.all(ids.map(async (id) => (await roomServer.api('GET', `/accounts/projects/${setup.boot.project_id}/scheduled-tasks/${id}/runs`)).body.runs as any[]));
        return all.every((r) => r.length === 1 && r[0].status === 'submitted') && all.map((r) => r[0]);
      }, 120_000, 250);
      const received = messages(roomServer.calls);
      const got = new Set(received.map((c) => c.json.id));
      assert.ok(runs.every((run) => got.has(run.queued_message_id)), 'every run reached the room server');
      assert.ok(inFlight.length > 0, 'deliveries were in flight when the instance died (otherwise this test proves little)');
      for (const messageId of inFlight) {
        assert.ok(received.filter((c) => c.json.id === messageId).length >= 2, 'an unrecorded delivery is sent again, under the same message id');
        assert.ok(runs.find((r) => r.queued_message_id === messageId).attempt_count >= 2);
      }
      assert.deepEqual(roomServer.refused, []);
      process.stdout.write(`# [${engine}] ${ids.length} runs, ${inFlight.length} in flight at the kill (all sent again), ${received.length} messages received, none lost\n`);
    } finally {
      await server.kill('SIGTERM');
      await setup.cleanUp();
    }
  });
});

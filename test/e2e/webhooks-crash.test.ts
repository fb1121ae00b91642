// At-least-once delivery against real `atrium serve` processes: a server SIGKILLed in the middle of
// a burst and restarted delivers every acknowledged event; two servers on one PostgreSQL share the
// work and deliver each event once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { pgUrl, requireOrSkip } from '../support/env.ts';
import { forEachEngine, isolatedDatabase } from '../support/service.ts';
import { atriumCommand, childEnv, eventually, spawnAtrium, startReceiver, type AtriumChild, type Received } from '../support/webhooks.ts';

const PASSWORD = 'correct horse battery staple';

async function setUp(engine: 'pglite' | 'postgres', extraEnv: Record<string, string>) {
  const database = await isolatedDatabase(engine);
  const env = { ...childEnv(database), ...extraEnv };
  const boot = JSON.parse(atriumCommand(['bootstrap', '--email', `crash-${randomUUID()}@example.test`, '--password', PASSWORD, '--project', 'crash', '--json'], env)) as { project_id: string; api_key: string };
  return {
    env,
    boot,
    async cleanUp() {
      await database.drop();
    },
  };
}

const sessionIds = (all: Received[]) => all.map((r) => r.json?.data?.session_id as string);

async function createWebhook(server: AtriumChild, boot: { project_id: string; api_key: string }, url: string) {
  const response = await fetch(`${server.url}/accounts/projects/${boot.project_id}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${boot.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'e2e', url, events: ['room.started'], secret: true }),
  });
  assert.equal(response.status, 201, await response.clone().text());
}

/** Reports a session start; true when the server acknowledged it. */
async function startSession(server: AtriumChild, boot: { project_id: string; api_key: string }, id: string): Promise<boolean> {
  try {
    const response = await fetch(`${server.url}/accounts/projects/${boot.project_id}/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${boot.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ room_name: 'burst', session_id: id }),
    });
    await response.arrayBuffer();
    return response.status === 201;
  } catch {
    return false;
  }
}

forEachEngine('webhooks survive SIGKILL', (engine) => {
  test('a server killed mid-burst and restarted delivers every acknowledged event', { timeout: 110_000 }, async () => {
    // A short lease (still well above the receiver's slowest answer), so the dead server's claimed
    // jobs come back within seconds.
    const setup = await setUp(engine, { ATRIUM_JOBS_LEASE_SECONDS: '5' });
    // Each delivery takes a moment and every tenth a long one, so deliveries are in flight (sent,
    // not yet recorded) when the kill lands.
    const receiver = await startReceiver((r) => ({ delayMs: r.n % 10 === 0 ? 2000 : 20 }));
    let server = await spawnAtrium(setup.env);
    try {
      await createWebhook(server, setup.boot, `${receiver.url}/crash`);
      const acknowledged = new Set<string>();
      let stop = false;
      const fire = async () => {
        while (!stop) {
          const id = randomUUID();
          if (await startSession(server, setup.boot, id)) acknowledged.add(id);
        }
      };
      const loops = Array.from({ length: 8 }, fire);
      await receiver.waitFor((all) => all.length >= 150, 60_000);
      const killedAt = Date.now();
      await server.kill('SIGKILL');
      stop = true;
      await Promise.all(loops);
      const beforeRestart = new Set(sessionIds(receiver.received));
      const missingAtKill = [...acknowledged].filter((id) => !beforeRestart.has(id)).length;
      // Sent and received, but answered only after the kill: the server cannot have recorded them.
      const unansweredAtKill = receiver.received.filter((r) => r.n % 10 === 0 && r.at + 2000 > killedAt + 100).map((r) => r.json.data.session_id as string);

      server = await spawnAtrium(setup.env);
      for (let i = 0; i < 20; i += 1) {
        const id = randomUUID();
        assert.ok(await startSession(server, setup.boot, id), 'the restarted server takes new events');
        acknowledged.add(id);
      }
      // Every acknowledged event arrives, and so does a second copy of every delivery the server
      // sent but could not record before it died (crash between the receiver's answer and the commit).
      await receiver.waitFor((all) => {
        const ids = sessionIds(all);
        const got = new Set(ids);
        return [...acknowledged].every((id) => got.has(id)) && unansweredAtKill.every((id) => ids.filter((x) => x === id).length >= 2);
      }, 60_000);
      const received = sessionIds(receiver.received);
      const duplicates = received.length - new Set(received).size;
      assert.ok(unansweredAtKill.length > 0, 'deliveries were in flight when the server died (otherwise this test proves little)');
      // Retries of one event carry one event id.
      const idsBySession = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const set = idsBySession.get(r.json.data.session_id) ?? new Set();
        set.add(String(r.headers['service-event-id']));
        idsBySession.set(r.json.data.session_id, set);
      }
      assert.ok([...idsBySession.values()].every((s) => s.size === 1));
      process.stdout.write(`# [${engine}] acknowledged ${acknowledged.size}, undelivered at the kill ${missingAtKill}, in flight at the kill ${unansweredAtKill.length} (all sent again), received ${received.length} (duplicates ${duplicates}), none lost\n`);
    } finally {
      await server.kill('SIGTERM');
      await receiver.close();
      await setup.cleanUp();
    }
  });
});

test('two servers on one PostgreSQL share the work and deliver each event once', { timeout: 110_000 }, async (t) => {
  if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
  // Small claims, so both instances take part even at a modest rate.
  const setup = await setUp('postgres', { ATRIUM_JOBS_BATCH_SIZE: '5' });
  const receiver = await startReceiver(() => ({ delayMs: 5 }));
  const servers = [await spawnAtrium(setup.env), await spawnAtrium(setup.env)];
  try {
    await createWebhook(servers[0]!, setup.boot, `${receiver.url}/pair`);
    const ids = Array.from({ length: 400 }, () => randomUUID());
    let next = 0;
    await Promise.all(Array.from({ length: 10 }, async () => {
      while (next < ids.length) {
        const i = next++;
        assert.ok(await startSession(servers[i % 2]!, setup.boot, ids[i]!));
      }
    }));
    await receiver.waitFor((all) => new Set(sessionIds(all)).size >= ids.length, 60_000);
    const doneBy = async (s: AtriumChild) => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const match = /atrium_jobs_settled_total\{topic="webhooks\.deliver",outcome="done"\} (\d+)/.exec(text);
      return Number(match?.[1] ?? 0);
    };
    // Every delivery job is done once the instances' counts add up; then both stop (finishing
    // whatever they still run), after which nothing more can reach the receiver.
    const settled = await eventually(async () => {
      const counts = await Promise.all(servers.map(doneBy));
      return counts[0]! + counts[1]! >= ids.length && counts;
    });
    await Promise.all(servers.map((s) => s.kill('SIGTERM')));
    const received = sessionIds(receiver.received);
    assert.equal(received.length, ids.length, `each event once (got ${received.length} deliveries for ${ids.length} events)`);
    assert.equal(settled[0]! + settled[1]!, ids.length);
    assert.ok(settled[0]! > 0 && settled[1]! > 0, `both instances delivered (${settled.join(' + ')})`);
    process.stdout.write(`# two instances: ${settled.join(' + ')} deliveries, no duplicates\n`);
  } finally {
    await Promise.all(servers.map((s) => s.kill('SIGTERM')));
    await receiver.close();
    await setup.cleanUp();
  }
});

// An audit entry is written with its change: a server SIGKILLed in the middle of a burst of changes
// (room creations and deletions) leaves, after its restart, every room created exactly when its
// `room.create` entry is there, every deletion with its `room.delete` entry, and every acknowledged
// change with both.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { forEachEngine, isolatedDatabase } from '../support/service.ts';
import { atriumCommand, childEnv, spawnAtrium, type AtriumChild } from '../support/webhooks.ts';

interface Boot { project_id: string; api_key: string }
interface Entry { action: string; target: { id: string | null }; outcome: string }

async function api(server: AtriumChild, boot: Boot, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.url}/accounts/projects/${boot.project_id}${path}`, {
    method,
    headers: { authorization: `Bearer ${boot.api_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function allEntries(server: AtriumChild, boot: Boot): Promise<Entry[]> {
  const entries: Entry[] = [];
  let token: string | null = null;
  do {
    const query: string = `?page_size=1000&action=room.*${token ? `&continuation_token=${encodeURIComponent(token)}` : ''}`;
    const page = await (await api(server, boot, 'GET', `/audit-log${query}`)).json() as { entries: Entry[]; continuation_token: string | null };
    entries.push(...page.entries);
    token = page.continuation_token;
  } while (token);
  return entries;
}

forEachEngine('audit entries survive SIGKILL with their changes', (engine) => {
  test('after a kill mid-burst, each room and each deletion has its entry, and no entry lacks its change', { timeout: 110_000 }, async () => {
    const database = await isolatedDatabase(engine);
    const env = childEnv(database);
    const boot = JSON.parse(atriumCommand(['bootstrap', '--email', `audit-crash-${randomUUID()}@example.test`, '--password', 'correct horse battery staple', '--project', 'crash', '--json'], env)) as Boot;
    let server = await spawnAtrium(env);
    try {
      const created = new Map<string, string>();
      const deleted = new Set<string>();
      let stop = false;
      let answered = 0;
      const fire = async () => {
        while (!stop) {
          try {
            const r = await api(server, boot, 'POST', '/rooms', { name: `crash-${randomUUID()}` });
            if (r.status !== 201) continue;
            const room = await r.json() as { id: string; name: string };
            created.set(room.id, room.name);
            answered += 1;
            // Every other room is deleted again, so deletions are in flight too.
            if (answered % 2 === 0 && (await api(server, boot, 'DELETE', `/rooms/${room.id}`)).status === 200) deleted.add(room.id);
          } catch {
            // the server is gone
          }
        }
      };
      const loops = Array.from({ length: 8 }, fire);
      const until = Date.now() + 60_000;
      while (answered < 150 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      await server.kill('SIGKILL');
      stop = true;
      await Promise.all(loops);
      server = await spawnAtrium(env);

      const entries = await allEntries(server, boot);
      const rooms = await (await api(server, boot, 'GET', '/rooms?limit=1000')).json() as { rooms: { id: string }[]; total: number };
      assert.ok(rooms.total < 1000, 'one page holds every room');
      const standing = new Set(rooms.rooms.map((room) => room.id));
      const createdIds = entries.filter((e) => e.action === 'room.create' && e.outcome === 'succeeded').map((e) => e.target.id!);
      const deletedIds = entries.filter((e) => e.action === 'room.delete' && e.outcome === 'succeeded').map((e) => e.target.id!);
      assert.equal(new Set(createdIds).size, createdIds.length, 'one entry per creation');
      assert.equal(new Set(deletedIds).size, deletedIds.length, 'one entry per deletion');
      // A room exists exactly when it was created and not deleted, by the log.
      const byLog = new Set(createdIds.filter((id) => !deletedIds.includes(id)));
      assert.deepEqual([...standing].sort(), [...byLog].sort());
      assert.ok(deletedIds.every((id) => createdIds.includes(id)));
      // What the server acknowledged is in the log.
      assert.deepEqual([...created.keys()].filter((id) => !createdIds.includes(id)), []);
      assert.deepEqual([...deleted].filter((id) => !deletedIds.includes(id)), []);
      process.stdout.write(`# [${engine}] acknowledged ${created.size} creations and ${deleted.size} deletions; after the kill the log holds ${createdIds.length} and ${deletedIds.length}, ${standing.size} rooms stand\n`);
    } finally {
      await server.kill('SIGTERM');
      await database.drop();
    }
  });
});

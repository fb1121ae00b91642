// Exactly-once delivery of feed messages into room storage against real `atrium serve` processes: a
// server SIGKILLed while its subscriptions are writing files, then restarted, leaves every accepted
// message exactly once in each subscription's files, and announces each file once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { watch } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { openDatabase } from '../../src/platform/db/engine.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { forEachEngine, isolatedDatabase } from '../support/service.ts';
import { atriumCommand, childEnv, eventually, spawnAtrium, startReceiver, type AtriumChild } from '../support/webhooks.ts';

const SUBSCRIPTIONS = 6;

forEachEngine('feed delivery survives SIGKILL', (engine) => {
  test('a server killed while writing files and restarted leaves every accepted message exactly once per subscription', { timeout: 240_000 }, async () => {
    const database = await isolatedDatabase(engine);
    const { dataDir } = database;
    // Small files, often, and a short lease so the dead server's flushes come back within seconds.
    const env = { ...childEnv(database), ATRIUM_FEEDS_FLUSH_SECONDS: '1', ATRIUM_FEEDS_FLUSH_MESSAGES: '20', ATRIUM_JOBS_LEASE_SECONDS: '3' };
    const boot = JSON.parse(atriumCommand(['bootstrap', '--email', `feeds-crash-${randomUUID()}@example.test`, '--password', 'correct horse battery staple', '--project', 'crash', '--json'], env)) as { project_id: string; api_key: string };
    const receiver = await startReceiver();
    const watcher = engine === 'postgres' ? postgres(database.env.DATABASE_URL!, { max: 1, onnotice: () => {} }) : undefined;
    let server: AtriumChild = await spawnAtrium(env);
    const api = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${boot.api_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? null : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
    };
    const project = `/accounts/projects/${boot.project_id}`;
    try {
      await api('POST', `${project}/rooms`, { name: 'crash-room' });
      const feed = (await api('POST', `${project}/feeds`, { name: 'crash', visibility: 'project' })).body.feed as { id: string };
      for (let i = 0; i < SUBSCRIPTIONS; i += 1) {
        assert.equal((await api('POST', `${project}/feeds/${feed.id}/subscriptions`, { room: 'crash-room', path: `sub-${i}` })).status, 201);
      }
      assert.equal((await api('POST', `${project}/webhooks`, { name: 'files', url: `${receiver.url}/files`, events: ['storage.file.updated'] })).status, 201);

      const acknowledged = new Set<string>();
      const unanswered = new Set<string>();
      const publish = async (keys: string[]) => {
        try {
          const r = await api('POST', `${project}/feeds/${feed.id}/messages/batch`, keys.map((k) => ({ k })));
          if (r.status === 201) for (const k of keys) acknowledged.add(k);
          else for (const k of keys) unanswered.add(k);
        } catch {
          for (const k of keys) unanswered.add(k);
        }
      };
      // A steady stream (two publishers, 5 messages every 100 ms each), so files are being written
      // all the time; then the server is killed in the middle of it. A kill that happens to land
      // between two writes proves little, so the server is restarted and killed again (at most five
      // times) until one lands while batches are reserved but not acknowledged.
      let left = 0;
      for (let attempt = 1; attempt <= 5 && left === 0; attempt += 1) {
        if (attempt > 1) server = await spawnAtrium(env);
        let stop = false;
        const loops = Array.from({ length: 2 }, async () => {
          while (!stop) {
            await publish(Array.from({ length: 5 }, () => randomUUID()));
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        });
        const announced = receiver.received.length;
        await receiver.waitFor((all) => all.length >= announced + 30, 60_000);
        // Kill at once when a batch is in flight. On PostgreSQL the test sees the reservation itself;
        // PGlite belongs to the server process, so there the sign is a file being written (the blob
        // store writes into .tmp before renaming, and a batch is acknowledged only after that).
        if (watcher) await eventually(async () => (await watcher`select 1 from feed_subscriptions where pending_to_seq is not null limit 1`).length > 0, 30_000, 2).catch(() => undefined);
        else await fileBeingWritten(join(dataDir, 'blobs', '.tmp'), 30_000);
        await server.kill('SIGKILL');
        stop = true;
        await Promise.all(loops);

        // What the dead server left: batches reserved but not acknowledged (some already written).
        const inspect = await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir, poolSize: 1 });
        [{ pending: left }] = rowsOf<{ pending: number }>(await inspect.db.execute(sql`select count(*)::int as pending from feed_subscriptions where pending_to_seq is not null`));
        await inspect.close();
      }

      server = await spawnAtrium(env);
      await publish(Array.from({ length: 5 }, () => randomUUID()));

      // The room's files as a room server reads them: in the blob store, under the project's storage.
      const roomFolder = join(dataDir, 'blobs', 'projects', boot.project_id, 'rooms', 'crash-room');
      const filesOf = (i: number) => readdir(join(roomFolder, `sub-${i}`), { recursive: true, withFileTypes: true })
        .then((entries) => entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort(), () => [] as string[]);
      const linesOf = async (i: number) => {
        const keys: string[] = [];
        for (const file of await filesOf(i)) keys.push(...(await readFile(file, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line).k as string));
        return keys;
      };
      const deadline = Date.now() + 60_000;
      let perSubscription: string[][] = [];
      for (;;) {
        perSubscription = await Promise.all(Array.from({ length: SUBSCRIPTIONS }, (_v, i) => linesOf(i)));
        if (perSubscription.every((keys) => [...acknowledged].every((k) => keys.includes(k)))) break;
        if (Date.now() >= deadline) {
          // What a failure needs to be understood: how far each subscription got, and its flush jobs.
          const missing = perSubscription.map((keys) => [...acknowledged].filter((k) => !keys.includes(k)).length);
          const state = watcher ? JSON.stringify({
            subscriptions: await watcher`select s.path, s.delivered_seq, s.pending_to_seq, s.flush_due_at, f.last_seq, f.paused from feed_subscriptions s join feeds f on f.id = s.feed_id order by s.path`,
            jobs: await watcher`select topic, status, payload, attempts, run_at, last_error from jobs where topic like 'feeds.%' order by run_at`,
            now: await watcher`select now()`,
          }) : '(PGlite: the server holds the database)';
          assert.fail(`every acknowledged message reaches every subscription within a minute; missing per subscription: ${missing.join(', ')} of ${acknowledged.size}; ${state}; the server printed: ${server.output()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      for (const [i, keys] of perSubscription.entries()) {
        assert.equal(new Set(keys).size, keys.length, `subscription ${i}: no message twice`);
        assert.ok(keys.every((k) => acknowledged.has(k) || unanswered.has(k)), `subscription ${i}: nothing that was never sent`);
        assert.deepEqual(keys, perSubscription[0], `subscription ${i}: the same messages in the same order as the others`);
      }
      // Each file announced by exactly one event (deliveries may repeat; the event id does not).
      const files = new Set((await Promise.all(Array.from({ length: SUBSCRIPTIONS }, (_v, i) => filesOf(i)))).flat().map((file) => `rooms/crash-room/${relative(roomFolder, file)}`));
      await receiver.waitFor((all) => files.size <= new Set(all.map((r) => r.json.data.path)).size, 30_000);
      const eventsByPath = new Map<string, Set<string>>();
      for (const r of receiver.received) eventsByPath.set(r.json.data.path, (eventsByPath.get(r.json.data.path) ?? new Set()).add(String(r.headers['service-event-id'])));
      assert.deepEqual([...eventsByPath.keys()].sort(), [...files].sort());
      assert.ok([...eventsByPath.values()].every((ids) => ids.size === 1), 'one event per file');
      assert.ok(left > 0, 'batches were being written when the server died in one of five kills (otherwise this test proves little)');
      process.stdout.write(`# [${engine}] accepted ${acknowledged.size}, unanswered at the kill ${unanswered.size}, batches in flight at the kill ${left}, ${files.size} files, each message once per subscription\n`);
    } finally {
      await watcher?.end({ timeout: 5 });
      await server.kill('SIGTERM');
      await receiver.close();
      await database.drop();
    }
  });
});

/** Resolves when a file appears in `folder` (or after `ms`, so a quiet server cannot hang the test). */
async function fileBeingWritten(folder: string, ms: number): Promise<void> {
  await mkdir(folder, { recursive: true });
  const watcher = watch(folder);
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      watcher.once('change', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  } finally {
    watcher.close();
  }
}

// Project and room secrets over HTTP on both engines: values encrypted at rest, returned only by GET
// of one secret, never in a list, an error message or a log line (the service's whole log output is
// captured at trace level and searched); room secrets keyed by identity; size limit; bad input.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

/** Values that must never show anywhere but in GET of one secret. */
const MARKER = 'TOPSECRET-4f2c9e';
const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

forEachEngine('secrets', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  const logged: string[] = [];
  before(async () => {
    const sink = new Writable({ write(chunk, _encoding, done) { logged.push(String(chunk)); done(); } });
    service = await startTestService(engine, { ATRIUM_LOG_LEVEL: 'trace' }, { log: pino({ level: 'trace' }, sink) as unknown as FastifyBaseLogger });
    tenant = await createTenant(service, 'secrets');
  });
  after(() => service?.stop());

  const project = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}`;
  const newRoom = async (t: Tenant = tenant) => (await call(service, 'POST', `${project(t)}/rooms`, { token: t.apiKey, json: { name: `room-${Math.random().toString(36).slice(2, 8)}` } })).body as { id: string; name: string };
  const query = async (text: string) => [...rowsOf<Record<string, unknown>>(await service.ctx.db.execute(sql.raw(text)))];
  const secretRows = async () => Number((await query('select count(*) as n from secrets'))[0]!.n);
  /** Every answer but GET of one secret must be free of the marker. */
  const clean = (r: { body: unknown }, what: string) => {
    const text = JSON.stringify(r.body);
    assert.ok(!text.includes(MARKER) && !text.includes(b64(MARKER).slice(0, 12)), `${what} shows the value: ${text.slice(0, 200)}`);
  };

  test('project secrets: the value only in GET of one; lists, updates and errors never show it', async () => {
    const t = await createTenant(service, 'secret-crud');
    const created = await call(service, 'POST', `${project(t)}/secrets`, { token: t.apiKey, json: { name: 'registry', type: 'docker', data_base64: b64(`{"password":"${MARKER}"}`) } });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), ['delegated_to', 'for_identity', 'id', 'name', 'type']);
    clean(created, 'create');
    const id = created.body.id;

    const got = await call(service, 'GET', `${project(t)}/secrets/${id}`, { token: t.apiKey });
    assert.deepEqual(got.body, { id, name: 'registry', type: 'docker', delegated_to: null, for_identity: null, data_base64: b64(`{"password":"${MARKER}"}`) });
    const listed = await call(service, 'GET', `${project(t)}/secrets`, { token: t.apiKey });
    assert.deepEqual(listed.body, { secrets: [{ id, name: 'registry', type: 'docker', delegated_to: null, for_identity: null }], total: 1 });

    const updated = await call(service, 'PUT', `${project(t)}/secrets/${id}`, { token: t.apiKey, json: { name: 'registry-2', type: 'docker', data_base64: b64(`${MARKER}-2`) } });
    assert.equal(updated.status, 200);
    clean(updated, 'update');
    assert.equal((await call(service, 'GET', `${project(t)}/secrets/${id}`, { token: t.apiKey })).body.data_base64, b64(`${MARKER}-2`));

    const stored = JSON.stringify(await query(`select * from secrets where id = '${id}'`));
    assert.ok(!stored.includes(MARKER) && !stored.includes(b64(`${MARKER}-2`)), 'encrypted at rest');

    const dup = await call(service, 'POST', `${project(t)}/secrets`, { token: t.apiKey, json: { name: 'registry-2', type: 'keys', data_base64: b64(MARKER) } });
    assert.equal(dup.status, 409);
    clean(dup, 'a duplicate');
    const other = await call(service, 'POST', `${project(t)}/secrets`, { token: t.apiKey, json: { name: 'other', type: 'keys', data_base64: b64('x') } });
    const clash = await call(service, 'PUT', `${project(t)}/secrets/${other.body.id}`, { token: t.apiKey, json: { name: 'registry-2', type: 'keys', data_base64: b64(MARKER) } });
    assert.equal(clash.status, 409);
    clean(clash, 'a rename onto a taken name');

    assert.deepEqual((await call(service, 'DELETE', `${project(t)}/secrets/${id}`, { token: t.apiKey })).body, { ok: true });
    assert.equal((await call(service, 'GET', `${project(t)}/secrets/${id}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${project(t)}/secrets/${id}`, { token: t.apiKey, json: { name: 'x', type: 'keys', data_base64: b64(MARKER) } })).status, 404);
    assert.equal((await call(service, 'DELETE', `${project(t)}/secrets/${id}`, { token: t.apiKey })).status, 404);
  });

  test('room secrets: one id may hold a value per identity; reads, lists and deletes pick by identity', async () => {
    const room = await newRoom();
    const base = `${project()}/rooms/${room.name}/secrets`;
    const wholeRoom = await call(service, 'POST', base, { token: tenant.apiKey, json: { data_base64: b64('room-wide'), name: 'shared' } });
    assert.equal(wholeRoom.status, 201);
    assert.equal(wholeRoom.body.type, 'opaque');
    const id = wholeRoom.body.id;
    const forAlice = await call(service, 'POST', base, { token: tenant.apiKey, json: { secret_id: id, for_identity: 'alice', data_base64: b64('alice-value'), name: 'shared' } });
    assert.equal(forAlice.status, 201);
    assert.equal(forAlice.body.id, id);
    assert.equal(forAlice.body.for_identity, 'alice');
    const delegated = await call(service, 'POST', base, { token: tenant.apiKey, json: { secret_id: id, for_identity: 'alice', delegated_to: 'bot', data_base64: b64('for-bot') } });
    assert.equal(delegated.status, 201);
    assert.equal(delegated.body.name, id, 'the name defaults to the id');

    assert.equal((await call(service, 'GET', `${base}/${id}`, { token: tenant.apiKey })).body.data_base64, b64('room-wide'));
    assert.equal((await call(service, 'GET', `${base}/${id}?for_identity=alice`, { token: tenant.apiKey })).body.data_base64, b64('alice-value'));
    assert.equal((await call(service, 'GET', `${base}/${id}?for_identity=alice&delegated_to=bot`, { token: tenant.apiKey })).body.data_base64, b64('for-bot'));
    assert.equal((await call(service, 'GET', `${base}/${id}?for_identity=bob`, { token: tenant.apiKey })).status, 404);

    assert.equal((await call(service, 'GET', base, { token: tenant.apiKey })).body.total, 3);
    const alices = await call(service, 'GET', `${base}?for_identity=alice`, { token: tenant.apiKey });
    assert.deepEqual(alices.body.secrets.map((s: { delegated_to: string | null }) => s.delegated_to).sort(), ['bot', null]);
    assert.ok(alices.body.secrets.every((s: object) => !('data_base64' in s)));
    assert.equal((await call(service, 'GET', `${base}?for_identity=`, { token: tenant.apiKey })).body.total, 1, 'an empty identity lists the room-wide ones');

    // The key is (id, for_identity, delegated_to); names are unique per identity.
    assert.equal((await call(service, 'POST', base, { token: tenant.apiKey, json: { secret_id: id, for_identity: 'alice', data_base64: b64('again') } })).status, 409);
    assert.equal((await call(service, 'POST', base, { token: tenant.apiKey, json: { for_identity: 'alice', name: 'shared', data_base64: b64('x') } })).status, 409);

    const replaced = await call(service, 'PUT', `${base}/${id}`, { token: tenant.apiKey, json: { for_identity: 'alice', data_base64: b64('alice-2'), type: 'keys' } });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.name, 'shared', 'the name is kept when left out');
    assert.equal(replaced.body.type, 'keys');
    assert.equal((await call(service, 'GET', `${base}/${id}?for_identity=alice`, { token: tenant.apiKey })).body.data_base64, b64('alice-2'));
    assert.equal((await call(service, 'GET', `${base}/${id}`, { token: tenant.apiKey })).body.data_base64, b64('room-wide'), 'other identities keep their value');
    assert.equal((await call(service, 'PUT', `${base}/${id}`, { token: tenant.apiKey, json: { for_identity: 'carol', data_base64: b64('x') } })).status, 404);

    assert.equal((await call(service, 'DELETE', `${base}/${id}?for_identity=alice&delegated_to=bot`, { token: tenant.apiKey })).status, 200);
    assert.equal((await call(service, 'GET', base, { token: tenant.apiKey })).body.total, 2);
    assert.equal((await call(service, 'DELETE', `${base}/${id}?for_identity=alice&delegated_to=bot`, { token: tenant.apiKey })).status, 404);

    // Project and room secrets are separate: neither path reaches the other's.
    const projectSecret = await call(service, 'POST', `${project()}/secrets`, { token: tenant.apiKey, json: { name: `p-${room.name}`, type: 'keys', data_base64: b64('p') } });
    assert.equal((await call(service, 'GET', `${base}/${projectSecret.body.id}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'GET', `${project()}/secrets/${id}`, { token: tenant.apiKey })).status, 404);

    // Deleting the room deletes its secrets.
    await call(service, 'DELETE', `${project()}/rooms/${room.id}`, { token: tenant.apiKey });
    assert.deepEqual(await query(`select id from secrets where room_id = '${room.id}'`), []);
  });

  test('size limit, bad base64, wrong types and other rooms: 4xx without the value, nothing written', async () => {
    const room = await newRoom();
    const other = await createTenant(service, 'secret-other');
    const theirRoom = await newRoom(other);
    const exact = await call(service, 'POST', `${project()}/secrets`, { token: tenant.apiKey, json: { name: 'exactly-64k', type: 'opaque', data_base64: b64(Buffer.alloc(64 * 1024, 7)) } });
    assert.equal(exact.status, 201);
    const before = await secretRows();
    const cases: [string, unknown, number, RegExp][] = [
      [`${project()}/secrets`, { name: 'big', type: 'opaque', data_base64: b64(Buffer.alloc(64 * 1024 + 1, 7)) }, 413, /at most 65536 bytes/],
      [`${project()}/rooms/${room.name}/secrets`, { data_base64: b64(Buffer.alloc(200_000, 7)) }, 413, /at most/],
      [`${project()}/secrets`, { name: 'x', type: 'keys', data_base64: `${MARKER}!` }, 400, /data_base64 must be base64/],
      [`${project()}/secrets`, { name: 'x', type: 'keys', data_base64: `${b64(MARKER)}A` }, 400, /data_base64 must be base64/],
      [`${project()}/secrets`, { name: 'x', type: 'keys', data_base64: 42 }, 400, /data_base64/],
      [`${project()}/secrets`, { name: 'x', data_base64: b64(MARKER) }, 400, /body\.type is required/],
      [`${project()}/secrets`, { name: 'x', type: 'has space', data_base64: b64(MARKER) }, 400, /body\.type/],
      [`${project()}/secrets`, { name: 'a/b', type: 'keys', data_base64: b64(MARKER) }, 400, /body\.name/],
      [`${project()}/secrets`, `{"name":"x","type":"keys","data_base64":"${b64(MARKER)}"`, 400, /JSON/],
      [`${project()}/rooms/${room.name}/secrets`, { secret_id: 'bad/id', data_base64: b64(MARKER) }, 400, /secret_id/],
      [`${project()}/rooms/${room.name}/secrets`, { for_identity: 'tab\there', data_base64: b64(MARKER) }, 400, /for_identity/],
      [`${project()}/rooms/${room.name}/secrets`, { data_base64: b64(MARKER), for_identity: 'x'.repeat(201) }, 400, /for_identity/],
      [`${project()}/rooms/no-such-room/secrets`, { data_base64: b64(MARKER) }, 404, /Room not found/],
      [`${project()}/rooms/${theirRoom.name}/secrets`, { data_base64: b64(MARKER) }, 404, /Room not found/],
    ];
    for (const [path, json, status, message] of cases) {
      const r = await call(service, 'POST', path, { token: tenant.apiKey, json });
      assert.equal(r.status, status, `${path} ${JSON.stringify(json).slice(0, 100)} → ${JSON.stringify(r.body).slice(0, 200)}`);
      assert.match(r.body.error.message, message);
      clean(r, `refusing ${JSON.stringify(json).slice(0, 60)}`);
    }
    assert.equal(await secretRows(), before, 'nothing was written');
    assert.equal((await call(service, 'GET', `${project(other)}/rooms/${theirRoom.name}/secrets`, { token: tenant.apiKey })).status, 404);
  });

  test('roles: secret inventory reads values, creators create, managers change; members and room servers get nothing here', async () => {
    const t = await createTenant(service, 'secret-roles');
    const made = await call(service, 'POST', `${project(t)}/secrets`, { token: t.apiKey, json: { name: 'roles', type: 'keys', data_base64: b64(MARKER) } });
    const key = async (roles: string[]) => (await call(service, 'POST', `${project(t)}/api-keys`, { token: t.apiKey, json: { name: roles.join('+'), roles } })).body.value as string;
    const [inventory, creator, manager, roomServer] = [await key(['secret_inventory']), await key(['secret_creator']), await key(['secret_manager']), await key(['room_server'])];
    const member = await createUserWithToken(service, 'secret-member');
    await call(service, 'POST', `${project(t)}/users`, { token: t.apiKey, json: { user_id: member.userId } });
    assert.equal((await call(service, 'GET', `${project(t)}/secrets/${made.body.id}`, { token: inventory })).status, 200);
    assert.equal((await call(service, 'POST', `${project(t)}/secrets`, { token: inventory, json: { name: 'no', type: 'keys', data_base64: b64('x') } })).status, 403);
    assert.equal((await call(service, 'POST', `${project(t)}/secrets`, { token: creator, json: { name: 'yes', type: 'keys', data_base64: b64('x') } })).status, 201);
    assert.equal((await call(service, 'GET', `${project(t)}/secrets`, { token: creator })).status, 403);
    assert.equal((await call(service, 'PUT', `${project(t)}/secrets/${made.body.id}`, { token: manager, json: { name: 'roles', type: 'keys', data_base64: b64('y') } })).status, 200);
    for (const token of [member.token, roomServer]) {
      assert.equal((await call(service, 'GET', `${project(t)}/secrets`, { token })).status, 403);
      assert.equal((await call(service, 'GET', `${project(t)}/secrets/${made.body.id}`, { token })).status, 403);
    }
  });

  test('no log line ever holds a secret value', () => {
    const text = logged.join('');
    assert.ok(logged.length > 0, `the service logged something to search (${logged.length} lines)`);
    for (const needle of [MARKER, b64(MARKER), b64(`{"password":"${MARKER}"}`), b64(`${MARKER}-2`)]) {
      assert.ok(!text.includes(needle), `the log holds ${needle}`);
    }
  });
});

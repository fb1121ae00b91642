// A change of one statement that writes its request's audit entry itself (`AuditLog.change`, the
// routes declaring `audit: 'statement'`): the entry and its event are written by the change's own
// statement when the change happens, not when it does not; without a pending entry the change runs
// alone; a second change under one entry is refused. Through the API: a room's create leaves one
// entry naming the new room, and `if_not_exists` on a taken name one entry naming the existing room.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { roomFromJson, roomInsert } from '../../src/modules/rooms/store.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('audited changes of one statement', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'audit-change');
  });
  after(() => service?.stop());

  const entriesOf = async (targetId: string) => [...rowsOf<{ action: string; outcome: string; actor_type: string; request_id: string | null }>(
    await service.ctx.db.execute(sql`select action, outcome, actor_type, request_id from audit_log where target_id = ${targetId} order by seq`))];
  const room = (name: string) => ({ id: randomUUID(), projectId: tenant.projectId, name, metadata: {}, annotations: {}, permissions: {} });
  const entry = (requestId: string) => (targetId: string | undefined) => ({
    projectId: tenant.projectId, actor: { type: 'operator' as const, name: 'test' }, action: 'room.create',
    target: { type: 'room', id: targetId }, outcome: 'succeeded' as const, origin: { requestId },
  });

  test('the entry is written by the change\'s statement when the change happens, and only then', async () => {
    const { audit, db } = service.ctx;
    const made = room('made-with-entry');
    const first = await audit.pending(entry('first'), async () => roomFromJson((await audit.change(db, roomInsert(made), made.id)).room));
    assert.equal(first.written, true);
    assert.equal(first.value?.id, made.id);
    assert.deepEqual((await entriesOf(made.id)).map((e) => e.request_id), ['first']);

    // The name is taken: nothing changed, nothing written; the caller is told so.
    const clash = room('made-with-entry');
    const second = await audit.pending(entry('second'), async () => roomFromJson((await audit.change(db, roomInsert(clash), clash.id)).room));
    assert.deepEqual(second, { value: undefined, written: false });
    assert.deepEqual(await entriesOf(clash.id), []);
  });

  test('without a pending entry the change runs alone; a second change under one entry is refused', async () => {
    const { audit, db } = service.ctx;
    const alone = room('made-alone');
    assert.equal(roomFromJson((await audit.change(db, roomInsert(alone), alone.id)).room)?.id, alone.id);
    assert.deepEqual(await entriesOf(alone.id), []);

    const one = room('one-of-two');
    const two = room('two-of-two');
    await assert.rejects(audit.pending(entry('twice'), async () => {
      await audit.change(db, roomInsert(one), one.id);
      await audit.change(db, roomInsert(two), two.id);
    }), /second change/);
    assert.equal((await entriesOf(one.id)).length, 1);
    assert.equal(rowsOf(await db.execute(sql`select 1 from rooms where id = ${two.id}`)).length, 0);
  });

  test('through the API: a create names the new room, if_not_exists the existing one', async () => {
    const rooms = `/accounts/projects/${tenant.projectId}/rooms`;
    const created = await call(service, 'POST', rooms, { token: tenant.apiKey, json: { name: 'via-the-api' } });
    assert.equal(created.status, 201);
    const again = await call(service, 'POST', rooms, { token: tenant.apiKey, json: { name: 'via-the-api', if_not_exists: true } });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, created.body.id);
    const clash = await call(service, 'POST', rooms, { token: tenant.apiKey, json: { name: 'via-the-api' } });
    assert.equal(clash.status, 409);
    const entries = await entriesOf(created.body.id);
    assert.deepEqual(entries.map((e) => [e.action, e.outcome, e.actor_type]), [['room.create', 'succeeded', 'api_key'], ['room.create', 'succeeded', 'api_key']]);
    assert.deepEqual(entries.map((e) => e.request_id), [created.headers.get('x-request-id'), again.headers.get('x-request-id')]);
  });
});

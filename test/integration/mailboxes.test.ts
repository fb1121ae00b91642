// Mailboxes over HTTP on both engines: addresses under the operator's mail domains, unique across the
// deployment, rooms that must exist, count/offset/filter lists, bad input.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { call, createTenant, forEachEngine, startTestService, TEST_MAIL_DOMAIN, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('mailboxes', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine, { ATRIUM_MAIL_DOMAINS: `${TEST_MAIL_DOMAIN},second.example.test` });
    tenant = await createTenant(service, 'mailboxes');
  });
  after(() => service?.stop());

  const project = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}`;
  const unique = () => Math.random().toString(36).slice(2, 8);
  const newRoom = async (t: Tenant = tenant) => (await call(service, 'POST', `${project(t)}/rooms`, { token: t.apiKey, json: { name: `room-${unique()}` } })).body as { id: string; name: string };
  const address = (local = `box-${unique()}`, domain = TEST_MAIL_DOMAIN) => `${local}@${domain}`;
  const rows = async () => Number([...rowsOf<{ n: unknown }>(await service.ctx.db.execute(sql`select count(*) as n from mailboxes`))][0]!.n);

  test('create, get, list, replace, delete; addresses compare case-insensitively', async () => {
    const t = await createTenant(service, 'mailbox-crud');
    const [lobby, desk] = [await newRoom(t), await newRoom(t)];
    const created = await call(service, 'POST', `${project(t)}/mailboxes`, { token: t.apiKey, json: { address: `Support@${TEST_MAIL_DOMAIN.toUpperCase()}`, room: lobby.name, queue: 'inbox' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const support = `support@${TEST_MAIL_DOMAIN}`;
    assert.deepEqual(created.body, { mailbox: { address: support, room: lobby.name, room_id: lobby.id, queue: 'inbox', public: false, annotations: {} } });

    assert.deepEqual((await call(service, 'GET', `${project(t)}/mailboxes/${support}`, { token: t.apiKey })).body, created.body);
    assert.deepEqual((await call(service, 'GET', `${project(t)}/mailboxes/SUPPORT@${TEST_MAIL_DOMAIN}`, { token: t.apiKey })).body, created.body);
    await call(service, 'POST', `${project(t)}/mailboxes`, { token: t.apiKey, json: { address: address('sales', 'second.example.test'), room: desk.name, queue: 'leads', public: true, annotations: { team: 'b' } } });

    const listed = await call(service, 'GET', `${project(t)}/mailboxes`, { token: t.apiKey });
    assert.equal(listed.body.total, 2);
    assert.deepEqual(listed.body.mailboxes.map((m: { address: string }) => m.address), ['sales@second.example.test', support]);
    assert.deepEqual((await call(service, 'GET', `${project(t)}/mailboxes?count=1&offset=1`, { token: t.apiKey })).body, { mailboxes: [listed.body.mailboxes[1]], total: 2 });
    assert.deepEqual((await call(service, 'GET', `${project(t)}/mailboxes?filter=SALES`, { token: t.apiKey })).body.mailboxes.map((m: { address: string }) => m.address), ['sales@second.example.test']);
    assert.deepEqual((await call(service, 'GET', `${project(t)}/rooms/${lobby.name}/mailboxes`, { token: t.apiKey })).body.mailboxes.map((m: { address: string }) => m.address), [support]);

    const moved = await call(service, 'PUT', `${project(t)}/mailboxes/${support}`, { token: t.apiKey, json: { room: desk.name, queue: 'tickets', public: true, annotations: { tier: '1' } } });
    assert.deepEqual(moved.body, { mailbox: { address: support, room: desk.name, room_id: desk.id, queue: 'tickets', public: true, annotations: { tier: '1' } } });
    assert.equal((await call(service, 'GET', `${project(t)}/rooms/${lobby.name}/mailboxes`, { token: t.apiKey })).body.total, 0);

    // A renamed room keeps its mailboxes; a deleted one takes them along.
    await call(service, 'PUT', `${project(t)}/rooms/${desk.id}`, { token: t.apiKey, json: { name: `${desk.name}-2` } });
    assert.equal((await call(service, 'GET', `${project(t)}/mailboxes/${support}`, { token: t.apiKey })).body.mailbox.room, `${desk.name}-2`);

    assert.deepEqual((await call(service, 'DELETE', `${project(t)}/mailboxes/${support}`, { token: t.apiKey })).body, { ok: true });
    assert.equal((await call(service, 'GET', `${project(t)}/mailboxes/${support}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'DELETE', `${project(t)}/mailboxes/${support}`, { token: t.apiKey })).status, 404);
    await call(service, 'DELETE', `${project(t)}/rooms/${desk.id}`, { token: t.apiKey });
    assert.equal((await call(service, 'GET', `${project(t)}/mailboxes`, { token: t.apiKey })).body.total, 0);
  });

  test('an address belongs to one project of the deployment; the room must exist in the project', async () => {
    const other = await createTenant(service, 'mailbox-other');
    const [ours, theirs] = [await newRoom(), await newRoom(other)];
    const shared = address();
    assert.equal((await call(service, 'POST', `${project(other)}/mailboxes`, { token: other.apiKey, json: { address: shared, room: theirs.name, queue: 'q' } })).status, 201);
    const taken = await call(service, 'POST', `${project()}/mailboxes`, { token: tenant.apiKey, json: { address: shared.toUpperCase(), room: ours.name, queue: 'q' } });
    assert.equal(taken.status, 409);
    assert.ok(!taken.body.error.message.includes(other.projectId));
    assert.equal((await call(service, 'GET', `${project()}/mailboxes/${shared}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${project()}/mailboxes/${shared}`, { token: tenant.apiKey, json: { room: ours.name, queue: 'q' } })).status, 404);
    assert.equal((await call(service, 'DELETE', `${project()}/mailboxes/${shared}`, { token: tenant.apiKey })).status, 404);
    const theirRoom = await call(service, 'POST', `${project()}/mailboxes`, { token: tenant.apiKey, json: { address: address(), room: theirs.name, queue: 'q' } });
    assert.equal(theirRoom.status, 400, "another project's room, named in the body, is not one of ours");
    assert.match(theirRoom.body.error.message, /body\.room: the project has no room named/);
    assert.equal((await call(service, 'GET', `${project()}/rooms/${theirs.name}/mailboxes`, { token: tenant.apiKey })).status, 404);

    const racing = address();
    const claims = await Promise.all([[tenant, ours], [other, theirs], [tenant, ours]].map(([t, room]) =>
      call(service, 'POST', `${project(t as Tenant)}/mailboxes`, { token: (t as Tenant).apiKey, json: { address: racing, room: (room as { name: string }).name, queue: 'q' } })));
    assert.deepEqual(claims.map((c) => c.status).sort(), [201, 409, 409]);
  });

  test('addresses outside the allowed domains, bad fields and bodies are 4xx naming the problem, and write nothing', async () => {
    const room = await newRoom();
    const before = await rows();
    const cases: [unknown, number, RegExp][] = [
      [{ address: 'x@elsewhere.example.com', room: room.name, queue: 'q' }, 400, /mail domain this deployment allows: mail\.example\.test, second\.example\.test/],
      [{ address: `x@sub.${TEST_MAIL_DOMAIN}`, room: room.name, queue: 'q' }, 400, /mail domain/],
      [{ address: 'no-at-sign', room: room.name, queue: 'q' }, 400, /body\.address/],
      [{ address: `a@b@${TEST_MAIL_DOMAIN}`, room: room.name, queue: 'q' }, 400, /body\.address/],
      [{ address: `a/b@${TEST_MAIL_DOMAIN}`, room: room.name, queue: 'q' }, 400, /body\.address/],
      [{ address: `.a@${TEST_MAIL_DOMAIN}`, room: room.name, queue: 'q' }, 400, /body\.address/],
      [{ address: `${'a'.repeat(65)}@${TEST_MAIL_DOMAIN}`, room: room.name, queue: 'q' }, 400, /body\.address/],
      [{ address: address(), room: room.name }, 400, /body\.queue is required/],
      [{ address: address(), room: room.name, queue: '' }, 400, /body\.queue/],
      [{ address: address(), room: room.name, queue: 'q', public: 'yes' }, 400, /body\.public/],
      [{ address: address(), room: room.name, queue: 'q', annotations: { a: 1 } }, 400, /body\.annotations/],
      [{ address: address(), room: room.name, queue: 'q', colour: 'red' }, 400, /unknown property "colour"/],
      [{ address: address(), room: 'no-such-room', queue: 'q' }, 400, /body\.room: the project has no room named "no-such-room"/],
      ['{"address":', 400, /JSON/],
    ];
    for (const [json, status, message] of cases) {
      const r = await call(service, 'POST', `${project()}/mailboxes`, { token: tenant.apiKey, json });
      assert.equal(r.status, status, `${JSON.stringify(json).slice(0, 120)} → ${JSON.stringify(r.body).slice(0, 200)}`);
      assert.match(r.body.error.message, message, JSON.stringify(json).slice(0, 120));
    }
    assert.equal(await rows(), before, 'nothing was written');
  });

  test('without ATRIUM_MAIL_DOMAINS no mailbox can be created, and the answer says why', async () => {
    const bare = await startTestService(engine, { ATRIUM_MAIL_DOMAINS: '' });
    try {
      const t = await createTenant(bare, 'no-mail');
      const room = (await call(bare, 'POST', `/accounts/projects/${t.projectId}/rooms`, { token: t.apiKey, json: { name: 'r' } })).body;
      const r = await call(bare, 'POST', `/accounts/projects/${t.projectId}/mailboxes`, { token: t.apiKey, json: { address: address(), room: room.name, queue: 'q' } });
      assert.equal(r.status, 400);
      assert.match(r.body.error.message, /allows no mail domains.*ATRIUM_MAIL_DOMAINS/);
    } finally {
      await bare.stop();
    }
  });
});

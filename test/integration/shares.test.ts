// Shares on both engines: a token shown once that lets its holder into one room with the share's
// grants — never more than its creator may use there — until the share expires or is deleted, at
// once. Forged, foreign, expired and revoked tokens all get the same 401.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { VIEWER_SCOPE } from '../../src/modules/rooms/service.ts';
import { FULL_SCOPE, USER_SCOPE } from '../../src/modules/participant-tokens/service.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { fingerprint } from '../support/walk.ts';

const VIEWER = VIEWER_SCOPE;

forEachEngine('shares', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'shares');
  });
  after(() => service?.stop());

  const project = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}`;
  const newRoom = async (t: Tenant = tenant) => {
    const r = await call(service, 'POST', `${project(t)}/rooms`, { token: t.apiKey, json: { name: `shared-${Math.random().toString(36).slice(2, 10)}` } });
    assert.equal(r.status, 201);
    return r.body as { id: string; name: string };
  };
  const share = async (settings: Record<string, unknown>, token = tenant.apiKey, t: Tenant = tenant) => call(service, 'POST', `${project(t)}/shares`, { token, json: { settings } });
  const connect = (id: string, token?: string) => call(service, 'POST', `/shares/${id}/connect`, { token, json: {} });
  const claimsOf = async (jwt: string) => (await call(service, 'POST', '/api/participant-token/validate', { json: { token: jwt } })).body;
  const memberWith = async (roles: string[]) => {
    const user = await createUserWithToken(service, 'share-member');
    assert.equal((await call(service, 'POST', `${project()}/users`, { token: tenant.apiKey, json: { user_id: user.userId, roles } })).status, 200);
    return user;
  };

  test('create shows the token once; connect with it gives the room with exactly the share\'s grants', async () => {
    const room = await newRoom();
    const created = await share({ room: room.name, theme: 'dark' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.token, /^ash_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.body.project_id, tenant.projectId);
    assert.deepEqual(created.body.settings, { theme: 'dark', room: room.name, grants: VIEWER, expires_at: null });

    const listed = await call(service, 'GET', `${project()}/shares`, { token: tenant.apiKey });
    assert.equal(listed.status, 200);
    const item = listed.body.shares.find((s: { id: string }) => s.id === created.body.id);
    assert.deepEqual(item.settings, created.body.settings);
    assert.ok(!JSON.stringify(listed.body).includes(created.body.token), 'lists never carry the token');

    const started = Math.floor(Date.now() / 1000);
    const connected = await connect(created.body.id, created.body.token);
    assert.equal(connected.status, 200, JSON.stringify(connected.body));
    assert.equal(connected.body.room_name, room.name);
    assert.equal(connected.body.project_id, tenant.projectId);
    assert.match(connected.body.room_url, new RegExp(`/rooms/${room.name}$`));
    assert.deepEqual(connected.body.settings, created.body.settings);
    const claims = await claimsOf(connected.body.jwt);
    assert.equal(claims.sub, tenant.projectId);
    assert.deepEqual(claims.grants, [{ name: 'room', scope: room.name }, { name: 'role', scope: 'user' }, { name: 'api', scope: VIEWER }]);
    assert.ok(claims.exp <= started + 3601);
    const again = await claimsOf((await connect(created.body.id, created.body.token)).body.jwt);
    assert.notEqual(again.name, claims.name, 'each guest is a participant of its own');
  });

  test('forged, foreign, missing, expired and deleted tokens all get the same 401', async () => {
    const room = await newRoom();
    const mine = (await share({ room: room.name })).body;
    const sibling = (await share({ room: room.name })).body;
    const other = await createTenant(service, 'shares-other');
    const theirs = (await share({ room: (await newRoom(other)).name }, other.apiKey, other)).body;

    const refusals: [string, string, string | undefined][] = [
      ['no token', mine.id, undefined],
      ['garbage', mine.id, 'garbage'],
      ['a forged token of the right shape', mine.id, `ash_${'A'.repeat(43)}`],
      ["a sibling share's token", mine.id, sibling.token],
      ["another project's share token", mine.id, theirs.token],
      ['the project API key', mine.id, tenant.apiKey],
      ['the right token on an unknown share', '00000000-0000-4000-8000-000000000000', mine.token],
      ["the right token on another project's share", theirs.id, mine.token],
    ];
    for (const [what, id, token] of refusals) {
      const r = await connect(id, token);
      assert.equal(r.status, 401, what);
      assert.equal(r.body.error.message, 'The share token is invalid, expired or revoked', what);
    }
    assert.equal((await connect('not-a-uuid', mine.token)).status, 400);
    assert.equal((await connect(mine.id, mine.token)).status, 200, 'the real one still works');

    // Expiring holds at once: nothing is cached.
    await service.ctx.db.execute(sql`update shares set expires_at = now() - interval '1 second' where id = ${mine.id}`);
    assert.equal((await connect(mine.id, mine.token)).status, 401);
    // Deleting holds at once.
    assert.equal((await connect(sibling.id, sibling.token)).status, 200);
    assert.deepEqual((await call(service, 'DELETE', `${project()}/shares/${sibling.id}`, { token: tenant.apiKey })).body, { ok: true });
    assert.equal((await connect(sibling.id, sibling.token)).status, 401);
    assert.equal((await call(service, 'DELETE', `${project()}/shares/${sibling.id}`, { token: tenant.apiKey })).status, 404);
  });

  test('a participant token ends no later than its share', async () => {
    const room = await newRoom();
    const expiresAt = new Date(Date.now() + 120_000);
    const created = await share({ room: room.name, expires_at: expiresAt.toISOString() });
    assert.equal(created.status, 201);
    assert.equal(created.body.expires_at, expiresAt.toISOString());
    const claims = await claimsOf((await connect(created.body.id, created.body.token)).body.jwt);
    assert.ok(claims.exp <= Math.floor(expiresAt.getTime() / 1000), 'not beyond the share');
    assert.ok(claims.exp >= Math.floor(expiresAt.getTime() / 1000) - 5);
  });

  test('update replaces settings and keeps the token; the share follows its room', async () => {
    const room = await newRoom();
    const other = await newRoom();
    const created = (await share({ room: room.name, note: 'first' })).body;
    const updated = await call(service, 'PUT', `${project()}/shares/${created.id}`, { token: tenant.apiKey, json: { settings: { grants: USER_SCOPE } } });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.deepEqual(updated.body.settings, { room: room.name, grants: USER_SCOPE, expires_at: null }, 'replaced; without room it keeps its room');
    assert.deepEqual((await claimsOf((await connect(created.id, created.token)).body.jwt)).grants.at(-1).scope, USER_SCOPE);

    const moved = await call(service, 'PUT', `${project()}/shares/${created.id}`, { token: tenant.apiKey, json: { settings: { room: other.name } } });
    assert.equal(moved.body.settings.room, other.name);
    assert.equal((await connect(created.id, created.token)).body.room_name, other.name);

    assert.equal((await call(service, 'PUT', `${project()}/rooms/${other.id}`, { token: tenant.apiKey, json: { name: `${other.name}-renamed` } })).status, 200);
    const listed = (await call(service, 'GET', `${project()}/shares`, { token: tenant.apiKey })).body.shares.find((s: { id: string }) => s.id === created.id);
    assert.equal(listed.settings.room, `${other.name}-renamed`);
    assert.equal((await connect(created.id, created.token)).body.room_name, `${other.name}-renamed`);

    assert.equal((await call(service, 'DELETE', `${project()}/rooms/${other.id}`, { token: tenant.apiKey })).status, 200);
    assert.equal((await connect(created.id, created.token)).status, 401, 'a deleted room takes its shares along');
    assert.ok(!(await call(service, 'GET', `${project()}/shares`, { token: tenant.apiKey })).body.shares.some((s: { id: string }) => s.id === created.id));
  });

  test('a share never grants more than its creator may use in the room', async () => {
    const room = await newRoom();
    const sharer = await memberWith(['share_creator', 'share_manager']);
    const policy = `${project()}/policies/resources/room/${room.id}`;

    const noAccess = await share({ room: room.name }, sharer.token);
    assert.equal(noAccess.status, 403, 'no access to the room, nothing to share');

    await call(service, 'POST', policy, { token: tenant.apiKey, json: { subject: { type: 'user', id: sharer.userId }, roles: ['viewer'] } });
    assert.equal((await share({ room: room.name }, sharer.token)).status, 201, 'a viewer may share viewing');
    for (const grants of [{ messaging: {} }, { llm: {} }, USER_SCOPE, { storage: {} }, { storage: { paths: [{ path: 'secret/', read_only: false }] } }]) {
      const r = await share({ room: room.name, grants }, sharer.token);
      assert.equal(r.status, 403, JSON.stringify(grants));
      assert.match(r.body.error.message, /beyond what you may use in this room/);
    }
    assert.equal((await share({ room: room.name, grants: { livekit: {}, storage: VIEWER!.storage } }, sharer.token)).status, 201, 'a subset of the viewer scope');

    await call(service, 'POST', policy, { token: tenant.apiKey, json: { subject: { type: 'user', id: sharer.userId }, roles: ['operator'] } });
    const operator = await share({ room: room.name, grants: USER_SCOPE }, sharer.token);
    assert.equal(operator.status, 201);
    assert.equal((await share({ room: room.name, grants: { admin: {} } }, sharer.token)).status, 403);
    // Updating is held to the same rule.
    assert.equal((await call(service, 'PUT', `${project()}/shares/${operator.body.id}`, { token: sharer.token, json: { settings: { grants: FULL_SCOPE } } })).status, 403);
    assert.equal((await share({ room: room.name, grants: FULL_SCOPE })).status, 201, 'an admin shares anything');

    const inventory = await memberWith(['share_inventory']);
    assert.equal((await call(service, 'GET', `${project()}/shares`, { token: inventory.token })).status, 200);
    assert.equal((await share({ room: room.name }, inventory.token)).status, 403);
  });

  test('bad settings and other projects are refused and write nothing', async () => {
    const room = await newRoom();
    const other = await createTenant(service, 'shares-foreign');
    const otherRoom = await newRoom(other);
    const theirs = (await share({ room: otherRoom.name }, other.apiKey, other)).body;
    const before = await fingerprint(service);
    const cases: [string, unknown, number][] = [
      ['no settings', {}, 400],
      ['no room', { settings: {} }, 400],
      ['settings not an object', { settings: 'x' }, 400],
      ['an unknown room', { settings: { room: 'nowhere' } }, 404],
      ["another project's room", { settings: { room: otherRoom.name } }, 404],
      ['an unknown surface', { settings: { room: room.name, grants: { teleport: {} } } }, 400],
      ['a surface that is no object', { settings: { room: room.name, grants: { livekit: true } } }, 400],
      ['grants not an object', { settings: { room: room.name, grants: ['livekit'] } }, 400],
      ['an expiry in the past', { settings: { room: room.name, expires_at: '2001-01-01T00:00:00Z' } }, 400],
      ['an expiry that is no date', { settings: { room: room.name, expires_at: 'tomorrow' } }, 400],
      ['a room name with a slash', { settings: { room: 'a/b' } }, 400],
      ['too many settings', { settings: { room: room.name, ...Object.fromEntries(Array.from({ length: 60 }, (_v, i) => [`k${i}`, i])) } }, 400],
    ];
    for (const [what, json, status] of cases) {
      const r = await call(service, 'POST', `${project()}/shares`, { token: tenant.apiKey, json });
      assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
    }
    assert.equal((await call(service, 'PUT', `${project()}/shares/${theirs.id}`, { token: tenant.apiKey, json: { settings: { room: room.name } } })).status, 404);
    assert.equal((await call(service, 'DELETE', `${project()}/shares/${theirs.id}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${project()}/shares/not-a-uuid`, { token: tenant.apiKey, json: { settings: {} } })).status, 400);
    assert.equal(await fingerprint(service), before, 'nothing was written');
    assert.equal((await connect(theirs.id, theirs.token)).status, 200, "the other project's share is untouched");
  });
});

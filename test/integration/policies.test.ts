// Resource policies on both engines: SPEC's /policies/resources/… and the SDKs' /iam/…/policy paths
// over one store; subjects (users by id, `me` or email; service accounts; project usersets); paging
// with sealed continuation tokens; refusals that write nothing; bindings that leave with their
// subject or resource; and policies taking effect — each row of the room, feed and repository role
// tables (the tables connect, the feed routes and the token route enforce) through the real routes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { VIEWER_SCOPE } from '../../src/modules/rooms/service.ts';
import { FULL_SCOPE, USER_SCOPE } from '../../src/modules/participant-tokens/service.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { fingerprint } from '../support/walk.ts';

const AGENT_REFUSAL = /Managed agents do not support resource policies; agent access uses the service account's run_as configuration/;

forEachEngine('resource policies', (engine) => {
  let service: TestService;
  let tenant: Tenant;

  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'policies');
  });
  after(() => service?.stop());

  const project = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}`;
  const specPath = (type: string, id: string, t: Tenant = tenant) => `${project(t)}/policies/resources/${type}/${id}`;
  const iamPath = (type: string, id: string, t: Tenant = tenant) => `${project(t)}/iam/${type}/${id}/policy`;
  const newRoom = async (t: Tenant = tenant) => {
    const r = await call(service, 'POST', `${project(t)}/rooms`, { token: t.apiKey, json: { name: `room-${Math.random().toString(36).slice(2, 10)}` } });
    assert.equal(r.status, 201);
    return r.body as { id: string; name: string };
  };
  const memberWith = async (roles: string[], t: Tenant = tenant) => {
    const user = await createUserWithToken(service, 'policy-member');
    assert.equal((await call(service, 'POST', `${project(t)}/users`, { token: t.apiKey, json: { user_id: user.userId, roles } })).status, 200);
    return user;
  };
  const grant = async (path: string, subject: object, roles: string[], token = tenant.apiKey) => call(service, 'POST', path, { token, json: { subject, roles } });
  const connectScope = async (roomName: string, token: string) => {
    const r = await call(service, 'POST', `${project()}/rooms/${roomName}/connect`, { token, json: {} });
    if (r.status !== 200) return r.status;
    const claims = (await call(service, 'POST', '/api/participant-token/validate', { json: { token: r.body.jwt } })).body;
    return claims.grants.find((g: { name: string }) => g.name === 'api').scope as Record<string, unknown>;
  };
  const bindingCount = async () => Number(rowsOf<{ n: number }>(await service.ctx.db.execute(sql`select count(*)::int as n from resource_policy_bindings`))[0]!.n);

  test('grant, list and revoke at both paths, over one store', async () => {
    const room = await newRoom();
    const alice = await memberWith(['member']);
    const bob = await memberWith(['member']);
    const key = await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: 'robot', roles: ['member'] } });

    const byId = await grant(specPath('room', room.id), { type: 'user', id: alice.userId }, ['operator', 'list', 'operator']);
    assert.equal(byId.status, 200, JSON.stringify(byId.body));
    assert.deepEqual(byId.body, {
      resource: { type: 'room', id: room.id, name: room.name },
      subject: { type: 'user', id: alice.userId, email: null, first_name: null, last_name: null },
      direct_roles: ['list', 'operator'],
    });
    // The SDKs' grant, by email, with the read-only names they echo back.
    const byEmail = await call(service, 'POST', `${iamPath('room', room.id)}:grant`, { token: tenant.apiKey, json: { subject: { type: 'user', email: bob.email.toUpperCase(), first_name: 'ignored' }, roles: ['viewer'], invite_redirect_url: 'https://app.example/' } });
    assert.equal(byEmail.status, 200, JSON.stringify(byEmail.body));
    assert.deepEqual(byEmail.body.direct_roles, ['viewer']);
    // `me` is the calling user.
    const me = await grant(specPath('room', room.id), { type: 'user', id: 'me' }, ['admin'], tenant.userToken);
    assert.equal(me.status, 200);
    assert.equal(me.body.subject.id, tenant.userId);
    assert.equal((await grant(specPath('room', room.id), { type: 'userset', id: tenant.projectId, object_type: 'project', relation: 'developer' }, ['admin'])).status, 200);
    assert.equal((await grant(specPath('room', room.id), { type: 'service_account', id: key.body.id }, ['viewer'])).status, 200);
    // Granting more adds to what the subject holds.
    assert.deepEqual((await grant(specPath('room', room.id), { type: 'user', id: alice.userId }, ['developer'])).body.direct_roles, ['developer', 'list', 'operator']);

    const spec = await call(service, 'GET', specPath('room', room.id), { token: tenant.apiKey });
    assert.equal(spec.status, 200);
    const iam = await call(service, 'GET', iamPath('room', room.id), { token: tenant.userToken });
    assert.deepEqual(iam.body, spec.body, 'both paths read the same store');
    assert.deepEqual(spec.body.resource, { type: 'room', id: room.id, name: room.name });
    assert.equal(spec.body.continuation_token, null);
    const bySubject = new Map(spec.body.access_grants.map((g: any) => [`${g.subject.type}:${g.subject.id}:${g.subject.relation ?? ''}`, g]));
    assert.equal(bySubject.size, 5);
    assert.deepEqual((bySubject.get(`user:${bob.userId}:`) as any).subject, { type: 'user', id: bob.userId, email: bob.email, first_name: '', last_name: '' });
    assert.deepEqual((bySubject.get(`userset:${tenant.projectId}:developer`) as any).subject, { type: 'userset', id: tenant.projectId, object_type: 'project', relation: 'developer' });
    assert.deepEqual((bySubject.get(`service_account:${key.body.id}:`) as any).direct_roles, ['viewer']);

    // SPEC's revoke takes roles; the SDKs' revokes everything.
    const some = await call(service, 'DELETE', specPath('room', room.id), { token: tenant.apiKey, json: { subject: { type: 'user', id: alice.userId }, roles: ['list', 'developer'] } });
    assert.equal(some.status, 200);
    assert.deepEqual(some.body.direct_roles, ['operator']);
    const all = await call(service, 'POST', `${iamPath('room', room.id)}:revoke`, { token: tenant.apiKey, json: { subject: { type: 'user', id: alice.userId } } });
    assert.deepEqual(all.body.direct_roles, []);
    const again = await call(service, 'DELETE', specPath('room', room.id), { token: tenant.apiKey, json: { subject: { type: 'user', id: alice.userId } } });
    assert.equal(again.status, 200, 'revoking what is not held is no error');
    const after = await call(service, 'GET', specPath('room', room.id), { token: tenant.apiKey });
    assert.ok(!after.body.access_grants.some((g: any) => g.subject.id === alice.userId));
    assert.equal(after.body.access_grants.length, 4);
  });

  test('pages follow sealed continuation tokens; altered or foreign tokens are refused', async () => {
    const room = await newRoom();
    const users = [];
    for (let i = 0; i < 7; i += 1) {
      const user = await memberWith(['member']);
      users.push(user.userId);
      await grant(specPath('room', room.id), { type: 'user', id: user.userId }, ['viewer']);
    }
    const seen: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const query: string = token ? `?page_size=3&continuation_token=${encodeURIComponent(token)}` : '?page_size=3';
      const page = await call(service, 'GET', `${iamPath('room', room.id)}${query}`, { token: tenant.apiKey });
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.ok(page.body.access_grants.length <= 3);
      seen.push(...page.body.access_grants.map((g: any) => g.subject.id));
      token = page.body.continuation_token;
      pages += 1;
    } while (token);
    assert.equal(pages, 3);
    assert.deepEqual([...seen].sort(), [...users].sort(), 'every binding once, none twice');

    const first = (await call(service, 'GET', `${specPath('room', room.id)}?page_size=2`, { token: tenant.apiKey })).body.continuation_token as string;
    assert.ok(!first.includes(seen[1]!), 'the position is not readable');
    const flipped = `${first.slice(0, 10)}${first[10] === 'A' ? 'B' : 'A'}${first.slice(11)}`;
    const otherRoom = await newRoom();
    const other = await createTenant(service, 'policies-other');
    const otherTokenRoom = await newRoom(other);
    await grant(specPath('room', otherTokenRoom.id, other), { type: 'userset', relation: 'member' }, ['viewer'], other.apiKey);
    await grant(specPath('room', otherTokenRoom.id, other), { type: 'userset', relation: 'developer' }, ['viewer'], other.apiKey);
    const foreign = (await call(service, 'GET', `${specPath('room', otherTokenRoom.id, other)}?page_size=1`, { token: other.apiKey })).body.continuation_token as string;
    for (const [what, path] of [
      ['altered', `${specPath('room', room.id)}?continuation_token=${encodeURIComponent(flipped)}`],
      ['garbage', `${specPath('room', room.id)}?continuation_token=not-a-token`],
      ['of another resource', `${specPath('room', otherRoom.id)}?continuation_token=${encodeURIComponent(first)}`],
      ['of another project', `${specPath('room', room.id)}?continuation_token=${encodeURIComponent(foreign)}`],
    ]) {
      const r = await call(service, 'GET', path!, { token: tenant.apiKey });
      assert.equal(r.status, 400, what);
      assert.match(r.body.error.message, /continuation_token/);
    }
    assert.equal((await call(service, 'GET', `${specPath('room', room.id)}?page_size=0`, { token: tenant.apiKey })).status, 400);
    assert.equal((await call(service, 'GET', `${specPath('room', room.id)}?page_size=1001`, { token: tenant.apiKey })).status, 400);
  });

  test('bad input, unknown subjects and other projects are refused and write nothing', async () => {
    const room = await newRoom();
    const member = await memberWith(['member']);
    const other = await createTenant(service, 'policies-foreign');
    const otherRoom = await newRoom(other);
    const otherKey = await call(service, 'POST', `${project(other)}/api-keys`, { token: other.apiKey, json: { name: 'theirs' } });
    const stranger = await createUserWithToken(service, 'stranger');
    const path = specPath('room', room.id);
    const user = { type: 'user', id: member.userId };
    const before = await fingerprint(service);

    const cases: [string, string, unknown, number, RegExp?][] = [
      ['unknown resource type', specPath('feeds', room.id), { subject: user, roles: ['viewer'] }, 400, /resource_type must be one of .*room.*repository/],
      ['managed agents', specPath('agent', room.id), { subject: user, roles: ['viewer'] }, 400, AGENT_REFUSAL],
      ['an unknown role', path, { subject: user, roles: ['owner'] }, 400, /"owner" is not a role of a room; its roles: admin, developer, operator, viewer, list/],
      ['no roles', path, { subject: user, roles: [] }, 400],
      ['roles not a list', path, { subject: user, roles: 'viewer' }, 400],
      ['no subject', path, { roles: ['viewer'] }, 400],
      ['a group subject', path, { subject: { type: 'group', id: 'g' }, roles: ['viewer'] }, 400, /subject.type/],
      ['an agent subject', path, { subject: { type: 'agent', id: 'a' }, roles: ['viewer'] }, 400, AGENT_REFUSAL],
      ['a user without id or email', path, { subject: { type: 'user' }, roles: ['viewer'] }, 400],
      ['a user id that is no id', path, { subject: { type: 'user', id: 'bob' }, roles: ['viewer'] }, 400],
      ['me with an API key', path, { subject: { type: 'user', id: 'me' }, roles: ['viewer'] }, 400, /"me"/],
      ['a user outside the project', path, { subject: { type: 'user', id: stranger.userId }, roles: ['viewer'] }, 404],
      ["another project's admin", path, { subject: { type: 'user', id: other.userId }, roles: ['viewer'] }, 404],
      ['an unknown email', path, { subject: { type: 'user', email: 'nobody@example.test' }, roles: ['viewer'] }, 404],
      ["an outsider's email", path, { subject: { type: 'user', email: stranger.email }, roles: ['viewer'] }, 404],
      ["another project's API key", path, { subject: { type: 'service_account', id: otherKey.body.id }, roles: ['viewer'] }, 404],
      ['a service account by email', path, { subject: { type: 'service_account', email: 'robot@example.test' }, roles: ['viewer'] }, 400],
      ['a userset of another project', path, { subject: { type: 'userset', id: other.projectId, relation: 'member' }, roles: ['viewer'] }, 400],
      ['a userset of something else', path, { subject: { type: 'userset', object_type: 'group', relation: 'member' }, roles: ['viewer'] }, 400],
      ['an unknown relation', path, { subject: { type: 'userset', relation: 'admin' }, roles: ['viewer'] }, 400],
      ["another project's room", specPath('room', otherRoom.id), { subject: user, roles: ['viewer'] }, 404],
      ['a room id that is no id', specPath('room', 'lobby'), { subject: user, roles: ['viewer'] }, 404],
      ['a deleted-looking id', specPath('room', '00000000-0000-4000-8000-000000000000'), { subject: user, roles: ['viewer'] }, 404],
    ];
    for (const [what, target, json, status, message] of cases) {
      const r = await call(service, 'POST', target, { token: tenant.apiKey, json });
      assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
      if (message) assert.match(r.body.error.message, message, what);
    }
    assert.equal((await call(service, 'GET', specPath('agent', room.id), { token: tenant.apiKey })).status, 400);
    assert.equal((await call(service, 'DELETE', path, { token: tenant.apiKey })).status, 400, 'revoke needs a body naming the subject');
    assert.equal((await call(service, 'POST', path, { token: tenant.apiKey, json: '{"subject":' })).status, 400);
    assert.equal(await fingerprint(service), before, 'nothing was written');
    // The other project's own room is untouched and still manageable by its owner only.
    assert.equal((await call(service, 'GET', specPath('room', otherRoom.id, other), { token: tenant.apiKey })).status, 404);
  });

  test("reading and changing a policy need the resource type's project roles", async () => {
    const room = await newRoom();
    const repo = (await call(service, 'POST', `${project()}/repositories`, { token: tenant.apiKey, json: { name: 'policy/roles' } })).body;
    const member = await memberWith(['member']);
    const developer = await memberWith(['developer']);
    const inventory = await memberWith(['repository_inventory']);
    const manager = await memberWith(['repository_manager']);
    const subject = { type: 'user', id: member.userId };

    assert.equal((await call(service, 'GET', specPath('room', room.id), { token: member.token })).status, 403);
    const refused = await grant(specPath('room', room.id), { type: 'user', id: 'me' }, ['admin'], member.token);
    assert.equal(refused.status, 403, 'a member cannot grant itself a role');
    assert.match(refused.body.error.message, /developer/);
    assert.equal((await grant(specPath('room', room.id), subject, ['operator'], developer.token)).status, 200);

    assert.equal((await call(service, 'GET', specPath('repository', repo.id), { token: inventory.token })).status, 200);
    assert.equal((await grant(specPath('repository', repo.id), subject, ['viewer'], inventory.token)).status, 403);
    assert.equal((await grant(specPath('repository', repo.id), subject, ['viewer'], manager.token)).status, 200);
    assert.equal((await call(service, 'GET', specPath('room', room.id), { token: manager.token })).status, 403);

    const outsider = await createUserWithToken(service, 'policy-outsider');
    assert.equal((await call(service, 'GET', specPath('room', room.id), { token: outsider.token })).status, 404);
  });

  test('bindings leave with their subject and their resource', async () => {
    const room = await newRoom();
    const member = await memberWith(['member']);
    const key = await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: 'leaving', roles: ['member'] } });
    await grant(specPath('room', room.id), { type: 'user', id: member.userId }, ['operator']);
    await grant(specPath('room', room.id), { type: 'service_account', id: key.body.id }, ['operator']);
    await grant(specPath('room', room.id), { type: 'userset', relation: 'member' }, ['viewer']);
    const list = async () => (await call(service, 'GET', specPath('room', room.id), { token: tenant.apiKey })).body.access_grants.map((g: any) => g.subject.type);

    assert.equal((await call(service, 'DELETE', `${project()}/users/${member.userId}`, { token: tenant.apiKey })).status, 200);
    assert.deepEqual(await list(), ['service_account', 'userset']);
    // Back in the project, the user starts without the old binding.
    assert.equal((await call(service, 'POST', `${project()}/users`, { token: tenant.apiKey, json: { user_id: member.userId, roles: ['member'] } })).status, 200);
    assert.deepEqual(await list(), ['service_account', 'userset']);

    assert.equal((await call(service, 'DELETE', `${project()}/api-keys/${key.body.id}`, { token: tenant.apiKey })).status, 200);
    assert.deepEqual(await list(), ['userset']);

    const before = await bindingCount();
    assert.equal((await call(service, 'DELETE', `${project()}/rooms/${room.id}`, { token: tenant.apiKey })).status, 200);
    assert.equal(await bindingCount(), before - 1, "the room's bindings went with it");
    assert.equal((await call(service, 'GET', specPath('room', room.id), { token: tenant.apiKey })).status, 404);

    const repo = (await call(service, 'POST', `${project()}/repositories`, { token: tenant.apiKey, json: { name: 'policy/leaving' } })).body;
    await grant(specPath('repository', repo.id), { type: 'userset', relation: 'member' }, ['viewer']);
    assert.equal((await call(service, 'DELETE', `${project()}/repositories/${repo.id}`, { token: tenant.apiKey })).status, 200);
    assert.equal(await bindingCount(), before - 1);
  });

  test('each room role decides what connect grants; without a binding a member may not join; revoking holds at once', async () => {
    // Written out rather than read from the room type's token table only, so that a wrong entry in the table fails here.
    const user = ['agents', 'containers', 'dataset', 'developer', 'livekit', 'memory', 'messaging', 'queues', 'secrets', 'services', 'storage', 'sync'];
    const surfaces: Record<string, string[] | null> = {
      admin: [...user, 'admin', 'llm', 'tunnels'].sort(),
      developer: [...user, 'llm', 'tunnels'].sort(),
      operator: user,
      viewer: ['livekit', 'messaging', 'storage', 'sync'],
      list: null,
    };
    const roomType = service.ctx.authority.type('room')!;
    const roomRoleScopes = Object.keys(roomType.policy!.roles).map((role) => [role, roomType.token!.policy.find(([r]) => r === role)?.[1] ?? null] as const);
    assert.deepEqual(roomRoleScopes.map(([role]) => role), Object.keys(surfaces), 'every room role is covered');
    assert.deepEqual(VIEWER_SCOPE, {
      livekit: {}, messaging: { broadcast: false, send: false }, storage: { paths: [{ path: '', read_only: true }] }, sync: { paths: [{ path: '*', read_only: true }] },
    }, 'a viewer watches: no sending, storage and sync read-only');
    for (const [role, scope] of roomRoleScopes) {
      assert.deepEqual(scope === null ? null : Object.keys(scope).sort(), surfaces[role], `${role}: its surfaces`);
      const room = await newRoom();
      const member = await memberWith(['member']);
      const proxyUser = await memberWith(['llm_proxy_user']);
      assert.equal(await connectScope(room.name, member.token), 403, 'no binding, no entry');
      assert.equal((await grant(specPath('room', room.id), { type: 'user', id: member.userId }, [role])).status, 200);
      assert.equal((await grant(specPath('room', room.id), { type: 'user', id: proxyUser.userId }, [role])).status, 200);
      assert.deepEqual(await connectScope(room.name, proxyUser.token), scope ?? 403, `${role} connects with its scope`);
      // `llm` in a token admits the LLM proxy: it stays for holders of llm_proxy_user alone.
      const withoutLlm = scope && Object.fromEntries(Object.entries(scope).filter(([surface]) => surface !== 'llm'));
      assert.deepEqual(await connectScope(room.name, member.token), withoutLlm ?? 403, `${role} connects with its scope, llm only for LLM proxy users`);
      const elsewhere = await newRoom();
      assert.equal(await connectScope(elsewhere.name, member.token), 403, `${role} on one room is nothing on another`);
      await call(service, 'DELETE', specPath('room', room.id), { token: tenant.apiKey, json: { subject: { type: 'user', id: member.userId } } });
      assert.equal(await connectScope(room.name, member.token), 403, `revoking ${role} stops the next connect`);
    }
  });

  test('the strongest role wins, usersets reach every member, service accounts are API keys', async () => {
    const room = await newRoom();
    const member = await memberWith(['member']);
    const developer = await memberWith(['developer']);
    await grant(specPath('room', room.id), { type: 'user', id: member.userId }, ['viewer', 'operator']);
    assert.deepEqual(await connectScope(room.name, member.token), USER_SCOPE);

    const other = await memberWith(['member']);
    assert.equal(await connectScope(room.name, other.token), 403);
    await grant(specPath('room', room.id), { type: 'userset', relation: 'member' }, ['viewer']);
    assert.deepEqual(await connectScope(room.name, other.token), VIEWER_SCOPE);
    assert.deepEqual(await connectScope(room.name, member.token), USER_SCOPE, 'own operator beats the userset viewer');
    assert.deepEqual(await connectScope(room.name, developer.token), FULL_SCOPE, 'project developers connect with everything');

    const narrow = await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: 'narrow', roles: ['member'] } });
    assert.deepEqual(await connectScope(room.name, narrow.body.value), USER_SCOPE, 'an API key without a binding keeps the participant defaults');
    await grant(specPath('room', room.id), { type: 'service_account', id: narrow.body.id }, ['admin']);
    const { llm: _llm, ...fullButLlm } = FULL_SCOPE;
    assert.deepEqual(await connectScope(room.name, narrow.body.value), fullButLlm, 'everything in the room but the LLM proxy, which the key may not use');
    await grant(specPath('room', room.id), { type: 'service_account', id: narrow.body.id }, ['list']);
    await call(service, 'DELETE', specPath('room', room.id), { token: tenant.apiKey, json: { subject: { type: 'service_account', id: narrow.body.id }, roles: ['admin'] } });
    assert.equal(await connectScope(room.name, narrow.body.value), 403, 'a list-only binding decides: no entry');

    // Someone else's project: the room is not even there.
    const outsider = await createTenant(service, 'policies-outsider');
    assert.equal(await connectScope(room.name, outsider.userToken), 404);
  });

  test('each feed role decides what its holder may do with that private feed; without a binding it is not there', async () => {
    // Written out rather than read from the feed type's policy table, so that a wrong entry in the table fails here.
    const expected: Record<string, { see: boolean; readSubscriptions: boolean; subscribe: boolean; publish: boolean; manage: boolean }> = {
      manager: { see: true, readSubscriptions: true, subscribe: true, publish: true, manage: true },
      publisher: { see: true, readSubscriptions: true, subscribe: false, publish: true, manage: false },
      subscriber: { see: true, readSubscriptions: true, subscribe: true, publish: false, manage: false },
      reader: { see: true, readSubscriptions: true, subscribe: false, publish: false, manage: false },
      list: { see: true, readSubscriptions: false, subscribe: false, publish: false, manage: false },
    };
    assert.deepEqual(Object.keys(expected).sort(), Object.keys(service.ctx.authority.type('feed')!.policy!.roles).sort(), 'every feed role is covered');
    const room = await newRoom();
    const newFeed = async (name: string, visibility = 'private') => {
      const r = await call(service, 'POST', `${project()}/feeds`, { token: tenant.apiKey, json: { name, visibility } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.feed as { id: string; name: string };
    };
    const listed = async (token: string) => (await call(service, 'GET', `${project()}/feeds`, { token })).body.feeds.map((f: { name: string }) => f.name);
    for (const [role, may] of Object.entries(expected)) {
      const feed = await newFeed(`policy-feed-${role}`);
      const base = `${project()}/feeds/${feed.id}`;
      const member = await memberWith(['member']);
      // The room's files are theirs (a subscription writes into them), so the feed's role decides.
      assert.equal((await grant(specPath('room', room.id), { type: 'user', id: member.userId }, ['viewer'])).status, 200);
      const tryAll = async () => ({
        see: (await call(service, 'GET', base, { token: member.token })).status,
        listed: (await listed(member.token)).includes(feed.name),
        readSubscriptions: (await call(service, 'GET', `${base}/subscriptions`, { token: member.token })).status,
        subscribe: (await call(service, 'POST', `${base}/subscriptions`, { token: member.token, json: { room: room.name, path: `feeds/${role}` } })).status,
        publish: (await call(service, 'POST', `${base}/messages`, { token: member.token, json: { role } })).status,
        manage: (await call(service, 'PUT', base, { token: member.token, json: { description: `by ${role}` } })).status,
      });
      assert.deepEqual(await tryAll(), { see: 404, listed: false, readSubscriptions: 404, subscribe: 404, publish: 404, manage: 404 }, `${role}: without a binding the private feed is not there`);
      assert.equal((await grant(specPath('feed', feed.id), { type: 'user', id: member.userId }, [role])).status, 200);
      const allowed = (yes: boolean, ok: number) => (yes ? ok : 403);
      const rights: Record<string, string[]> = {
        manager: ['read_subscriptions', 'add_subscription', 'change_subscriptions', 'publish', 'manage'],
        publisher: ['read_subscriptions', 'publish'],
        subscriber: ['read_subscriptions', 'add_subscription', 'change_subscriptions'],
        reader: ['read_subscriptions'],
        list: [],
      };
      assert.deepEqual((await call(service, 'GET', base, { token: member.token })).body.rights, rights[role], `${role}: the rights the console shows`);
      assert.deepEqual(await tryAll(), {
        see: 200, listed: true,
        readSubscriptions: allowed(may.readSubscriptions, 200), subscribe: allowed(may.subscribe, 201), publish: allowed(may.publish, 201), manage: allowed(may.manage, 200),
      }, `${role} on the feed's policy`);
      const elsewhere = await newFeed(`policy-feed-${role}-other`);
      assert.equal((await call(service, 'GET', `${project()}/feeds/${elsewhere.id}`, { token: member.token })).status, 404, `${role} on one feed is nothing on another`);
      await call(service, 'DELETE', specPath('feed', feed.id), { token: tenant.apiKey, json: { subject: { type: 'user', id: member.userId } } });
      assert.equal((await call(service, 'GET', base, { token: member.token })).status, 404, `revoking ${role} hides the feed at once`);
    }

    // A project feed is seen by every member; its policy still decides who publishes.
    const open = await newFeed('policy-feed-open', 'project');
    const member = await memberWith(['member']);
    const publish = () => call(service, 'POST', `${project()}/feeds/${open.id}/messages`, { token: member.token, json: { hello: 1 } });
    const refused = await publish();
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /feed_manager project role, or the manager or publisher role on the feed's policy, or a participant token's feed grant/);
    await grant(specPath('feed', open.id), { type: 'userset', relation: 'member' }, ['publisher']);
    assert.equal((await publish()).status, 201, 'a userset binding reaches every member');
    const key = await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: 'feed-robot', roles: ['member'] } });
    const byKey = () => call(service, 'POST', `${project()}/feeds/${open.id}/messages/batch`, { token: key.body.value, json: [{ a: 1 }, { a: 2 }] });
    assert.equal((await byKey()).status, 403, 'an API key with only member may not publish');
    await grant(specPath('feed', open.id), { type: 'service_account', id: key.body.id }, ['publisher']);
    assert.equal((await byKey()).status, 201, 'a service account binding lets the key publish');

    // Reading and changing a feed's policy take the feed roles of the project.
    const inventory = await memberWith(['feed_inventory']);
    assert.equal((await call(service, 'GET', specPath('feed', open.id), { token: inventory.token })).status, 200);
    assert.equal((await grant(specPath('feed', open.id), { type: 'user', id: member.userId }, ['reader'], inventory.token)).status, 403);
    assert.equal((await call(service, 'GET', specPath('feed', open.id), { token: member.token })).status, 403);

    // The bindings go with the feed.
    const before = await bindingCount();
    assert.equal((await call(service, 'DELETE', `${project()}/feeds/${open.id}`, { token: tenant.apiKey })).status, 200);
    assert.equal(await bindingCount(), before - 2, "the feed's bindings went with it");
    assert.equal((await grant(specPath('feed', 'not-a-feed-id'), { type: 'user', id: member.userId }, ['reader'])).status, 404);
  });

  test('each repository role decides which actions its holder may put in a token', async () => {
    // Written out, so that a wrong entry in the repository type's policy table fails here.
    const expected: Record<string, string[]> = { admin: ['pull', 'push'], developer: ['pull', 'push'], operator: ['pull'], viewer: ['pull'], list: [] };
    assert.deepEqual(Object.keys(service.ctx.authority.type('repository')!.policy!.roles), Object.keys(expected), 'every repository role is covered');
    for (const [role, actions] of Object.entries(expected)) {
      const repo = (await call(service, 'POST', `${project()}/repositories`, { token: tenant.apiKey, json: { name: `policy/repo-${role}` } })).body;
      const member = await memberWith(['member']);
      await grant(specPath('repository', repo.id), { type: 'user', id: member.userId }, [role]);
      for (const action of ['pull', 'push']) {
        const r = await call(service, 'POST', `${project()}/repositories/${repo.id}/token`, { token: member.token, json: { actions: [action] } });
        assert.equal(r.status, actions.includes(action) ? 200 : 403, `${role} asking for ${action}`);
      }
      const other = (await call(service, 'POST', `${project()}/repositories`, { token: tenant.apiKey, json: { name: `policy/other-${role}` } })).body;
      assert.equal((await call(service, 'POST', `${project()}/repositories/${other.id}/token`, { token: member.token, json: {} })).status, 404, `${role} on one repository is nothing on another: not even there`);
      const listed = (await call(service, 'GET', `${project()}/repositories`, { token: member.token })).body;
      assert.deepEqual([listed.repositories.map((r: { id: string }) => r.id), listed.total], [[repo.id], 1], `${role}: the list shows the one repository it sees`);
    }
  });
});

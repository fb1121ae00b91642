// A resource bound to a room acts in it: a service runs there, a secret is read there, a scheduled
// task's runs, a mailbox's mail and a route's traffic arrive there, an external OAuth registration
// signs its participants in, a feed subscription writes its files. Whoever creates or changes one
// must be allowed `room.connect` (a subscription: `room.read_files`) in that room themselves. Walked
// here for a member holding every project role to make these, and no access to one of two rooms.
import assert from 'node:assert/strict';
import { before, after, test } from 'node:test';
import { apiRoutes } from '../support/routes.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, TEST_MAIL_DOMAIN, type Tenant, type TestService } from '../support/service.ts';

const ROLES = [
  'service_creator', 'service_manager', 'secret_creator', 'secret_manager', 'secret_inventory', 'scheduled_task_creator', 'scheduled_task_manager',
  'mailbox_creator', 'mailbox_manager', 'route_creator', 'route_manager', 'external_oauth_creator', 'external_oauth_manager',
  'feed_subscription_creator',
];

/** The routes the tests below walk: every route declaring the room it binds to (`auth.within`). */
const WALKED = [
  'POST /accounts/projects/:project_id/rooms/:room_name/services',
  'PUT /accounts/projects/:project_id/rooms/:room_name/services/:service_id',
  'POST /accounts/projects/:project_id/rooms/:room_name/secrets',
  'GET /accounts/projects/:project_id/rooms/:room_name/secrets/:secret_id',
  'PUT /accounts/projects/:project_id/rooms/:room_name/secrets/:secret_id',
  'POST /accounts/projects/:project_id/rooms/:room_name/scheduled-tasks',
  'POST /accounts/projects/:project_id/scheduled-tasks',
  'PUT /accounts/projects/:project_id/scheduled-tasks/:task_id',
  'POST /accounts/projects/:project_id/mailboxes',
  'PUT /accounts/projects/:project_id/mailboxes/:address',
  'POST /accounts/projects/:project_id/routes',
  'PUT /accounts/projects/:project_id/routes/:domain',
  'POST /accounts/projects/:project_id/rooms/:room_name/external-oauth',
  'PUT /accounts/projects/:project_id/rooms/:room_name/external-oauth/:room_registration_id',
  'POST /accounts/projects/:project_id/feeds/:feed_id/subscriptions',
];

const serviceSpec = (name: string) => ({
  version: 'v1', kind: 'Service', metadata: { name },
  ports: [{ num: 8080, type: 'http', endpoints: [{ path: '/agent', meshagent: { identity: name } }] }],
  container: { image: 'ghcr.io/example/echo:1' },
});
const provider = { authorization_endpoint: 'https://idp.example.com/authorize', token_endpoint: 'https://idp.example.com/token', scopes: ['read'] };

forEachEngine('resources bound to a room', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let member: { userId: string; token: string };
  let n = 0;
  const unique = () => `${Date.now().toString(36)}-${++n}`;
  const project = () => `/accounts/projects/${tenant.projectId}`;

  before(async () => {
    service = await startTestService(engine, { ATRIUM_MAIL_DOMAINS: TEST_MAIL_DOMAIN });
    tenant = await createTenant(service, 'room-bindings');
    member = await createUserWithToken(service, 'binder');
    const joined = await call(service, 'POST', `${project()}/users`, { token: tenant.apiKey, json: { user_id: member.userId, roles: ROLES } });
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
  });
  after(() => service?.stop());

  /** A room the member may connect to and read files in (its initial permissions), and one they have no access to. */
  const rooms = async () => {
    const make = async (name: string, permissions?: unknown) => {
      const r = await call(service, 'POST', `${project()}/rooms`, { token: tenant.apiKey, json: { name, permissions } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { id: string; name: string };
    };
    return { mine: await make(`mine-${unique()}`, { [member.userId]: { storage: {} } }), theirs: await make(`theirs-${unique()}`) };
  };

  const as = (token: string) => ({
    post: (path: string, json: unknown) => call(service, 'POST', `${project()}${path}`, { token, json }),
    put: (path: string, json: unknown) => call(service, 'PUT', `${project()}${path}`, { token, json }),
  });
  const byMember = () => as(member.token);
  const byAdmin = () => as(tenant.apiKey);
  /** A refusal naming who may connect, and the count of what exists unchanged. */
  const refused = (response: { status: number; body: any }, what: string) => {
    assert.equal(response.status, 403, `${what}: ${JSON.stringify(response.body)}`);
    assert.match(response.body.error.message, /room's policy/, `${what}: the refusal names what would allow it`);
  };
  const count = async (path: string, key: string) => {
    const r = await call(service, 'GET', `${project()}${path}`, { token: tenant.apiKey });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return (r.body[key] as unknown[]).length;
  };

  test('every route that declares the room it binds to is walked here, and no other', () => {
    const declared = apiRoutes(service).filter((r) => r.auth?.within?.type === 'room').map((r) => `${r.method} ${r.url}`);
    assert.deepEqual(declared.sort(), [...WALKED].sort());
  });

  test('a room service: created and replaced only in a room the caller may connect to', async () => {
    const { mine, theirs } = await rooms();
    refused(await byMember().post(`/rooms/${theirs.name}/services`, serviceSpec('spy')), 'create');
    assert.equal(await count(`/rooms/${theirs.name}/services`, 'services'), 0);
    assert.equal((await byMember().post(`/rooms/${mine.name}/services`, serviceSpec('ok'))).status, 201);
    const placed = await byAdmin().post(`/rooms/${theirs.name}/services`, serviceSpec('placed'));
    assert.equal(placed.status, 201);
    refused(await byMember().put(`/rooms/${theirs.name}/services/${placed.body.id}`, serviceSpec('placed')), 'replace');
  });

  test('a room secret: created, replaced and its value read only in a room the caller may connect to', async () => {
    const { mine, theirs } = await rooms();
    const secret = (name: string) => ({ name, type: 'keys', data_base64: Buffer.from('value').toString('base64') });
    refused(await byMember().post(`/rooms/${theirs.name}/secrets`, secret('spy')), 'create');
    assert.equal(await count(`/rooms/${theirs.name}/secrets`, 'secrets'), 0);
    assert.equal((await byMember().post(`/rooms/${mine.name}/secrets`, secret('ok'))).status, 201);
    const placed = await byAdmin().post(`/rooms/${theirs.name}/secrets`, secret('placed'));
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    refused(await byMember().put(`/rooms/${theirs.name}/secrets/${placed.body.id}`, secret('placed')), 'replace');
    // Its value is the room's as well: read only by a caller who may connect there; its name is listed for secret_inventory.
    const read = (room: string, id: string) => call(service, 'GET', `${project()}/rooms/${room}/secrets/${id}`, { token: member.token });
    refused(await read(theirs.name, placed.body.id), 'read the value');
    assert.equal(await count(`/rooms/${theirs.name}/secrets`, 'secrets'), 1);
    const listed = await call(service, 'GET', `${project()}/rooms/${theirs.name}/secrets`, { token: member.token });
    assert.equal(listed.status, 200, 'the list, without values, stays open to secret_inventory');
    const own = (await call(service, 'GET', `${project()}/rooms/${mine.name}/secrets`, { token: member.token })).body.secrets[0] as { id: string };
    const value = await read(mine.name, own.id);
    assert.equal(value.status, 200, JSON.stringify(value.body));
    assert.equal(Buffer.from(value.body.data_base64, 'base64').toString(), 'value');
  });

  test('a scheduled task: created, changed or moved only in a room the caller may connect to', async () => {
    const { mine, theirs } = await rooms();
    const task = { queue_name: 'pings', payload: { a: 1 }, schedule: '30 minutes' };
    refused(await byMember().post(`/rooms/${theirs.name}/scheduled-tasks`, task), 'create');
    refused(await byMember().post('/scheduled-tasks', { ...task, room_name: theirs.name }), 'create (flat)');
    const ours = await byMember().post(`/rooms/${mine.name}/scheduled-tasks`, task);
    assert.equal(ours.status, 201, JSON.stringify(ours.body));
    refused(await byMember().put(`/scheduled-tasks/${ours.body.task_id}`, { room_name: theirs.name }), 'move');
    const placed = await byAdmin().post(`/rooms/${theirs.name}/scheduled-tasks`, task);
    refused(await byMember().put(`/scheduled-tasks/${placed.body.task_id}`, { payload: { injected: true } }), 'change in place');
    const listed = await call(service, 'GET', `${project()}/scheduled-tasks?limit=1000`, { token: tenant.apiKey });
    const kept = (listed.body.tasks as { id: string; room_name: string }[]).find((t) => t.id === ours.body.task_id);
    assert.equal(kept?.room_name, mine.name, 'the refused move left it where it was');
  });

  test('a mailbox: created or moved only into a room the caller may connect to', async () => {
    const { mine, theirs } = await rooms();
    const address = `box-${unique()}@${TEST_MAIL_DOMAIN}`;
    refused(await byMember().post('/mailboxes', { address, room: theirs.name, queue: 'inbox' }), 'create');
    assert.equal((await byMember().post('/mailboxes', { address, room: mine.name, queue: 'inbox' })).status, 201);
    refused(await byMember().put(`/mailboxes/${address}`, { room: theirs.name, queue: 'inbox' }), 'move');
    const kept = await call(service, 'GET', `${project()}/mailboxes/${address}`, { token: tenant.apiKey });
    assert.equal(kept.body.mailbox.room, mine.name);
  });

  test('a route: created or moved only to a room the caller may connect to', async () => {
    const { mine, theirs } = await rooms();
    const domain = `app-${unique()}.example.com`;
    refused(await byMember().post('/routes', { domain, room_name: theirs.name, port: 8080 }), 'create');
    assert.equal((await byMember().post('/routes', { domain, room_name: mine.name, port: 8080 })).status, 201);
    refused(await byMember().put(`/routes/${domain}`, { room_name: theirs.name, port: 8080 }), 'move');
  });

  test('a room\'s external OAuth registration: created and replaced only in a room the caller may connect to', async () => {
    const { mine, theirs } = await rooms();
    const registration = { oauth: provider, client_id: 'agents' };
    refused(await byMember().post(`/rooms/${theirs.name}/external-oauth`, registration), 'create');
    assert.equal(await count(`/rooms/${theirs.name}/external-oauth`, 'registrations'), 0);
    assert.equal((await byMember().post(`/rooms/${mine.name}/external-oauth`, registration)).status, 201);
    const placed = await byAdmin().post(`/rooms/${theirs.name}/external-oauth`, registration);
    assert.equal(placed.status, 201, JSON.stringify(placed.body));
    refused(await byMember().put(`/rooms/${theirs.name}/external-oauth/${placed.body.id}`, registration), 'replace');
  });

  test('a feed subscription: only into a room whose files the caller may read', async () => {
    const { mine, theirs } = await rooms();
    const feed = (await byAdmin().post('/feeds', { name: `feed-${unique()}`, visibility: 'project' })).body.feed as { id: string };
    refused(await byMember().post(`/feeds/${feed.id}/subscriptions`, { room: theirs.name, path: 'in/' }), 'subscribe');
    assert.equal((await byMember().post(`/feeds/${feed.id}/subscriptions`, { room: mine.name, path: 'in/' })).status, 201);
  });

  test('an API key has its participant defaults in a room without a role on its policy, as when it connects', async () => {
    const { theirs } = await rooms();
    const key = (await byAdmin().post('/api-keys', { name: 'binder-key', roles: ['service_creator'] })).body.value as string;
    assert.equal((await as(key).post(`/rooms/${theirs.name}/services`, serviceSpec('by-key'))).status, 201);
  });
});

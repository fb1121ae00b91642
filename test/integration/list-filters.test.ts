// Every list the console searches takes its search to the server: an item on another page than the
// first is found, the total counts the matches, LIKE wildcards in the text match literally, and
// another project's items never match.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { adjust } from '../../src/modules/billing/service.ts';
import { startSession } from '../../src/modules/sessions/service.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const ROOMS = 32;

forEachEngine('list filters', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let other: Tenant;
  const names = Array.from({ length: ROOMS }, (_, i) => `room-${String(i).padStart(2, '0')}`);

  const api = async (path: string, method = 'GET', json?: unknown, t: Tenant = tenant) => {
    const response = await call(service, method, `/accounts/projects/${t.projectId}${path}`, { token: t.apiKey, json });
    assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };

  before(async () => {
    service = await startTestService(engine, { ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' });
    tenant = await createTenant(service, 'filters');
    other = await createTenant(service, 'filters-other');
    for (const name of names) await api('/rooms', 'POST', { name });
    // The other project has a room of the same name: it must never show in this project's lists.
    await api('/rooms', 'POST', { name: 'room-30' }, other);
  });
  after(() => service?.stop());

  test('rooms: the first page of 25 does not hold room-30, the search finds it', async () => {
    const first = await api('/rooms?limit=25');
    assert.equal(first.total, ROOMS);
    assert.ok(!first.rooms.some((r: { name: string }) => r.name === 'room-30'));
    const found = await api('/rooms?limit=25&filter=ROOM-30');
    assert.deepEqual(found.rooms.map((r: { name: string }) => r.name), ['room-30']);
    assert.equal(found.total, 1);
    assert.equal((await api('/rooms?limit=25&filter=room-3')).total, 2);
    // `_` and `%` are characters, not wildcards.
    assert.equal((await api('/rooms?filter=room_3')).total, 0);
    assert.equal((await api('/rooms?filter=%25')).total, 0);
    // Past the end of the matches: an empty page with the total still right.
    assert.deepEqual(await api('/rooms?filter=room-3&offset=5'), { rooms: [], total: 2 });
  });

  test('shares by label or room name; LLM loggers by expression; scheduled tasks by name, queue or room', async () => {
    await api('/shares', 'POST', { settings: { room: 'room-07', label: 'Demo for Ada' } });
    await api('/shares', 'POST', { settings: { room: 'room-30', label: 'Review' } });
    assert.deepEqual((await api('/shares?filter=ada')).shares.map((s: { settings: { label: string } }) => s.settings.label), ['Demo for Ada']);
    assert.deepEqual((await api('/shares?filter=room-30')).shares.map((s: { settings: { label: string } }) => s.settings.label), ['Review']);

    const { feed } = await api('/feeds', 'POST', { name: 'llm-calls' });
    await api('/llm-loggers', 'POST', { destination_feed_id: feed.id, filter_expression: "model == 'gpt-5'" });
    await api('/llm-loggers', 'POST', { destination_feed_id: feed.id, filter_expression: "provider == 'anthropic'" });
    assert.deepEqual((await api('/llm-loggers?filter=ANTHROPIC')).loggers.map((l: { filter_expression: string }) => l.filter_expression), ["provider == 'anthropic'"]);

    await api('/rooms/room-12/scheduled-tasks', 'POST', { spec: { metadata: { name: 'nightly report' }, schedule: '0 3 * * *', queue: { name: 'reports' } } });
    await api('/rooms/room-30/scheduled-tasks', 'POST', { spec: { schedule: '0 4 * * *', queue: { name: 'cleanup' } } });
    const named = (filter: string) => api(`/scheduled-tasks?filter=${encodeURIComponent(filter)}`).then((b) => b.tasks.map((t: { queue_name: string }) => t.queue_name));
    assert.deepEqual(await named('nightly'), ['reports']);
    assert.deepEqual(await named('clean'), ['cleanup']);
    assert.deepEqual(await named('room-30'), ['cleanup']);
    assert.deepEqual(await api('/scheduled-tasks?filter=room-30&offset=3'), { tasks: [], total: 1 });
  });

  test('API keys by name, webhooks by name or URL, invitations by address', async () => {
    await api('/api-keys', 'POST', { name: 'deploy bot', roles: ['member'] });
    assert.deepEqual((await api('/api-keys?filter=DEPLOY')).keys.map((k: { name: string }) => k.name), ['deploy bot']);
    assert.equal((await api('/api-keys')).keys.length, 2);

    for (const [name, url] of [['orders', 'http://127.0.0.1:9/orders'], ['audit', 'http://127.0.0.1:9/audit-log']]) {
      await api('/webhooks', 'POST', { name, url, events: ['room.started'], secret: 'a webhook signing secret' });
    }
    assert.deepEqual((await api('/webhooks?filter=audit-log')).webhooks.map((w: { name: string }) => w.name), ['audit']);
    assert.deepEqual((await api('/webhooks?filter=ORDERS')).webhooks.map((w: { name: string }) => w.name), ['orders']);

    for (const email of ['ada@example.test', 'grace@example.test']) await api('/users', 'POST', { email });
    const invited = await api('/invitations?filter=grace');
    assert.deepEqual(invited.invitations.map((i: { email: string }) => i.email), ['grace@example.test']);
    assert.equal(invited.total, 1);
  });

  test('sessions by room name, running and recent; transactions by type or description', async () => {
    for (const room of ['room-05', 'room-30']) await startSession(service.ctx, tenant.projectId, { room_name: room });
    await startSession(service.ctx, other.projectId, { room_name: 'room-30' });
    for (const list of ['/sessions/active', '/sessions']) {
      const found = await api(`${list}?filter=30`);
      assert.deepEqual(found.sessions.map((s: { room_name: string }) => s.room_name), ['room-30'], list);
      assert.equal(found.total, 1);
    }

    await adjust(service.ctx, tenant.projectId, 5_000_000n, 'filters-1', 'Welcome credit');
    await adjust(service.ctx, tenant.projectId, 1_000_000n, 'filters-2', 'Refund of March');
    const refunds = await api('/transactions?filter=march');
    assert.deepEqual(refunds.transactions.map((t: { description: string }) => t.description), ['Refund of March']);
    assert.equal(refunds.total, 1);
    assert.equal((await api('/transactions?filter=adjustment')).total, 2);
    assert.deepEqual(await api('/transactions?filter=nothing-like-it&offset=10'), { transactions: [], total: 0 });
  });
});

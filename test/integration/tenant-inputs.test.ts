// What one tenant sends that reaches a room server, another project or every caller: paths stay
// inside their storage, an unreachable LLM upstream is named by its provider (its address is the
// operator's), session ids belong to their project, and a list filter matches what the caller sees.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, createTenant, forEachEngine, freePort, startTestService, type Tenant, type TestService } from '../support/service.ts';

const ESCAPES = ['../../projects/x', 'notes/../../../projects/x', '/../projects/x', '..', 'a/\u0001/b'];

forEachEngine('tenant inputs', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let neighbour: Tenant;
  let closedPort: number;
  const ROOM = 'inputs-room';

  before(async () => {
    closedPort = await freePort();
    service = await startTestService(engine, { ATRIUM_OPENAI_API_KEY: 'sk-test', ATRIUM_OPENAI_BASE_URL: `http://127.0.0.1:${closedPort}/v1` });
    tenant = await createTenant(service, 'inputs');
    neighbour = await createTenant(service, 'neighbour');
    const room = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms`, { token: tenant.apiKey, json: { name: ROOM } });
    assert.equal(room.status, 201, JSON.stringify(room.body));
  });
  after(() => service?.stop());

  const api = (method: string, path: string, json?: unknown, who: Tenant = tenant) =>
    call(service, method, `/accounts/projects/${who.projectId}${path}`, { token: who.apiKey, ...(json !== undefined ? { json } : {}) });

  test('a scheduled task\'s storage_write_path stays inside the room\'s storage', async () => {
    for (const path of ESCAPES) {
      for (const body of [
        { spec: { schedule: '0 6 * * *', queue: { name: 'inbox', storage_write_path: path } } },
        { queue_name: 'inbox', schedule: '0 6 * * *', storage_write_path: path },
      ]) {
        const refused = await api('POST', `/rooms/${ROOM}/scheduled-tasks`, body);
        assert.equal(refused.status, 400, `${JSON.stringify(path)}: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.error.code, 'invalid_path');
        assert.match(refused.body.error.message, /^storage_write_path: /);
      }
    }
    const kept = await api('POST', `/rooms/${ROOM}/scheduled-tasks`, { spec: { schedule: '0 6 * * *', queue: { name: 'inbox', storage_write_path: 'reports//./daily.json' } } });
    assert.equal(kept.status, 201, JSON.stringify(kept.body));
    assert.equal(kept.body.storage_write_path, 'reports/daily.json', 'stored normalised');
    const changed = await api('PUT', `/scheduled-tasks/${kept.body.task_id}`, { storage_write_path: '../../projects/x' });
    assert.equal(changed.status, 400, 'an update is checked too');
  });

  test('a storage mount\'s subpath stays inside its storage, and the refusal never shows an obscure value', async () => {
    for (const kind of ['room', 'project']) {
      const refused = await api('POST', '/services', {
        version: 'v1', kind: 'Service', metadata: { name: `mount-${kind}` },
        container: { image: 'ghcr.io/example/echo:1', storage: { [kind]: [{ path: '/data', subpath: '../../projects/other' }] } },
      });
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.match(refused.body.error.message, new RegExp(`container\\.storage\\.${kind}\\[0\\]\\.subpath`));
    }
    const template = `
version: v1
kind: ServiceTemplate
metadata:
  name: mounted
variables:
  - name: where
    obscure: true
container:
  image: ghcr.io/example/echo:1
  storage:
    room:
      - path: /data
        subpath: "{{ where }}"
`;
    const hidden = await api('POST', '/services', { template, values: { where: '../../secret-hidden-value' } });
    assert.equal(hidden.status, 400);
    assert.ok(!JSON.stringify(hidden.body).includes('secret-hidden-value'), JSON.stringify(hidden.body));
    const fine = await api('POST', '/services', { template, values: { where: 'shared/data' } });
    assert.equal(fine.status, 201, JSON.stringify(fine.body));
  });

  test('an unreachable LLM upstream is named by its provider, never by its address', async () => {
    const answer = await call(service, 'POST', '/openai/v1/chat/completions', { token: tenant.apiKey, json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    assert.equal(answer.status, 502, JSON.stringify(answer.body));
    const text = JSON.stringify(answer.body);
    assert.match(answer.body.error.message, /OpenAI upstream could not be reached/);
    assert.ok(!text.includes('127.0.0.1') && !text.includes(String(closedPort)) && !text.includes('ECONNREFUSED'), text);
  });

  test('a session id another project reported is this project\'s own session, not a conflict', async () => {
    const id = crypto.randomUUID();
    const theirs = await api('POST', '/sessions', { room_name: 'their-room', session_id: id }, neighbour);
    assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
    const mine = await api('POST', '/sessions', { room_name: ROOM, session_id: id });
    assert.equal(mine.status, 201, JSON.stringify(mine.body));
    assert.equal(mine.body.id, id);
    // Each project's session is its own: reports, reads and ends do not cross.
    assert.equal((await api('POST', `/sessions/${id}/participants`, { events: [{ type: 'joined', participant_id: 'p1', role: 'user' }] })).status, 200);
    assert.equal((await api('POST', `/sessions/${id}/end`, {})).status, 200);
    const theirsNow = await api('GET', `/sessions/${id}`, undefined, neighbour);
    assert.equal(theirsNow.body.room_name, 'their-room');
    assert.equal(theirsNow.body.ended_at, null, 'their session still runs');
    assert.deepEqual((await api('GET', `/sessions/${id}/participants`, undefined, neighbour)).body.active, {});
    assert.equal((await api('GET', `/sessions/${id}`)).body.room_name, ROOM);
    // Within one project an id still names one session.
    const clash = await api('POST', '/sessions', { room_name: 'another-room', session_id: id });
    assert.equal(clash.status, 409);
  });

  test('the services filter matches the names callers see, not an obscure value behind them', async () => {
    const template = `
version: v1
kind: ServiceTemplate
metadata:
  name: "svc-{{ secret }}"
variables:
  - name: secret
    obscure: true
container:
  image: ghcr.io/example/echo:1
`;
    const created = await api('POST', '/services', { template, values: { secret: 'hunter2' } }, neighbour);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.metadata.name, 'svc-********');
    const total = async (filter: string) => (await api('GET', `/services?filter=${encodeURIComponent(filter)}`, undefined, neighbour)).body.total;
    assert.equal(await total('hunter2'), 0, 'the hidden value matches nothing');
    assert.equal(await total('svc-hunter'), 0);
    assert.equal(await total('svc-*'), 1, 'what the caller sees matches');
  });
});

// How many statements the hot paths send to the database, pinned on both engines: a change that
// adds a round trip to a read, or splits a write that emits its event into several statements, fails
// here rather than only in `npm run bench` (docs/contributing/performance-journal.md, "Statements built once").
//
// Counted by the engine (`Database.statementsSent`: the application's statements, not BEGIN/COMMIT).
// The job worker and the scheduler poll the same database in the background, so each path is run
// a few times and the fewest statements of a run is what it costs. A write whose event has a
// webhook cannot be counted this way: the worker claims the delivery as soon as it is committed,
// within the run.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const RUNS = 5;

forEachEngine('statements per request', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'statements');
  });
  after(() => service?.stop());

  const rooms = () => `/accounts/projects/${tenant.projectId}/rooms`;

  /** The fewest statements one run of `path` sent, over RUNS runs (after one to warm caches up). */
  async function statementsOf(path: (run: number) => Promise<void>): Promise<number> {
    await path(-1);
    let fewest = Infinity;
    for (let run = 0; run < RUNS; run += 1) {
      const before = service.ctx.database.statementsSent();
      await path(run);
      fewest = Math.min(fewest, service.ctx.database.statementsSent() - before);
    }
    return fewest;
  }

  const ok = (status: number, expected: number, body: unknown) => assert.equal(status, expected, JSON.stringify(body));

  test('a room read with an API key is one statement (the key is cached)', async () => {
    ok((await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: 'read-me' } })).status, 201, null);
    const sent = await statementsOf(async () => {
      const { status, body } = await call(service, 'GET', `${rooms()}/read-me`, { token: tenant.apiKey });
      ok(status, 200, body);
    });
    assert.equal(sent, 1);
  });

  test('creating a room is one statement: the room, its audit entry and the entry\'s event', async () => {
    const sent = await statementsOf(async (run) => {
      const { status, body } = await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: `created-${run + 1}` } });
      ok(status, 201, body);
    });
    assert.equal(sent, 1);
  });

  test('connecting to a room (a participant token) is one statement', async () => {
    ok((await call(service, 'POST', rooms(), { token: tenant.apiKey, json: { name: 'connect-me' } })).status, 201, null);
    const sent = await statementsOf(async () => {
      const { status, body } = await call(service, 'POST', `${rooms()}/connect-me/connect`, { token: tenant.apiKey, json: {} });
      ok(status, 200, body);
    });
    assert.equal(sent, 1);
  });
});

// Bad input over the whole route table: every POST/PUT route with a body schema answers malformed
// JSON, a JSON array and an oversize body with a 4xx in the error format, never a 5xx, whatever
// the route family. The walk is generic, so routes added later are covered too.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { apiRoutes, hasJsonBody, type RouteInfo } from '../support/routes.ts';
import { createFixtures, fingerprint, routePath, type FixtureValues } from '../support/walk.ts';

const OVERSIZE = 1024 * 1024 + 1024;

forEachEngine('bad input on every route', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let values: FixtureValues;
  let untouched: string;

  before(async () => {
    // No background work: every row change must come from a request.
    service = await startTestService(engine, {}, { workers: () => [] });
    tenant = await createTenant(service, 'bad-input');
    values = await createFixtures(service, tenant);
    untouched = await fingerprint(service);
  });
  after(() => service?.stop());

  /** The project's admin API key, or its admin user where a route takes no API keys. */
  const tokenFor = (route: RouteInfo) => {
    if (route.auth?.permission === 'public') return undefined;
    const accepted = route.auth?.credentials ?? ['api_key', 'user'];
    return accepted.includes('api_key') ? tenant.apiKey : tenant.userToken;
  };

  const cases: [string, string | Uint8Array, (status: number) => boolean][] = [
    ['malformed JSON', '{"name": "x",', (s) => s === 400],
    ['a JSON array', '[{"name": "x"}]', (s) => s >= 400 && s < 500],
    ['an oversize body', `{"name": "${'x'.repeat(OVERSIZE)}"}`, (s) => s === 413],
  ];

  for (const [what, body, expected] of cases) {
    test(`${what} is a 4xx in the error format on every JSON route`, async () => {
      const routes = apiRoutes(service).filter(hasJsonBody);
      assert.ok(routes.length > 10, 'routes with bodies were found');
      const failures: string[] = [];
      for (const route of routes) {
        const path = routePath(route, values);
        const r = await call(service, route.method, path, { token: tokenFor(route), body, headers: { 'content-type': 'application/json' } });
        const where = `${route.method} ${path}: ${r.status} ${typeof r.body === 'string' ? r.body.slice(0, 120) : JSON.stringify(r.body).slice(0, 200)}`;
        if (!expected(r.status)) failures.push(where);
        else if (typeof r.body?.error?.code !== 'string' || typeof r.body?.error?.message !== 'string') failures.push(`${where} (not the error format)`);
      }
      assert.deepEqual(failures, []);
    });
  }

  test('nothing was written by the bad requests', async () => {
    assert.equal(await fingerprint(service), untouched);
  });
});

// Tenant isolation over real resources, driven by the route table: every module's fixtures create
// one real resource of each kind in projects A and B (and a control project C), then every route
// that needs a credential is sent
//   (1) B's credentials on A's path with A's real ids,
//   (2) A's credentials on A's project path with B's real ids,
//   (3) no credential, and malformed ones,
// and must answer 404/403 (1, 2) or 401 (3) in the error format, leaving every row of the database
// as it was. C's own admin proves each route reaches its resources (so a 404 above is a refusal,
// not a broken fixture). A route whose parameters no fixture provides fails the walk: a new route is
// covered as soon as its module has fixtures for what it addresses.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { LOCAL_PAYMENTS_ENV } from '../support/payments.ts';
import { apiRoutes, pathParams, type RouteInfo } from '../support/routes.ts';
import { createFixtures, fingerprint, isProtocolError, missingParams, routePath, validBody, type FixtureValues } from '../support/walk.ts';

const MALFORMED: [string, Record<string, string>][] = [
  ['no credential', {}],
  ['an empty bearer', { authorization: 'Bearer ' }],
  ['a garbage bearer', { authorization: 'Bearer not-a-credential' }],
  ['a forged API key', { authorization: 'Bearer ma-00000000-0000-4000-8000-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
  ['a forged JWT', { authorization: 'Bearer eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vbmUifQ.eyJzdWIiOiJ4In0.c2ln' }],
  ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
];

forEachEngine('tenant isolation walk', (engine) => {
  let service: TestService;
  let a: Tenant;
  let b: Tenant;
  let c: Tenant;
  let aValues: FixtureValues;
  let bValues: FixtureValues;
  let routes: RouteInfo[];

  before(async () => {
    // No background work: every row change must come from a request.
    service = await startTestService(engine, LOCAL_PAYMENTS_ENV, { workers: () => [] });
    [a, b, c] = [await createTenant(service, 'walk-a'), await createTenant(service, 'walk-b'), await createTenant(service, 'walk-c')];
    aValues = await createFixtures(service, a);
    bValues = await createFixtures(service, b);
    routes = apiRoutes(service).filter((r) => r.auth?.permission !== 'public');
  });
  after(() => service?.stop());

  /** The tenant's admin credential that the route accepts: its API key, else its user token. */
  const credentialFor = (route: RouteInfo, tenant: Tenant) => ((route.auth?.credentials ?? ['api_key', 'user']).includes('api_key') ? tenant.apiKey : tenant.userToken);
  const credentials = (tenant: Tenant): [string, string][] => [['API key', tenant.apiKey], ['admin user', tenant.userToken]];
  const describe = (route: RouteInfo, path: string, r: { status: number; body: unknown }) => `${route.method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`;
  const isErrorBody = (path: string, contentType: string, body: any) => isProtocolError(path, contentType, body)
    || (typeof body?.error?.code === 'string' && typeof body?.error?.message === 'string');

  interface Attempt { path: string; options: Parameters<typeof call>[3]; expected: number[]; who: string }

  /** The database as the last route of a walk left it (set at each walk's start). */
  let known = '';

  /**
   * Sends each attempt on one route and checks its status and error format, then that no row of the
   * database changed: one fingerprint per route (a whole-database digest costs more than the request),
   * and one per request only when the route changed something, to name the request that did.
   */
  async function refused(route: RouteInfo, attempts: Attempt[], failures: string[]) {
    const send = (attempt: Attempt) => call(service, route.method, attempt.path, { ...validBody(route), ...attempt.options });
    for (const attempt of attempts) {
      const r = await send(attempt);
      if (!attempt.expected.includes(r.status)) failures.push(`${attempt.who}: ${describe(route, attempt.path, r)}`);
      else if (!isErrorBody(attempt.path, r.headers.get('content-type') ?? '', r.body)) failures.push(`${attempt.who}: ${describe(route, attempt.path, r)} (not the error format)`);
    }
    const after = await fingerprint(service);
    if (after === known) return;
    const writers = [];
    for (const attempt of attempts) {
      const state = await fingerprint(service);
      await send(attempt);
      if ((await fingerprint(service)) !== state) writers.push(attempt);
    }
    // A write that happens only once (the first request created something) is named by route.
    if (writers.length === 0) failures.push(`${route.method} ${route.url}: one of ${attempts.map((a) => a.who).join(', ')} changed the database`);
    for (const attempt of writers) failures.push(`${attempt.who}: ${route.method} ${attempt.path} changed the database`);
    known = await fingerprint(service);
  }

  test('every route that needs a credential has its parameters provided by fixtures', () => {
    assert.ok(routes.length > 30, 'the route table is populated');
    const unreachable = routes.filter((r) => missingParams(r, aValues).length > 0).map((r) => `${r.method} ${r.url} (module ${r.module}): no fixture provides ${missingParams(r, aValues).join(', ')}`);
    assert.deepEqual(unreachable, []);
  });

  test("(1) B's credentials on A's paths with A's real ids: 404 or 403, nothing changed", async () => {
    const failures: string[] = [];
    known = await fingerprint(service);
    for (const route of routes.filter((r) => pathParams(r.url).length > 0)) {
      await refused(route, credentials(b).map(([what, token]) => ({ path: routePath(route, aValues), options: { token }, expected: [403, 404], who: `B's ${what}` })), failures);
    }
    assert.deepEqual(failures, []);
  });

  test("(2) A's credentials with B's real ids under A's project: 404 or 403, nothing changed", async () => {
    const failures: string[] = [];
    // Routes that address an existing resource: by a path id, or by a query name they read or
    // delete (an upload to B's path name under A's project writes A's own file, as it should).
    const addressing = (r: RouteInfo) => pathParams(r.url).some((p) => p !== 'project_id')
      || ((r.schema?.querystring?.required ?? []).length > 0 && (r.method === 'GET' || r.method === 'DELETE'));
    const crossing = routes.filter(addressing);
    assert.ok(crossing.length > 20, 'routes addressing resources were found');
    known = await fingerprint(service);
    for (const route of crossing) {
      const mixed: FixtureValues = { byModule: bValues.byModule, any: { ...bValues.any, project_id: a.projectId } };
      await refused(route, credentials(a).map(([what, token]) => ({ path: routePath(route, mixed), options: { token }, expected: [403, 404], who: `A's ${what}` })), failures);
    }
    assert.deepEqual(failures, []);
  });

  test('(3) no credential or a malformed one: 401 on every route, nothing changed', async () => {
    const failures: string[] = [];
    known = await fingerprint(service);
    for (const route of routes) {
      await refused(route, MALFORMED.map(([what, headers]) => ({ path: routePath(route, aValues), options: { headers }, expected: [401], who: what })), failures);
    }
    assert.deepEqual(failures, []);
  });

  test("the walk reaches every route: C's admin gets past authentication and finds C's resources", async () => {
    const failures: string[] = [];
    for (const route of routes) {
      // Fresh resources per route: the previous route may have renamed or deleted them.
      const values = await createFixtures(service, c, route);
      const path = routePath(route, values);
      const r = await call(service, route.method, path, { token: credentialFor(route, c), ...validBody(route) });
      const notFound = r.status === 404 && pathParams(route.url).length > 1;
      // Changing second factors needs a recent sign-in, which no fixture credential is: refused
      // with that reason, the request got past authentication.
      const needsFreshSignin = r.status === 403 && (r.body as { error?: { code?: string } }).error?.code === 'reauthentication_required';
      if (needsFreshSignin) continue;
      if (r.status === 401 || r.status === 403 || notFound || r.status >= 500) failures.push(describe(route, path, r));
    }
    assert.deepEqual(failures, []);
  });

  test("A's and B's resources are intact and still theirs", async () => {
    for (const [tenant, values] of [[a, aValues], [b, bValues]] as const) {
      const project = `/accounts/projects/${tenant.projectId}`;
      assert.equal((await call(service, 'GET', `${project}/rooms/${values.any.room_name}`, { token: tenant.apiKey })).status, 200);
      assert.equal((await call(service, 'GET', `${project}/agents/${values.any.agent_name}`, { token: tenant.apiKey })).status, 200);
      assert.equal((await call(service, 'GET', `/projects/${tenant.projectId}/storage/download?path=${encodeURIComponent(values.any.path!)}`, { token: tenant.apiKey })).body, 'fixture');
      assert.equal((await call(service, 'GET', project, { token: tenant.userToken })).status, 200);
    }
  });
});

// Tenant isolation over the whole route table: project A's API key and A's admin user get 404 or 403
// on every route of project B, never a 2xx and never a 5xx. The walk is generic, so route families
// added later are covered without touching this file.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { apiRoutes, fillPath, pathParams, requiredQuery, type RouteInfo } from '../support/routes.ts';

forEachEngine('tenant isolation', (engine) => {
  let service: TestService;
  let a: Tenant;
  let b: Tenant;
  /** Ids and names of B's real resources, by path parameter name. */
  const bValues: Record<string, string> = {};
  const FILE = 'b-folder/b-file.txt';

  before(async () => {
    service = await startTestService(engine);
    a = await createTenant(service, 'iso-a');
    b = await createTenant(service, 'iso-b');
    const project = `/accounts/projects/${b.projectId}`;
    const member = await createUserWithToken(service, 'iso-b-member');
    assert.equal((await call(service, 'POST', `${project}/users`, { token: b.apiKey, json: { user_id: member.userId } })).status, 200);
    const room = await call(service, 'POST', `${project}/rooms`, { token: b.apiKey, json: { name: 'b-room' } });
    assert.equal(room.status, 201);
    const agent = await call(service, 'POST', `${project}/agents`, { token: b.apiKey, json: { configuration: { metadata: { name: 'b-agent' } } } });
    assert.equal(agent.status, 201);
    const key = await call(service, 'POST', `${project}/api-keys`, { token: b.apiKey, json: { name: 'b-key' } });
    assert.equal(key.status, 201);
    const file = await call(service, 'POST', `/projects/${b.projectId}/storage/upload?path=${FILE}`, { token: b.apiKey, body: 'b secret', headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(file.status, 200);
    Object.assign(bValues, {
      project_id: b.projectId,
      room_name: 'b-room',
      room_id: room.body.id,
      agent_name: 'b-agent',
      agent_id: agent.body.id,
      id: key.body.id,
      user_id: member.userId,
    });
  });
  after(() => service?.stop());

  /** Routes that need a credential and name a resource in their path. */
  const protectedRoutes = (): RouteInfo[] => apiRoutes(service).filter((r) => r.auth?.permission !== 'public' && pathParams(r.url).length > 0);

  const request = (route: RouteInfo, token: string) => {
    const path = fillPath(route, bValues) + requiredQuery(route, { path: FILE });
    const withBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
    const options = withBody
      ? route.schema?.body !== undefined ? { token, json: {} } : { token, body: 'x', headers: { 'content-type': 'application/octet-stream' } }
      : { token };
    return { path, response: call(service, route.method, path, options) };
  };

  test("every project-B route answers 404 or 403 to project A's credentials", async () => {
    const routes = protectedRoutes();
    assert.ok(routes.some((r) => r.url.includes(':project_id')), 'project routes were found');
    const failures: string[] = [];
    for (const route of routes) {
      for (const [who, token] of [["A's API key", a.apiKey], ["A's admin user", a.userToken]] as const) {
        const { path, response } = request(route, token);
        const r = await response;
        if (r.status !== 404 && r.status !== 403) failures.push(`${route.method} ${path} with ${who}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        else if (typeof r.body?.error?.code !== 'string') failures.push(`${route.method} ${path} with ${who}: no error body`);
      }
    }
    assert.deepEqual(failures, []);
  });

  test("project B's resources are untouched and reachable by B", async () => {
    const project = `/accounts/projects/${b.projectId}`;
    assert.equal((await call(service, 'GET', `${project}/rooms/b-room`, { token: b.apiKey })).status, 200);
    assert.equal((await call(service, 'GET', `${project}/agents/b-agent`, { token: b.apiKey })).status, 200);
    const keys = await call(service, 'GET', `${project}/api-keys`, { token: b.apiKey });
    assert.ok(keys.body.keys.some((k: { id: string }) => k.id === bValues.id));
    const users = await call(service, 'GET', `${project}/users`, { token: b.apiKey });
    assert.ok(users.body.users.some((u: { user_id: string }) => u.user_id === bValues.user_id));
    const file = await call(service, 'GET', `/projects/${b.projectId}/storage/download?path=${FILE}`, { token: b.apiKey });
    assert.equal(file.status, 200);
    assert.equal(file.body, 'b secret');
    // And A's credentials still work on A: the walk did not lock anybody out.
    assert.equal((await call(service, 'GET', `/accounts/projects/${a.projectId}`, { token: a.apiKey })).status, 200);
    assert.equal((await call(service, 'GET', `/accounts/projects/${a.projectId}`, { token: a.userToken })).status, 200);
  });

  test("A's resource ids under A's project do not reach B's resources", async () => {
    // B's resource ids used with A's own project id are missing there, not B's.
    const project = `/accounts/projects/${a.projectId}`;
    for (const [method, path, json] of [
      ['GET', `${project}/rooms/b-room`],
      ['PUT', `${project}/rooms/${bValues.room_id}`, { name: 'stolen' }],
      ['DELETE', `${project}/rooms/${bValues.room_id}`],
      ['GET', `${project}/agents/b-agent`],
      ['PUT', `${project}/agents/${bValues.agent_id}`, { configuration: { metadata: { name: 'stolen' } } }],
      ['DELETE', `${project}/agents/${bValues.agent_id}`],
      ['DELETE', `${project}/api-keys/${bValues.id}`],
      ['PUT', `${project}/users/${bValues.user_id}`, { roles: ['admin'] }],
      ['DELETE', `${project}/users/${bValues.user_id}`],
      ['POST', `${project}/rooms/b-room/connect`, {}],
      ['POST', `${project}/agents/b-agent/connect`, {}],
    ] as [string, string, unknown?][]) {
      const r = await call(service, method, path, { token: a.apiKey, json });
      assert.equal(r.status, 404, `${method} ${path}: ${JSON.stringify(r.body)}`);
    }
    assert.equal((await call(service, 'GET', `/projects/${a.projectId}/storage/download?path=${FILE}`, { token: a.apiKey })).status, 404);
    assert.equal((await call(service, 'GET', `/accounts/projects/${b.projectId}/rooms/b-room`, { token: b.apiKey })).body.name, 'b-room');
  });
});

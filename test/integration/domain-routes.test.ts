// Routes (domains to rooms) over raw HTTP on both engines: the short form and RouteSpecs, domains
// unique across the deployment, rooms that must exist, count/offset/filter lists, resolution for
// room servers, bad input.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('routes', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'routes');
  });
  after(() => service?.stop());

  const project = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}`;
  const unique = () => Math.random().toString(36).slice(2, 8);
  const newRoom = async (t: Tenant = tenant) => (await call(service, 'POST', `${project(t)}/rooms`, { token: t.apiKey, json: { name: `room-${unique()}` } })).body as { id: string; name: string };
  const routeRows = async () => Number([...rowsOf<{ n: unknown }>(await service.ctx.db.execute(sql`select count(*) as n from routes`))][0]!.n);
  const roomServerKey = async (t: Tenant) => (await call(service, 'POST', `${project(t)}/api-keys`, { token: t.apiKey, json: { name: 'room server', roles: ['room_server'] } })).body.value as string;

  test('the short form and a RouteSpec; get, list, replace, delete', async () => {
    const t = await createTenant(service, 'routes-crud');
    const [lobby, stage] = [await newRoom(t), await newRoom(t)];
    const short = await call(service, 'POST', `${project(t)}/routes`, { token: t.apiKey, json: { domain: `app-${unique()}.example.com`, room_name: lobby.name, port: 8080 } });
    assert.equal(short.status, 201, JSON.stringify(short.body));
    const domain = short.body.route.domain as string;
    assert.deepEqual(short.body.route, {
      domain, project_id: t.projectId, room_name: lobby.name, agent_name: null, port: 8080,
      spec: { version: 'v1', kind: 'Route', metadata: { name: domain, annotations: {} }, domain, backend: { room: { name: lobby.name }, agent: null }, paths: [{ path: '/', pathType: 'prefix', targetPort: 8080 }] },
      created_at: short.body.route.created_at, updated_at: short.body.route.updated_at,
    });

    const specDomain = `api-${unique()}.example.com`;
    const spec = { version: 'v1', kind: 'Route', metadata: { name: 'api', annotations: { team: 'a' } }, domain: specDomain, backend: { room: { name: stage.name } }, paths: [{ path: '/v1', pathType: 'prefix', stripPrefix: true, targetPort: 9000 }, { path: '/health', pathType: 'exact', targetContent: 'ok' }] };
    const full = await call(service, 'POST', `${project(t)}/routes`, { token: t.apiKey, json: { spec } });
    assert.equal(full.status, 201, JSON.stringify(full.body));
    assert.equal(full.body.route.port, 9000);
    assert.deepEqual(full.body.route.spec.paths, spec.paths);

    assert.deepEqual((await call(service, 'GET', `${project(t)}/routes/${domain}`, { token: t.apiKey })).body, short.body);
    const listed = await call(service, 'GET', `${project(t)}/routes`, { token: t.apiKey });
    assert.equal(listed.body.total, 2);
    assert.deepEqual(listed.body.routes.map((r: { domain: string }) => r.domain), [specDomain, domain].sort());
    const page = await call(service, 'GET', `${project(t)}/routes?count=1&offset=1`, { token: t.apiKey });
    assert.equal(page.body.routes.length, 1);
    assert.equal(page.body.total, 2);
    assert.deepEqual((await call(service, 'GET', `${project(t)}/routes?filter=API-`, { token: t.apiKey })).body.routes.map((r: { domain: string }) => r.domain), [specDomain]);
    assert.deepEqual((await call(service, 'GET', `${project(t)}/rooms/${stage.name}/routes`, { token: t.apiKey })).body.routes.map((r: { domain: string }) => r.domain), [specDomain]);

    // Replace: the short form moves the route to another room and port; a spec may not change the domain.
    const moved = await call(service, 'PUT', `${project(t)}/routes/${domain}`, { token: t.apiKey, json: { room_name: stage.name, port: 3000 } });
    assert.equal(moved.status, 200);
    assert.equal(moved.body.route.room_name, stage.name);
    assert.equal(moved.body.route.port, 3000);
    const renamed = await call(service, 'PUT', `${project(t)}/routes/${domain}`, { token: t.apiKey, json: { spec: { ...spec, domain: `other-${unique()}.example.com` } } });
    assert.equal(renamed.status, 400);
    assert.match(renamed.body.error.message, /spec\.domain must be/);

    // A renamed room keeps its routes, shown under its new name.
    await call(service, 'PUT', `${project(t)}/rooms/${stage.id}`, { token: t.apiKey, json: { name: `${stage.name}-2` } });
    const after = await call(service, 'GET', `${project(t)}/routes/${domain}`, { token: t.apiKey });
    assert.equal(after.body.route.room_name, `${stage.name}-2`);
    assert.equal(after.body.route.spec.backend.room.name, `${stage.name}-2`);

    assert.deepEqual((await call(service, 'DELETE', `${project(t)}/routes/${domain}`, { token: t.apiKey })).body, { ok: true });
    assert.equal((await call(service, 'GET', `${project(t)}/routes/${domain}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'DELETE', `${project(t)}/routes/${domain}`, { token: t.apiKey })).status, 404);
    // A deleted room takes its routes along.
    await call(service, 'DELETE', `${project(t)}/rooms/${stage.id}`, { token: t.apiKey });
    assert.equal((await call(service, 'GET', `${project(t)}/routes`, { token: t.apiKey })).body.total, 0);
  });

  test('a domain belongs to one project of the deployment; the room must exist in the project', async () => {
    const other = await createTenant(service, 'routes-other');
    const [ours, theirs] = [await newRoom(), await newRoom(other)];
    const domain = `shared-${unique()}.example.com`;
    assert.equal((await call(service, 'POST', `${project(other)}/routes`, { token: other.apiKey, json: { domain, room_name: theirs.name, port: 80 } })).status, 201);
    const taken = await call(service, 'POST', `${project()}/routes`, { token: tenant.apiKey, json: { domain, room_name: ours.name, port: 80 } });
    assert.equal(taken.status, 409);
    assert.match(taken.body.error.message, /already routed/);
    assert.ok(!taken.body.error.message.includes(other.projectId), 'the owner is not revealed');
    assert.equal((await call(service, 'GET', `${project()}/routes/${domain}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${project()}/routes/${domain}`, { token: tenant.apiKey, json: { room_name: ours.name, port: 81 } })).status, 404);
    assert.equal((await call(service, 'DELETE', `${project()}/routes/${domain}`, { token: tenant.apiKey })).status, 404);

    const theirRoom = await call(service, 'POST', `${project()}/routes`, { token: tenant.apiKey, json: { domain: `x-${unique()}.example.com`, room_name: theirs.name, port: 80 } });
    assert.equal(theirRoom.status, 400, "another project's room, named in the body, is not one of ours");
    assert.match(theirRoom.body.error.message, /body\.room_name: the project has no room named/);
    assert.equal((await call(service, 'POST', `${project()}/routes`, { token: tenant.apiKey, json: { domain: `x-${unique()}.example.com`, room_name: 'no-such-room', port: 80 } })).status, 400);

    // Concurrent claims of one domain: one wins.
    const racing = `race-${unique()}.example.com`;
    const claims = await Promise.all([[tenant, ours], [other, theirs], [tenant, ours]].map(([t, room]) =>
      call(service, 'POST', `${project(t as Tenant)}/routes`, { token: (t as Tenant).apiKey, json: { domain: racing, room_name: (room as { name: string }).name, port: 80 } })));
    assert.deepEqual(claims.map((c) => c.status).sort(), [201, 409, 409]);
  });

  test('bad domains, ports, specs and bodies are 4xx naming the problem, and write nothing', async () => {
    const room = await newRoom();
    const spec = (extra: Record<string, unknown>) => ({ spec: { domain: `s-${unique()}.example.com`, backend: { room: { name: room.name } }, paths: [{ path: '/', pathType: 'prefix', targetPort: 80 }], ...extra } });
    const before = await routeRows();
    const cases: [unknown, number, RegExp][] = [
      [{ domain: 'UPPER.example.com', room_name: room.name, port: 80 }, 400, /body\.domain/],
      [{ domain: 'bad_domain.example.com', room_name: room.name, port: 80 }, 400, /body\.domain/],
      [{ domain: '-lead.example.com', room_name: room.name, port: 80 }, 400, /body\.domain/],
      [{ domain: '10.0.0.1', room_name: room.name, port: 80 }, 400, /body\.domain/],
      [{ domain: `${'a'.repeat(64)}.example.com`, room_name: room.name, port: 80 }, 400, /body\.domain/],
      [{ domain: 'example..com', room_name: room.name, port: 80 }, 400, /body\.domain/],
      [{ domain: 'ok.example.com', room_name: room.name, port: 0 }, 400, /body\.port/],
      [{ domain: 'ok.example.com', room_name: room.name, port: 65536 }, 400, /body\.port/],
      [{ domain: 'ok.example.com', room_name: room.name, port: '80' }, 400, /body\.port/],
      [{ domain: 'ok.example.com', room_name: room.name }, 400, /body\.port is required/],
      [{ domain: 'ok.example.com', room_name: room.name, port: 80, colour: 'red' }, 400, /unknown property "colour"/],
      [spec({ backend: {} }), 400, /exactly one of room and agent/],
      [spec({ backend: { room: { name: room.name }, agent: { name: 'a' } } }), 400, /exactly one of room and agent/],
      [spec({ backend: { room: { name: room.name }, site: 'x' } }), 400, /body\.spec\.backend has unknown property "site"/],
      [spec({ paths: [] }), 400, /body\.spec\.paths/],
      [spec({ paths: [{ path: 'no-slash', pathType: 'prefix', targetPort: 80 }] }), 400, /body\.spec\.paths\.0\.path/],
      [spec({ paths: [{ path: '/', pathType: 'glob', targetPort: 80 }] }), 400, /pathType/],
      [spec({ paths: [{ path: '/', pathType: 'prefix' }] }), 400, /exactly one of targetPort and targetContent/],
      [spec({ paths: [{ path: '/', pathType: 'prefix', targetPort: 80 }, { path: '/', pathType: 'prefix', targetPort: 81 }] }), 400, /listed twice/],
      [spec({ backend: { agent: { name: 'no-such-agent' } } }), 400, /body\.spec\.backend\.agent\.name: the project has no managed agent named "no-such-agent"/],
      [spec({ backend: { room: { name: 'no-such-room' } } }), 400, /body\.spec\.backend\.room\.name: the project has no room named "no-such-room"/],
      ['{"domain":', 400, /JSON/],
    ];
    for (const [json, status, message] of cases) {
      const r = await call(service, 'POST', `${project()}/routes`, { token: tenant.apiKey, json });
      assert.equal(r.status, status, `${JSON.stringify(json).slice(0, 140)} → ${JSON.stringify(r.body).slice(0, 200)}`);
      assert.match(r.body.error.message, message, JSON.stringify(json).slice(0, 140));
    }
    assert.equal(await routeRows(), before, 'nothing was written');
    assert.equal((await call(service, 'GET', `${project()}/routes/NOT_A_DOMAIN`, { token: tenant.apiKey })).status, 400);
  });

  test('an agent backend', async () => {
    const agent = await call(service, 'POST', `${project()}/agents`, { token: tenant.apiKey, json: { configuration: { metadata: { name: `bot-${unique()}` } } } });
    const domain = `bot-${unique()}.example.com`;
    const r = await call(service, 'POST', `${project()}/routes`, { token: tenant.apiKey, json: { spec: { domain, backend: { agent: { name: agent.body.name } }, paths: [{ path: '/', pathType: 'prefix', targetPort: 80 }] } } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.route.agent_name, agent.body.name);
    assert.equal(r.body.route.room_name, null);
  });

  test('resolve: a room server of the owning project gets project, room and port; nobody else learns anything', async () => {
    const other = await createTenant(service, 'routes-resolve-other');
    const room = await newRoom();
    const domain = `live-${unique()}.example.com`;
    await call(service, 'POST', `${project()}/routes`, { token: tenant.apiKey, json: { domain, room_name: room.name, port: 7000 } });
    const ours = await roomServerKey(tenant);
    const resolved = await call(service, 'GET', `/api/routes/resolve?domain=${domain}`, { token: ours });
    assert.equal(resolved.status, 200);
    assert.deepEqual(resolved.body, { domain, project_id: tenant.projectId, room_id: room.id, room_name: room.name, agent_name: null, port: 7000, paths: [{ path: '/', pathType: 'prefix', targetPort: 7000 }] });

    const theirs = await roomServerKey(other);
    const elsewhere = await call(service, 'GET', `/api/routes/resolve?domain=${domain}`, { token: theirs });
    const nowhere = await call(service, 'GET', `/api/routes/resolve?domain=nobody-${unique()}.example.com`, { token: ours });
    assert.equal(elsewhere.status, 404);
    // Alike but for the request's own id.
    assert.deepEqual({ ...elsewhere.body.error, request_id: undefined }, { ...nowhere.body.error, request_id: undefined }, "another project's domain looks exactly like an unclaimed one");
    assert.equal((await call(service, 'GET', `/api/routes/resolve?domain=${domain}`, { token: other.userToken })).status, 404);
    const narrow = (await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: 'rooms only', roles: ['room_creator'] } })).body.value;
    assert.equal((await call(service, 'GET', `/api/routes/resolve?domain=${domain}`, { token: narrow })).status, 403);
    assert.equal((await call(service, 'GET', `/api/routes/resolve?domain=${domain}`)).status, 401);
    assert.equal((await call(service, 'GET', '/api/routes/resolve?domain=Bad_Domain', { token: ours })).status, 400);
    assert.equal((await call(service, 'GET', '/api/routes/resolve', { token: ours })).status, 400);
    // The room server's key manages no routes.
    assert.equal((await call(service, 'GET', `${project()}/routes`, { token: ours })).status, 403);
    assert.equal((await call(service, 'POST', `${project()}/routes`, { token: ours, json: { domain: `x-${unique()}.example.com`, room_name: room.name, port: 1 } })).status, 403);
  });
});

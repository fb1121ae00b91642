// Services, project-wide and room-scoped, over HTTP on both engines: ServiceSpecs and YAML templates,
// scoped name uniqueness, obscure values, bad input.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const spec = (name: string, extra: Record<string, unknown> = {}) => ({
  version: 'v1',
  kind: 'Service',
  metadata: { name, description: 'test service', annotations: { team: 'a' } },
  ports: [{ num: 8080, type: 'http', endpoints: [{ path: '/agent', meshagent: { identity: name } }] }],
  container: { image: 'ghcr.io/example/echo:1', environment: [{ name: 'MODE', value: 'fast' }], secrets: [] },
  ...extra,
});

const TEMPLATE = `
version: v1
kind: ServiceTemplate
metadata:
  name: "{{ name }}"
  description: A templated echo
variables:
  - name: name
  - name: port
    description: HTTP port
  - name: mode
    enum: [fast, slow]
    optional: true
  - name: token
    obscure: true
  - name: owner
    type: email
    optional: true
ports:
  - num: {{ port }}
    type: http
container:
  image: ghcr.io/example/echo:1
  command: "serve --port {{ port }}"
  environment:
    - name: MODE
      value: "{{ mode }}"
    - name: API_TOKEN
      value: "Bearer {{ token }}"
`;

forEachEngine('services', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'services');
  });
  after(() => service?.stop());

  const project = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}`;
  const newRoom = async (t: Tenant = tenant, name = `room-${Math.random().toString(36).slice(2, 8)}`) => {
    const r = await call(service, 'POST', `${project(t)}/rooms`, { token: t.apiKey, json: { name } });
    assert.equal(r.status, 201);
    return r.body as { id: string; name: string };
  };
  const query = async (text: string) => [...rowsOf<Record<string, unknown>>(await service.ctx.db.execute(sql.raw(text)))];
  const countRows = async () => Number((await query('select count(*) as n from services'))[0]!.n);

  test('project services: create answers the spec with its id; get, list, replace, delete', async () => {
    const t = await createTenant(service, 'svc-crud');
    const created = await call(service, 'POST', `${project(t)}/services`, { token: t.apiKey, json: spec('echo') });
    assert.equal(created.status, 201);
    assert.match(created.body.id, /^[0-9a-f-]{36}$/);
    const { id, ...rest } = created.body;
    assert.deepEqual(rest, spec('echo'));

    const got = await call(service, 'GET', `${project(t)}/services/${id}`, { token: t.apiKey });
    assert.deepEqual(got.body, created.body);
    const listed = await call(service, 'GET', `${project(t)}/services`, { token: t.apiKey });
    assert.deepEqual(listed.body, { services: [created.body], total: 1 });

    // An id in the body is ignored: the path names the service.
    const replaced = await call(service, 'PUT', `${project(t)}/services/${id}`, { token: t.apiKey, json: { ...spec('echo-2'), id: 'ignored', external: { url: 'https://echo.example.com' }, container: null } });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.body.id, id);
    assert.equal(replaced.body.metadata.name, 'echo-2');
    assert.deepEqual(replaced.body.external, { url: 'https://echo.example.com' });
    assert.equal((await call(service, 'GET', `${project(t)}/services/${id}`, { token: t.apiKey })).body.metadata.name, 'echo-2');

    assert.deepEqual((await call(service, 'DELETE', `${project(t)}/services/${id}`, { token: t.apiKey })).body, { ok: true });
    assert.equal((await call(service, 'GET', `${project(t)}/services/${id}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'DELETE', `${project(t)}/services/${id}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'PUT', `${project(t)}/services/${id}`, { token: t.apiKey, json: spec('ghost') })).status, 404);
  });

  test('a spec naming secrets, whose values its container is given, needs secret_inventory; nothing is written without it', async () => {
    const t = await createTenant(service, 'svc-secrets');
    const key = async (roles: string[]) => (await call(service, 'POST', `${project(t)}/api-keys`, { token: t.apiKey, json: { name: roles.join('+'), roles } })).body.value as string;
    const builder = await key(['service_creator', 'service_manager']);
    const reader = await key(['service_creator', 'secret_inventory']);
    const secret = (await call(service, 'POST', `${project(t)}/secrets`, { token: t.apiKey, json: { name: 'db', type: 'keys', data_base64: Buffer.from('hunter2').toString('base64') } })).body as { id: string };
    const naming = [
      spec('mounts', { container: { image: 'ghcr.io/example/echo:1', secrets: [secret.id] } }),
      spec('pulls', { container: { image: 'ghcr.io/example/echo:1', pull_secret: secret.id } }),
      spec('env', { container: { image: 'ghcr.io/example/echo:1', environment: [{ name: 'DB', secret: { id: secret.id } }] } }),
    ];
    const before = await countRows();
    for (const body of naming) {
      const refused = await call(service, 'POST', `${project(t)}/services`, { token: builder, json: body });
      assert.equal(refused.status, 403, `${body.metadata.name}: ${JSON.stringify(refused.body)}`);
      assert.match(refused.body.error.message, /secret_inventory/);
    }
    assert.equal(await countRows(), before, 'nothing was written');
    const plain = await call(service, 'POST', `${project(t)}/services`, { token: builder, json: spec('plain') });
    assert.equal(plain.status, 201, 'a spec naming no secret needs no more than service_creator');
    // Replacing a spec with one that names a secret is refused alike.
    assert.equal((await call(service, 'PUT', `${project(t)}/services/${plain.body.id}`, { token: builder, json: naming[0] })).status, 403);
    for (const body of naming) assert.equal((await call(service, 'POST', `${project(t)}/services`, { token: reader, json: body })).status, 201, body.metadata.name);
  });

  test('names are unique per scope: the project, and each room', async () => {
    const t = await createTenant(service, 'svc-names');
    const [roomA, roomB] = [await newRoom(t), await newRoom(t)];
    const inProject = await call(service, 'POST', `${project(t)}/services`, { token: t.apiKey, json: spec('shared') });
    assert.equal(inProject.status, 201);
    const again = await call(service, 'POST', `${project(t)}/services`, { token: t.apiKey, json: spec('shared') });
    assert.equal(again.status, 409);
    assert.match(again.body.error.message, /"shared" already exists in the project/);

    const inA = await call(service, 'POST', `${project(t)}/rooms/${roomA.name}/services`, { token: t.apiKey, json: spec('shared') });
    assert.equal(inA.status, 201, 'a room may reuse a project service name');
    assert.equal((await call(service, 'POST', `${project(t)}/rooms/${roomB.name}/services`, { token: t.apiKey, json: spec('shared') })).status, 201);
    const dupInA = await call(service, 'POST', `${project(t)}/rooms/${roomA.name}/services`, { token: t.apiKey, json: spec('shared') });
    assert.equal(dupInA.status, 409);
    assert.match(dupInA.body.error.message, /in room/);

    // Renaming onto a taken name is refused; the service keeps its name.
    const other = await call(service, 'POST', `${project(t)}/rooms/${roomA.name}/services`, { token: t.apiKey, json: spec('other') });
    const clash = await call(service, 'PUT', `${project(t)}/rooms/${roomA.name}/services/${other.body.id}`, { token: t.apiKey, json: spec('shared') });
    assert.equal(clash.status, 409);
    assert.equal((await call(service, 'GET', `${project(t)}/rooms/${roomA.name}/services/${other.body.id}`, { token: t.apiKey })).body.metadata.name, 'other');

    // Each path sees its own scope only.
    assert.equal((await call(service, 'GET', `${project(t)}/services/${inA.body.id}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'GET', `${project(t)}/rooms/${roomB.name}/services/${inA.body.id}`, { token: t.apiKey })).status, 404);
    assert.equal((await call(service, 'GET', `${project(t)}/rooms/${roomA.name}/services/${inProject.body.id}`, { token: t.apiKey })).status, 404);
    assert.deepEqual((await call(service, 'GET', `${project(t)}/rooms/${roomA.name}/services`, { token: t.apiKey })).body.services.map((s: { metadata: { name: string } }) => s.metadata.name), ['other', 'shared']);
    assert.equal((await call(service, 'GET', `${project(t)}/rooms/${roomA.name}/services?filter=OTH`, { token: t.apiKey })).body.total, 1);

    // Concurrent creates of one name: one wins, the others are clean 409s.
    const racers = await Promise.all([1, 2, 3].map(() => call(service, 'POST', `${project(t)}/services`, { token: t.apiKey, json: spec('racer') })));
    assert.deepEqual(racers.map((r) => r.status).sort(), [201, 409, 409]);

    // Deleting a room deletes its services, not the project's.
    const roomId = (await call(service, 'GET', `${project(t)}/rooms/${roomA.name}`, { token: t.apiKey })).body.id;
    await call(service, 'DELETE', `${project(t)}/rooms/${roomId}`, { token: t.apiKey });
    await newRoom(t, roomA.name);
    assert.equal((await call(service, 'GET', `${project(t)}/rooms/${roomA.name}/services`, { token: t.apiKey })).body.total, 0);
    assert.equal((await call(service, 'GET', `${project(t)}/services`, { token: t.apiKey })).body.total, 2);
  });

  test("a room must exist in the caller's project", async () => {
    const other = await createTenant(service, 'svc-other');
    const theirRoom = await newRoom(other);
    assert.equal((await call(service, 'POST', `${project()}/rooms/${theirRoom.name}/services`, { token: tenant.apiKey, json: spec('x') })).status, 404);
    assert.equal((await call(service, 'GET', `${project()}/rooms/no-such-room/services`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'GET', `${project(other)}/rooms/${theirRoom.name}/services`, { token: tenant.apiKey })).status, 404);
  });

  test('templates: variables checked and substituted; a whole placeholder takes its scalar type', async () => {
    const room = await newRoom();
    const created = await call(service, 'POST', `${project()}/rooms/${room.name}/services`, {
      token: tenant.apiKey,
      json: { template: TEMPLATE, values: { name: 'templated', port: '9090', mode: 'slow', token: 's3cr3t-value' } },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.kind, 'Service');
    assert.equal(created.body.variables, undefined);
    assert.equal(created.body.metadata.name, 'templated');
    assert.deepEqual(created.body.ports, [{ num: 9090, type: 'http' }]);
    assert.equal(created.body.container.command, 'serve --port 9090');
    assert.deepEqual(created.body.container.environment, [{ name: 'MODE', value: 'slow' }, { name: 'API_TOKEN', value: 'Bearer ********' }]);
    const got = await call(service, 'GET', `${project()}/rooms/${room.name}/services/${created.body.id}`, { token: tenant.apiKey });
    assert.deepEqual(got.body, created.body);
    assert.ok(!JSON.stringify((await call(service, 'GET', `${project()}/rooms/${room.name}/services`, { token: tenant.apiKey })).body).includes('s3cr3t-value'));
    const stored = JSON.stringify(await query(`select spec, spec_sealed from services where id = '${created.body.id}'`));
    assert.ok(!stored.includes('s3cr3t-value'), 'the obscure value is encrypted at rest');

    // An optional variable may be left out; a value never adds YAML structure.
    const injected = await call(service, 'POST', `${project()}/services`, {
      token: tenant.apiKey,
      json: { template: TEMPLATE, values: { name: 'injected', port: '8080', token: 'x\nports: []\n  - evil: true' } },
    });
    assert.equal(injected.status, 201, JSON.stringify(injected.body));
    assert.deepEqual(injected.body.ports, [{ num: 8080, type: 'http' }]);
    assert.equal(injected.body.container.environment[0].value, '');

    // Replacing with a plain spec drops the template's hidden values.
    const replaced = await call(service, 'PUT', `${project()}/rooms/${room.name}/services/${created.body.id}`, { token: tenant.apiKey, json: spec('templated') });
    assert.equal(replaced.status, 200);
    assert.deepEqual(await query(`select spec_sealed from services where id = '${created.body.id}'`), [{ spec_sealed: null }]);
  });

  test('templates: a bad template or value is a 400 naming it, and writes nothing', async () => {
    const values = { name: 'bad', port: '8080', token: 'hidden-value-123' };
    const cases: [unknown, RegExp][] = [
      [{ template: TEMPLATE, values: { ...values, colour: 'red' } }, /values\.colour: the template declares no variable "colour"/],
      [{ template: TEMPLATE, values: { name: 'bad', token: 'x' } }, /values\.port is required/],
      [{ template: TEMPLATE, values: { ...values, port: '' } }, /values\.port is required/],
      [{ template: TEMPLATE }, /values\.name is required/],
      [{ template: TEMPLATE, values: { ...values, mode: 'medium' } }, /values\.mode must be one of the template's choices: "fast", "slow"/],
      [{ template: TEMPLATE, values: { ...values, owner: 'not-an-email' } }, /values\.owner must be an email address/],
      [{ template: TEMPLATE, values: { ...values, port: '70000' } }, /template\.ports\.0\.num/],
      [{ template: TEMPLATE, values: { ...values, port: 'http' } }, /template\.ports\.0\.num/],
      [{ template: TEMPLATE.replace('{{ port }}\n', '{{ prot }}\n'), values }, /uses \{\{ prot \}\} but declares no variable "prot"/],
      [{ template: TEMPLATE.replace('description: A templated echo', 'descripton: typo'), values }, /template\.metadata has unknown property "descripton"/],
      [{ template: `${TEMPLATE}\n{% if x %}\n`, values }, /only \{\{ name \}\} placeholders are supported/],
      [{ template: 'version: v1\nkind: ServiceTemplate\nmetadata: {name: a}\nmetadata: {name: b}\n' }, /not valid YAML/],
      [{ template: 'version: v1\nkind: ServiceTemplate\nmetadata: [unclosed\n' }, /not valid YAML/],
      [{ template: '- just\n- a list\n' }, /must be a YAML mapping/],
      [{ template: 'version: v2\nkind: ServiceTemplate\nmetadata: {name: a}\n' }, /template\.version/],
      [{ template: 'version: v1\nkind: Service\nmetadata: {name: a}\n' }, /template\.kind/],
      [{ template: 'version: v1\nkind: ServiceTemplate\nmetadata: {name: a}\nvariables: [{name: a}, {name: a}]\n', values: { a: 'x' } }, /declares a variable twice/],
      [{ template: 'version: v1\nkind: ServiceTemplate\nmetadata: {name: a}\nvariables: [{name: "bad name"}]\n' }, /template\.variables\.0\.name/],
      [{ template: 'a: &a [1,2]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n' }, /alias|not valid YAML|template/i],
      [{ template: TEMPLATE, values: { ...values, mode: 5 } }, /body\.values\.mode/],
      [{ template: '' }, /body\.template/],
      [{ template: TEMPLATE, values, metadata: {} }, /body has unknown property "metadata"/],
    ];
    const before = await countRows();
    for (const [json, message] of cases) {
      const r = await call(service, 'POST', `${project()}/services`, { token: tenant.apiKey, json });
      assert.equal(r.status, 400, `${JSON.stringify(json).slice(0, 120)} → ${JSON.stringify(r.body)}`);
      assert.match(r.body.error.message, message, JSON.stringify(json).slice(0, 120));
      assert.ok(!r.body.error.message.includes('hidden-value-123'), 'an obscure value never appears in an error');
    }
    const repeated = `version: v1\nkind: ServiceTemplate\nmetadata: {name: big}\nvariables: [{name: v}]\ncontainer:\n  image: x\n  command: "${'{{ v }}'.repeat(2000)}"\n`;
    const big = await call(service, 'POST', `${project()}/services`, { token: tenant.apiKey, json: { template: repeated, values: { v: 'x'.repeat(4000) } } });
    assert.equal(big.status, 413);
    assert.equal(await countRows(), before, 'nothing was written');
  });

  test('specs: wrong types, unknown fields, oversize and malformed bodies are 4xx naming the problem, and write nothing', async () => {
    const cases: [unknown, number, RegExp][] = [
      ['{"version":', 400, /JSON/],
      ['[]', 400, /object/],
      [{}, 400, /body\.version is required/],
      [{ ...spec('x'), kind: 'Agent' }, 400, /body\.kind/],
      [{ ...spec('x'), metadata: {} }, 400, /body\.metadata\.name is required/],
      [{ ...spec('x'), metadata: { name: 'a/b' } }, 400, /body\.metadata\.name/],
      [{ ...spec('x'), metadata: { name: 'x'.repeat(201) } }, 400, /body\.metadata\.name/],
      [{ ...spec('x'), colour: 'red' }, 400, /body has unknown property "colour"/],
      [{ ...spec('x'), container: { image: 'x', imgae: 'typo' } }, 400, /body\.container has unknown property "imgae"/],
      [{ ...spec('x'), container: { command: 'run' } }, 400, /body\.container\.image is required/],
      [{ ...spec('x'), ports: [{ num: 0 }] }, 400, /body\.ports\.0\.num/],
      [{ ...spec('x'), ports: [{ num: 65536 }] }, 400, /body\.ports\.0\.num/],
      [{ ...spec('x'), ports: [{ num: '80' }] }, 400, /body\.ports\.0\.num/],
      [{ ...spec('x'), container: { image: 'x', environment: [{ name: 'BAD NAME', value: 'v' }] } }, 400, /environment\.0\.name/],
      [{ ...spec('x'), container: { image: 'x', environment: [{ name: 'A', value: 1 }] } }, 400, /environment\.0\.value/],
      [{ ...spec('x'), agents: 'many' }, 400, /body\.agents/],
      [{ ...spec('x'), metadata: { name: 'nul\u0000' } }, 400, /well-formed/],
      [{ ...spec('x'), container: { image: 'x', command: 'x'.repeat(30_000), environment: Array.from({ length: 10 }, (_v, i) => ({ name: `E${i}`, value: 'y'.repeat(30_000) })) } }, 413, /at most/],
      [{ ...spec('x'), container: { image: 'x', command: 'x'.repeat(1024 * 1024) } }, 413, /./],
    ];
    const before = await countRows();
    for (const [json, status, message] of cases) {
      const r = await call(service, 'POST', `${project()}/services`, { token: tenant.apiKey, json });
      assert.equal(r.status, status, `${JSON.stringify(json).slice(0, 120)} → ${JSON.stringify(r.body).slice(0, 200)}`);
      assert.match(r.body.error.message, message, JSON.stringify(json).slice(0, 120));
    }
    assert.equal(await countRows(), before, 'nothing was written');
    assert.equal((await call(service, 'GET', `${project()}/services/not-a-uuid`, { token: tenant.apiKey })).status, 400);
  });

  test('roles: inventory reads, creators create, managers change; members see nothing', async () => {
    const t = await createTenant(service, 'svc-roles');
    const made = await call(service, 'POST', `${project(t)}/services`, { token: t.apiKey, json: spec('roles') });
    const key = async (roles: string[]) => (await call(service, 'POST', `${project(t)}/api-keys`, { token: t.apiKey, json: { name: roles.join('+'), roles } })).body.value as string;
    const [inventory, creator, manager] = [await key(['service_inventory']), await key(['service_creator']), await key(['service_manager'])];
    const member = await createUserWithToken(service, 'svc-member');
    await call(service, 'POST', `${project(t)}/users`, { token: t.apiKey, json: { user_id: member.userId } });

    assert.equal((await call(service, 'GET', `${project(t)}/services`, { token: inventory })).status, 200);
    assert.equal((await call(service, 'POST', `${project(t)}/services`, { token: inventory, json: spec('no') })).status, 403);
    assert.equal((await call(service, 'POST', `${project(t)}/services`, { token: creator, json: spec('yes') })).status, 201);
    assert.equal((await call(service, 'DELETE', `${project(t)}/services/${made.body.id}`, { token: creator })).status, 403);
    assert.equal((await call(service, 'GET', `${project(t)}/services/${made.body.id}`, { token: manager })).status, 200, 'managers read what they change');
    assert.equal((await call(service, 'PUT', `${project(t)}/services/${made.body.id}`, { token: manager, json: spec('renamed') })).status, 200);
    assert.equal((await call(service, 'GET', `${project(t)}/services`, { token: member.token })).status, 403);
    assert.equal((await call(service, 'DELETE', `${project(t)}/services/${made.body.id}`, { token: manager })).status, 200);
  });
});

// Image repositories and their registry tokens, on both engines: names as the OCI distribution spec
// defines them, tokens verified with jose against the published JWKS, and no token for more than
// the caller holds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { fingerprint } from '../support/walk.ts';

const REGISTRY = 'registry.example.test';

interface RegistryClaims extends JWTPayload {
  access: { type: string; name: string; actions: string[] }[];
}

forEachEngine('repositories', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let verify: (token: string) => Promise<RegistryClaims>;

  before(async () => {
    service = await startTestService(engine, { ATRIUM_REGISTRY_SERVICE: REGISTRY });
    tenant = await createTenant(service, 'repos');
    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
    verify = async (token) => (await jwtVerify<RegistryClaims>(token, jwks, { issuer: service.url, audience: REGISTRY, algorithms: ['ES256'] })).payload;
  });
  after(() => service?.stop());

  const repositories = (t: Tenant = tenant) => `/accounts/projects/${t.projectId}/repositories`;
  const create = async (name: string, t: Tenant = tenant) => {
    const r = await call(service, 'POST', repositories(t), { token: t.apiKey, json: { name } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as { id: string; name: string; registry_name: string };
  };
  /** A project user holding exactly `roles`, with a personal token. */
  const memberWith = async (roles: string[]) => {
    const user = await createUserWithToken(service, 'repo-member');
    const added = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: user.userId, roles } });
    assert.equal(added.status, 200);
    return user;
  };

  test('create, fetch, list with filter and paging, rename keeps the id, delete', async () => {
    const created = await call(service, 'POST', repositories(), { token: tenant.apiKey, json: { name: 'web/front-end', description: 'The site', annotations: { team: 'web' } } });
    assert.equal(created.status, 201);
    const repo = created.body;
    assert.equal(repo.name, 'web/front-end');
    assert.equal(repo.project_id, tenant.projectId);
    assert.equal(repo.registry_name, `${tenant.projectId}/web/front-end`);
    assert.equal(repo.description, 'The site');
    assert.deepEqual(repo.annotations, { team: 'web' });
    assert.deepEqual((await call(service, 'GET', `${repositories()}/${repo.id}`, { token: tenant.apiKey })).body, repo);

    await create('web/back-end');
    await create('tools/ci');
    const filtered = await call(service, 'GET', `${repositories()}?filter=WEB/&count=1&offset=1`, { token: tenant.apiKey });
    assert.equal(filtered.status, 200);
    assert.equal(filtered.body.total, 2);
    assert.deepEqual(filtered.body.repositories.map((r: { name: string }) => r.name), ['web/front-end']);

    const renamed = await call(service, 'PUT', `${repositories()}/${repo.id}`, { token: tenant.apiKey, json: { name: 'web/site' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.id, repo.id);
    assert.equal(renamed.body.registry_name, `${tenant.projectId}/web/site`);
    assert.equal(renamed.body.description, '', 'PUT replaces: an absent description is empty');
    assert.equal((await call(service, 'PUT', `${repositories()}/${repo.id}`, { token: tenant.apiKey, json: { name: 'tools/ci' } })).status, 409);

    assert.deepEqual((await call(service, 'DELETE', `${repositories()}/${repo.id}`, { token: tenant.apiKey })).body, { ok: true });
    assert.equal((await call(service, 'GET', `${repositories()}/${repo.id}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'DELETE', `${repositories()}/${repo.id}`, { token: tenant.apiKey })).status, 404);
  });

  test('names follow the distribution spec and are unique in the project, not across projects', async () => {
    for (const name of ['a', 'a0/b1', 'my.app', 'my_app', 'my__app', 'my---app', 'x/y/z', 'a'.repeat(200)]) {
      assert.equal((await call(service, 'POST', repositories(), { token: tenant.apiKey, json: { name } })).status, 201, name);
    }
    const before = await fingerprint(service);
    for (const name of ['Upper', '/lead', 'trail/', 'a//b', 'a..b', 'a___b', '-a', 'a-', 'a_', '.a', 'a b', 'ü', 'a:tag', 'a@sha', '', 'a'.repeat(201)]) {
      const r = await call(service, 'POST', repositories(), { token: tenant.apiKey, json: { name } });
      assert.equal(r.status, 400, name);
      assert.equal(r.body.error.code, 'invalid_request');
    }
    for (const json of [{}, { name: 42 }, { name: 'ok', annotations: { a: 1 } }, { name: 'ok', description: 'x'.repeat(2001) }]) {
      assert.equal((await call(service, 'POST', repositories(), { token: tenant.apiKey, json })).status, 400, JSON.stringify(json));
    }
    assert.equal((await call(service, 'POST', repositories(), { token: tenant.apiKey, json: { name: 'a' } })).status, 409);
    assert.equal(await fingerprint(service), before, 'refused requests wrote nothing');
    // The Python SDK's body forbids extra fields; so does the server, naming the field.
    for (const [method, path] of [['POST', repositories()], ['PUT', `${repositories()}/${(await create('closed/body')).id}`]] as const) {
      const unknown = await call(service, method, path, { token: tenant.apiKey, json: { name: 'closed/other', colour: 'blue' } });
      assert.equal(unknown.status, 400, `${method}: ${JSON.stringify(unknown.body)}`);
      assert.match(unknown.body.error.message, /colour/);
    }

    const other = await createTenant(service, 'repos-other');
    const mine = await create('shared/name');
    const theirs = await create('shared/name', other);
    assert.notEqual(mine.registry_name, theirs.registry_name);
    assert.equal((await call(service, 'GET', `${repositories()}/${theirs.id}`, { token: tenant.apiKey })).status, 404);
    assert.equal((await call(service, 'POST', `${repositories()}/${theirs.id}/token`, { token: tenant.apiKey, json: {} })).status, 404);
  });

  test('a token is a registry JWT for this one repository, verified against the JWKS', async () => {
    const repo = await create('token/app');
    const started = Math.floor(Date.now() / 1000);
    const r = await call(service, 'POST', `${repositories()}/${repo.id}/token`, { token: tenant.apiKey, json: { actions: ['push', 'pull', 'push'], expires_in_seconds: 120 } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const header = decodeProtectedHeader(r.body.token);
    assert.equal(header.alg, 'ES256');
    assert.equal(typeof header.kid, 'string');
    const claims = await verify(r.body.token);
    assert.deepEqual(claims.access, [{ type: 'repository', name: `${tenant.projectId}/token/app`, actions: ['pull', 'push'] }]);
    assert.equal(claims.sub, 'api-key:repos key');
    assert.equal(typeof claims.jti, 'string');
    assert.ok(claims.exp! >= started + 120 && claims.exp! <= started + 122);
    assert.equal(claims.nbf, claims.iat);
    assert.equal(new Date(r.body.expires_at).getTime(), claims.exp! * 1000);

    const plain = await call(service, 'POST', `${repositories()}/${repo.id}/token`, { token: tenant.apiKey });
    assert.equal(plain.status, 200, 'no body at all asks for the defaults');
    const defaults = await verify(plain.body.token);
    assert.deepEqual(defaults.access[0]!.actions, ['pull']);
    assert.ok(defaults.exp! - defaults.iat! === 3600);
    // Another registry (audience) or issuer does not accept it.
    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
    await assert.rejects(jwtVerify(plain.body.token, jwks, { audience: 'another-registry' }));
    await assert.rejects(jwtVerify(plain.body.token, jwks, { issuer: 'https://elsewhere.example' }));
  });

  test('a token for one repository names only that one; another repository needs its own', async () => {
    const first = await create('scope/one');
    const second = await create('scope/two');
    const token = (await call(service, 'POST', `${repositories()}/${first.id}/token`, { token: tenant.apiKey, json: { actions: ['pull'] } })).body.token;
    const claims = await verify(token);
    assert.equal(claims.access.length, 1);
    assert.equal(claims.access[0]!.name, first.registry_name);
    assert.ok(!claims.access.some((a) => a.name === second.registry_name));
    // A registry checks the access entry against the repository it serves: a token for one never covers the other.
    assert.notEqual(first.registry_name, second.registry_name);
  });

  test('never more actions than the caller holds', async () => {
    const repo = await create('grants/app');
    const path = `${repositories()}/${repo.id}/token`;
    const asks = async (token: string, actions: string[]) => call(service, 'POST', path, { token, json: { actions } });

    const developer = await memberWith(['developer']);
    assert.equal((await asks(developer.token, ['pull', 'push'])).status, 200);

    const manager = await memberWith(['repository_manager']);
    assert.equal((await asks(manager.token, ['push'])).status, 200);

    const inventory = await memberWith(['repository_inventory']);
    assert.equal((await asks(inventory.token, ['pull'])).status, 200);
    const escalated = await asks(inventory.token, ['pull', 'push']);
    assert.equal(escalated.status, 403);
    assert.match(escalated.body.error.message, /push/);

    const member = await memberWith(['member']);
    const none = await asks(member.token, ['pull']);
    assert.equal(none.status, 404, "a repository the member cannot see is not there");
    assert.equal(none.body.error.code, 'not_found');

    // A narrowed API key is held to its roles too.
    const key = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/api-keys`, { token: tenant.apiKey, json: { name: 'puller', roles: ['repository_inventory'] } });
    assert.equal((await asks(key.body.value, ['pull'])).status, 200);
    assert.equal((await asks(key.body.value, ['push'])).status, 403);

    const outsider = await createUserWithToken(service, 'repo-outsider');
    assert.equal((await asks(outsider.token, ['pull'])).status, 404);
  });

  test('bad token requests are 400 and issue nothing', async () => {
    const repo = await create('bad/token');
    const path = `${repositories()}/${repo.id}/token`;
    for (const json of [{ actions: [] }, { actions: ['delete'] }, { actions: ['*'] }, { actions: 'pull' }, { expires_in_seconds: 0 }, { expires_in_seconds: -5 }, { expires_in_seconds: 86_401 }, { expires_in_seconds: 1.5 }, { expires_in_seconds: '60' }]) {
      const r = await call(service, 'POST', path, { token: tenant.apiKey, json });
      assert.equal(r.status, 400, JSON.stringify(json));
      assert.equal(typeof r.body.error.message, 'string');
    }
    assert.equal((await call(service, 'POST', `${repositories()}/not-a-uuid/token`, { token: tenant.apiKey, json: {} })).status, 400);
    assert.equal((await call(service, 'POST', `${repositories()}/00000000-0000-4000-8000-000000000000/token`, { token: tenant.apiKey, json: {} })).status, 404);
  });
});

// The auth hook (src/platform/http/auth.ts): how it finds the credential (verifiers that look alike
// are tried in turn, a credential may come in a header of its own, verified credentials are cached),
// how it finds the project (the path, a header, a credential bound to one project, or a lookup from
// the validated query), and the rules every route's declaration must follow.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import Fastify, { type FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { accessOf, Auth, callerOf, installAuth, validateAuthRequirement, type AuthRequirement, type CredentialVerifier, type Principal } from '../../src/platform/http/auth.ts';
import { forbidden, installErrorHandling } from '../../src/platform/http/errors.ts';

const PROJECT = '6f1c2a55-3b0e-4f53-9a49-2d7c8b1e0a01';
const OTHER = '0d4b3c2a-1e5f-4a6b-8c7d-9e0f1a2b3c4d';

function verifier(kind: Principal['kind'], accepts: string, principal: Partial<Principal> = {}): CredentialVerifier {
  return {
    kind,
    matches: (token) => token.startsWith('jwt.'),
    verify: async (token) => (token === accepts ? { kind, credentialId: token, name: token, ...principal } : undefined),
  };
}

async function appWith(auth: Auth) {
  const app = Fastify();
  installErrorHandling(app);
  installAuth(app, auth);
  app.get('/llm', { config: { auth: { permission: 'llm_proxy_user', credentials: ['api_key', 'user', 'participant'], project: { headers: ['service-project-id'] }, credentialHeaders: ['x-api-key'] } } }, async (request) => ({
    kind: callerOf(request).kind,
    project: accessOf(request).projectId,
  }));
  await app.ready();
  return app;
}

test('look-alike credentials: the first verifier that accepts the token decides', async () => {
  const auth = new Auth(0);
  auth.addVerifier(verifier('oauth', 'jwt.oauth'));
  auth.addVerifier(verifier('participant', 'jwt.participant'));
  assert.equal((await auth.authenticate('jwt.oauth'))?.kind, 'oauth');
  assert.equal((await auth.authenticate('jwt.participant'))?.kind, 'participant');
  assert.equal(await auth.authenticate('jwt.neither'), undefined);
});

test('a route without :project_id: the project from a header, or from a credential bound to one', async () => {
  const auth = new Auth(0);
  auth.setMemberships({ rolesOf: async (userId, projectId) => (userId === 'u1' && projectId === PROJECT ? ['developer'] : undefined), sharesProjectWithRole: async () => false });
  auth.addVerifier(verifier('participant', 'jwt.llm', { projectId: PROJECT, keyRoles: ['llm_proxy_user'] }));
  auth.addVerifier(verifier('participant', 'jwt.nollm', { projectId: PROJECT, keyRoles: [] }));
  auth.addVerifier(verifier('user', 'jwt.user', { userId: 'u1' }));
  const app = await appWith(auth);
  const get = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/llm', headers });

  const bound = await get({ authorization: 'Bearer jwt.llm' });
  assert.equal(bound.statusCode, 200);
  assert.deepEqual(bound.json(), { kind: 'participant', project: PROJECT });
  assert.equal((await get({ 'x-api-key': 'jwt.llm' })).statusCode, 200, 'the credential in a header of its own');
  assert.equal((await get({ authorization: 'Bearer jwt.llm', 'service-project-id': OTHER })).statusCode, 404, 'a bound credential names another project');
  assert.equal((await get({ authorization: 'Bearer jwt.nollm' })).statusCode, 403, 'grants without the role');

  const user = await get({ authorization: 'Bearer jwt.user', 'service-project-id': PROJECT });
  assert.deepEqual(user.json(), { kind: 'user', project: PROJECT });
  const missing = await get({ authorization: 'Bearer jwt.user' });
  assert.equal(missing.statusCode, 401);
  assert.match(missing.json().error.message, /service-project-id/);
  assert.equal((await get({ authorization: 'Bearer jwt.user', 'service-project-id': OTHER })).statusCode, 404, 'not a member there');
  assert.equal((await get({ authorization: 'Bearer jwt.user', 'service-project-id': 'not-a-uuid' })).statusCode, 404);
  await app.close();
});

// --- what mutation testing found untested (docs/architecture.md#mutation-testing) -----------------

/** Tokens spell their principal: `key:<project>:<roles>`, `user:<id>`, `oauth:<id>:<scopes>`, `part:<project>`. */
function spelled(token: string): Principal | undefined {
  const [kind, a = '', ...rest] = token.split(':');
  const b = rest.join(':');
  const project = a === 'p' ? PROJECT : OTHER;
  if (kind === 'key') return { kind: 'api_key', credentialId: token, projectId: project, keyRoles: b ? (b.split(',') as never) : undefined, name: token };
  if (kind === 'user') return { kind: 'user', credentialId: token, userId: a, name: token };
  if (kind === 'oauth') return { kind: 'oauth', credentialId: token, userId: a, scopes: new Set(b.split(',')), name: token };
  // An OAuth token of a client that belongs to a project: the project is still the caller's to name.
  if (kind === 'oauth-bound') return { kind: 'oauth', credentialId: token, userId: a, projectId: PROJECT, scopes: new Set(b.split(',')), name: token };
  if (kind === 'oauth-unscoped') return { kind: 'oauth', credentialId: token, userId: a, name: token };
  if (kind === 'part') return { kind: 'participant', credentialId: token, projectId: project, name: token };
  return undefined;
}

function counted(principalOf: (token: string) => Principal | undefined = spelled) {
  const calls: string[] = [];
  const verifier: CredentialVerifier = { kind: 'api_key', matches: () => true, verify: async (token) => { calls.push(token); return principalOf(token); } };
  return { verifier, calls };
}

const members = (table: Record<string, readonly string[]>) => {
  const asked: string[] = [];
  return {
    asked,
    memberships: {
      rolesOf: async (userId: string, projectId: string) => {
        // As the database would: a project id that is not a UUID is an error, not "no rows".
        if (!/^[0-9a-f-]{36}$/.test(projectId)) throw new Error(`invalid input syntax for type uuid: "${projectId}"`);
        asked.push(`${userId}:${projectId}`);
        return projectId === PROJECT ? table[userId] : undefined;
      },
      sharesProjectWithRole: async () => false,
    },
  };
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('verified credentials are cached for the cache time, failures never; no cache time means a millisecond', async () => {
  const cached = new Auth(60_000);
  const seen = counted();
  cached.addVerifier(seen.verifier);
  await cached.authenticate('user:u1');
  await pause(10);
  assert.equal((await cached.authenticate('user:u1'))?.userId, 'u1');
  assert.deepEqual(seen.calls, ['user:u1'], 'the second request is a cache hit');
  assert.equal(await cached.authenticate('nobody'), undefined);
  assert.equal(await cached.authenticate('nobody'), undefined);
  assert.deepEqual(seen.calls, ['user:u1', 'nobody', 'nobody'], 'an unknown token is asked about every time');

  const uncached = new Auth(0);
  const again = counted();
  uncached.addVerifier(again.verifier);
  await uncached.authenticate('user:u1');
  await pause(10);
  await uncached.authenticate('user:u1');
  assert.deepEqual(again.calls, ['user:u1', 'user:u1'], 'ATRIUM_AUTH_CACHE_SECONDS=0 re-verifies');
});

test('a verifier is asked only about tokens it recognises, and one that declines passes the token on', async () => {
  const auth = new Auth(0);
  const asked: string[] = [];
  auth.addVerifier({ kind: 'oauth', matches: (t) => t.startsWith('jwt.'), verify: async (t) => { asked.push(`oauth ${t}`); return undefined; } });
  auth.addVerifier({ kind: 'api_key', matches: (t) => t.startsWith('ma-'), verify: async (t) => { asked.push(`key ${t}`); return { kind: 'api_key', credentialId: t, projectId: PROJECT, name: t }; } });
  auth.addVerifier({ kind: 'participant', matches: (t) => t.startsWith('jwt.'), verify: async (t) => { asked.push(`participant ${t}`); return { kind: 'participant', credentialId: t, projectId: PROJECT, name: t }; } });
  assert.equal((await auth.authenticate('jwt.x'))?.kind, 'participant');
  assert.deepEqual(asked, ['oauth jwt.x', 'participant jwt.x'], 'the key verifier never saw a JWT');
});

test('revoking a credential evicts every cached token of it, and only those; membership changes evict one pair', async () => {
  const auth = new Auth(60_000);
  const ids: Record<string, string> = { t1: 'cred-a', t2: 'cred-a', t3: 'cred-b' };
  const seen = counted((token) => ({ kind: 'user', credentialId: ids[token]!, userId: 'u1', name: token }));
  auth.addVerifier(seen.verifier);
  for (const t of ['t1', 't2', 't3']) await auth.authenticate(t);
  auth.forgetCredential('cred-a');
  for (const t of ['t1', 't2', 't3']) await auth.authenticate(t);
  assert.deepEqual(seen.calls, ['t1', 't2', 't3', 't1', 't2'], 't3 (another credential) stayed cached');

  const { memberships, asked } = members({ u1: ['developer'] });
  auth.setMemberships(memberships);
  assert.equal(auth.memberships, memberships, 'the membership port is the one set');
  await auth.directRoles('u1', PROJECT);
  await pause(10);
  await auth.directRoles('u1', PROJECT);
  await auth.directRoles('u1', OTHER);
  auth.forgetMembership('u1', PROJECT);
  await auth.directRoles('u1', PROJECT);
  await auth.directRoles('u1', OTHER);
  assert.deepEqual(asked, [`u1:${PROJECT}`, `u1:${OTHER}`, `u1:${PROJECT}`], 'cached per user and project; forgetting one pair keeps the other');
});

test('project access: by the credential, the membership, or none (404, never 403)', async () => {
  const lonely = new Auth(0);
  await assert.rejects(lonely.projectAccess(spelled('user:u1')!, PROJECT), /Project not found/, 'no membership port: nobody is a member');
  assert.equal(await lonely.memberships.sharesProjectWithRole('u1', 'u2', ['admin']), false, 'and nobody shares a project');
  const auth = new Auth(0);
  auth.setMemberships(members({ u1: ['developer'] }).memberships);
  await assert.rejects(auth.projectAccess(spelled('user:u1')!, 'not-a-uuid'), /Project not found/);
  await assert.rejects(auth.projectAccess(spelled('key:o:')!, PROJECT), /Project not found/, "a key of another project");
  assert.ok((await auth.projectAccess(spelled('key:p:')!, PROJECT)).roles.has('admin'), 'a key without roles acts as an admin');
  assert.deepEqual([...(await auth.projectAccess(spelled('key:p:room_server')!, PROJECT)).roles].sort(), ['member', 'room_server']);
  assert.deepEqual([...(await auth.projectAccess(spelled('part:p')!, PROJECT)).roles], ['member'], 'a participant token without grants is only a member');
  assert.ok((await auth.projectAccess(spelled('user:u1')!, PROJECT)).roles.has('developer'));
  await assert.rejects(auth.projectAccess(spelled('user:u2')!, PROJECT), /Project not found/, 'not a member');
});

async function hookApp(auth: Auth) {
  const app = Fastify();
  installErrorHandling(app);
  installAuth(app, auth);
  const echo = async (request: FastifyRequest) => ({ kind: request.principal?.kind ?? null, project: request.access?.projectId ?? null, decorated: 'principal' in request && 'access' in request });
  app.get('/public', { config: { auth: { permission: 'public' } } }, echo);
  app.get('/bare', echo);
  app.get('/any', { config: { auth: { permission: 'authenticated', credentials: ['api_key', 'user', 'oauth'], oauthScope: 'profile:read' } } }, echo);
  app.get('/p/:project_id/admin', { config: { auth: { permission: 'admin' } } }, echo);
  app.get('/p/:project_id/oauth', { config: { auth: { permission: 'member', credentials: ['user', 'oauth'], oauthScope: 'profile:read' } } }, echo);
  app.get('/otlp', { config: { auth: { permission: 'room_server', credentials: ['api_key'], project: 'credential' } } }, echo);
  app.get('/llm', { config: { auth: { permission: 'member', credentials: ['api_key', 'user', 'oauth'], oauthScope: 'llm:invoke', project: { headers: ['service-project-id', 'x-project'] }, credentialHeaders: ['x-api-key'] } } }, echo);
  app.get('/lookup', { config: { auth: { permission: 'member', project: { what: 'Thing', resolve: async (request) => (request.query as { p?: string }).p } } } }, echo);
  await app.ready();
  return app;
}

test('the Authorization header: exactly "Bearer <token>", any case, spaces around; anything else is 401', async () => {
  const auth = new Auth(0);
  auth.addVerifier(counted().verifier);
  const app = await hookApp(auth);
  const status = async (authorization: string) => (await app.inject({ url: `/p/${PROJECT}/admin`, headers: { authorization } })).statusCode;
  assert.equal(await status('Bearer key:p:'), 200);
  assert.equal(await status('bearer key:p:'), 200);
  assert.equal(await status('Bearer   key:p:'), 200, 'several spaces after the scheme');
  assert.equal(await status('Bearer key:p:  '), 200, 'trailing spaces');
  for (const bad of ['Basic a2V5OnA6', 'xBearer key:p:', 'Bearer key:p: extra', 'Bearer', 'Bearerkey:p:']) assert.equal(await status(bad), 401, bad);
  const none = await app.inject({ url: `/p/${PROJECT}/admin` });
  assert.equal(none.statusCode, 401);
  const unknown = await app.inject({ url: `/p/${PROJECT}/admin`, headers: { authorization: 'Bearer nobody' } });
  assert.equal(unknown.statusCode, 401);
  assert.notEqual(none.json().error.message, unknown.json().error.message, 'a missing and an invalid credential are told apart');
  await app.close();
});

test('public routes never look at credentials; others check kind, OAuth scope, role, and set the request up', async () => {
  const auth = new Auth(0);
  const seen = counted();
  auth.addVerifier(seen.verifier);
  auth.setMemberships(members({ u1: ['developer'], u2: ['admin'] }).memberships);
  const app = await hookApp(auth);
  const get = (url: string, token?: string, headers: Record<string, string> = {}) => app.inject({ url, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });

  const pub = await get('/public', 'garbage');
  assert.deepEqual(pub.json(), { kind: null, project: null, decorated: true });
  assert.deepEqual(seen.calls, [], 'a public route never verifies');

  const refusedKind = await get(`/p/${PROJECT}/oauth`, 'part:p');
  assert.equal(refusedKind.statusCode, 403, 'a kind the route does not accept (though it would hold the role)');
  assert.match(refusedKind.json().error.message, /does not accept participant credentials/);
  assert.equal((await get(`/p/${PROJECT}/oauth`, 'oauth-unscoped:u1')).statusCode, 403, 'an OAuth token with no scopes at all');
  assert.deepEqual((await get('/bare')).json(), { kind: null, project: null, decorated: true }, 'a route declaring nothing is left alone');
  assert.equal((await get(`/p/${PROJECT}/oauth`, 'oauth:u1:rooms:connect')).statusCode, 403, 'an OAuth token without the scope');
  assert.deepEqual((await get(`/p/${PROJECT}/oauth`, 'oauth:u1:profile:read')).json(), { kind: 'oauth', project: PROJECT, decorated: true });
  assert.equal((await get(`/p/${PROJECT}/admin`, 'user:u1')).statusCode, 403, 'a developer is not an admin');
  assert.deepEqual((await get(`/p/${PROJECT}/admin`, 'user:u2')).json(), { kind: 'user', project: PROJECT, decorated: true });
  assert.equal((await get(`/p/${OTHER}/admin`, 'user:u2')).statusCode, 404, 'a project the caller is not in');
  assert.deepEqual((await get('/any', 'user:u1')).json(), { kind: 'user', project: null, decorated: true }, 'authenticated: no project');
  assert.equal((await get('/any', 'oauth:u1:email')).statusCode, 403, 'authenticated routes check the scope too');

  assert.deepEqual((await get('/otlp', 'key:p:room_server')).json(), { kind: 'api_key', project: PROJECT, decorated: true }, "the key's own project");
  assert.equal((await get('/otlp', 'key:p:member')).statusCode, 403, "the role is checked in the key's project");

  assert.deepEqual((await get('/llm', undefined, { 'x-api-key': '  key:p:  ' })).json(), { kind: 'api_key', project: PROJECT, decorated: true }, 'a credential header, trimmed');
  assert.equal((await get('/llm', undefined, { 'x-api-key': 'key:p: more' })).statusCode, 401, 'a credential header with a space inside');
  assert.equal((await get('/llm', 'nobody', { 'x-api-key': 'key:p:' })).statusCode, 401, 'Authorization, when sent, is the credential');
  assert.deepEqual((await get('/llm', 'oauth:u1:llm:invoke', { 'service-project-id': '', 'x-project': PROJECT })).json().project, PROJECT, 'an empty header is no header; the next one counts');
  const noCredential = await get('/llm');
  assert.equal(noCredential.statusCode, 401, 'no Authorization and no credential header');
  assert.equal(noCredential.json().error.message, (await get('/llm', undefined, { 'x-api-key': 'key:p: more' })).json().error.message, 'a credential header with a space inside is no credential (not an invalid one)');
  assert.equal((await get('/llm', 'oauth-bound:u1:llm:invoke')).statusCode, 401, "an OAuth token never supplies its client's project: the caller names it");
  const unnamed = await get('/llm', 'oauth:u1:llm:invoke');
  assert.equal(unnamed.statusCode, 401);
  assert.match(unnamed.json().error.message, /service-project-id/, 'the first header is the one named');
  assert.equal((await get('/llm', 'key:p:', { 'service-project-id': ` ${OTHER} ` })).statusCode, 404, 'a named project is checked against the key');
  assert.equal((await get('/llm', 'user:u1', { 'service-project-id': ` ${PROJECT} ` })).json().project, PROJECT, 'a named project is trimmed');
  assert.equal((await get('/llm', 'user:u1')).statusCode, 401, 'a user token names no project of its own');
  const twice = await app.inject({ url: '/llm', headers: { 'x-api-key': ['key:p:', 'key:o:'], 'service-project-id': [PROJECT, OTHER] } });
  assert.equal(twice.statusCode, 401, 'a credential header sent twice is no credential');
  const projectTwice = await app.inject({ url: '/llm', headers: { authorization: 'Bearer key:p:', 'service-project-id': [PROJECT, PROJECT] } });
  assert.equal(projectTwice.statusCode, 404, 'a project header sent twice (joined by the HTTP parser) names no project');
  await app.close();
});

test('a project lookup that fails for another reason than "not found" is not hidden as a 404', async () => {
  const auth = new Auth(0);
  auth.addVerifier(counted().verifier);
  auth.setMemberships({ rolesOf: async () => { throw new Error('database unavailable'); }, sharesProjectWithRole: async () => false });
  const app = await hookApp(auth);
  const broken = await app.inject({ url: `/lookup?p=${PROJECT}`, headers: { authorization: 'Bearer user:u1' } });
  assert.equal(broken.statusCode, 500);
  const refusing = new Auth(0);
  refusing.addVerifier(counted().verifier);
  let thrown: unknown;
  refusing.setMemberships({ rolesOf: async () => { throw thrown; }, sharesProjectWithRole: async () => false });
  const other = await hookApp(refusing);
  const lookup = () => other.inject({ url: `/lookup?p=${PROJECT}`, headers: { authorization: 'Bearer user:u1' } });
  thrown = forbidden('suspended');
  assert.equal((await lookup()).statusCode, 403, 'an API error other than "not found" keeps its status');
  thrown = Object.assign(new Error('driver failure'), { code: 'not_found' });
  assert.equal((await lookup()).statusCode, 500, 'only the catalogue\'s "not found" becomes the lookup\'s 404');
  await other.close();
  const fine = await app.inject({ url: `/lookup?p=${PROJECT}`, headers: { authorization: 'Bearer key:p:member' } });
  assert.deepEqual(fine.json(), { kind: 'api_key', project: PROJECT, decorated: true });
  assert.equal((await app.inject({ url: `/lookup?p=${OTHER}`, headers: { authorization: 'Bearer key:p:member' } })).statusCode, 404);
  await app.close();
});

// --- a project found from the query: an ingress resolving a domain. The caller must hold the role
// there, and a project the caller cannot see answers exactly like no project at all. ------------

const ours = randomUUID();
const theirs = randomUUID();
const OWNERS: Record<string, string> = { 'ours.example.com': ours, 'theirs.example.com': theirs };

function keyPrincipal(token: string): Principal | undefined {
  const [kind, project, ...roles] = token.split(':');
  if (kind !== 'key') return undefined;
  return { kind: 'api_key', credentialId: token, projectId: project === 'ours' ? ours : theirs, keyRoles: roles as never, name: token };
}

async function resolvingApp() {
  const auth = new Auth(0);
  auth.addVerifier({ kind: 'api_key', matches: (t) => t.startsWith('key:'), verify: async (t) => keyPrincipal(t) });
  const server = Fastify();
  installErrorHandling(server);
  installAuth(server, auth);
  let resolved = 0;
  server.get('/resolve', {
    config: { auth: { permission: 'room_server', project: { what: 'Route', resolve: async (request) => { resolved += 1; return OWNERS[(request.query as { domain: string }).domain]; } } } },
    schema: { querystring: Type.Object({ domain: Type.String({ maxLength: 20 }) }, { required: ['domain'] }) },
  }, async (request) => ({ project: request.access!.projectId }));
  await server.ready();
  return { server, resolved: () => resolved };
}

test('the project is found from the query; the role is checked there', async () => {
  const { server } = await resolvingApp();
  const get = (domain: string, token?: string) => server.inject({ url: `/resolve?domain=${domain}`, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const ok = await get('ours.example.com', 'key:ours:room_server');
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json(), { project: ours });
  assert.equal((await get('ours.example.com', 'key:ours:room_creator')).statusCode, 403, 'the role is needed in that project');
  const elsewhere = await get('theirs.example.com', 'key:ours:room_server');
  const nowhere = await get('none.example.com', 'key:ours:room_server');
  assert.equal(elsewhere.statusCode, 404);
  // Alike but for the request's own id.
  const { request_id: _a, ...elsewhereError } = elsewhere.json().error;
  const { request_id: _b, ...nowhereError } = nowhere.json().error;
  assert.deepEqual(elsewhereError, nowhereError, 'another project looks exactly like no project');
  assert.equal(nowhere.json().error.message, 'Route not found');
  assert.equal((await get('ours.example.com')).statusCode, 401);
  await server.close();
});

test('the query is validated before the project is looked up', async () => {
  const { server, resolved } = await resolvingApp();
  const tooLong = await server.inject({ url: `/resolve?domain=${'x'.repeat(50)}`, headers: { authorization: 'Bearer key:ours:room_server' } });
  assert.equal(tooLong.statusCode, 400);
  const unauthenticated = await server.inject({ url: '/resolve?domain=ours.example.com' });
  assert.equal(unauthenticated.statusCode, 401);
  assert.equal(resolved(), 0, 'neither bad input nor a missing credential reaches the lookup');
  await server.close();
});

test("a route's own preHandlers still run after its project lookup is added", async () => {
  const auth = new Auth(0);
  auth.addVerifier(counted().verifier);
  const app = Fastify();
  installErrorHandling(app);
  installAuth(app, auth);
  const ran: string[] = [];
  app.get('/lookup', {
    config: { auth: { permission: 'member', project: { what: 'Thing', resolve: async (request) => (request.query as { p?: string }).p } } },
    preHandler: async () => { ran.push('own'); },
  }, async (request) => ({ project: accessOf(request).projectId, ran }));
  await app.ready();
  assert.deepEqual((await app.inject({ url: `/lookup?p=${PROJECT}`, headers: { authorization: 'Bearer key:p:member' } })).json(), { project: PROJECT, ran: ['own'] });
  await app.close();
});

test('a role the member holds but may not use yet (a project policy withholds it) is refused with the policy\'s reason', async () => {
  const auth = new Auth(0);
  auth.addVerifier(counted().verifier);
  const refusal = forbidden('This project requires a second factor for the admin role');
  auth.setMemberships({
    rolesOf: async () => ['admin'],
    accessOf: async (userId) => (userId === 'u1' ? { roles: ['member'], withheld: { roles: ['admin'], refusal } } : undefined),
    sharesProjectWithRole: async () => false,
  });
  const app = await hookApp(auth);
  const withheld = await app.inject({ url: `/p/${PROJECT}/admin`, headers: { authorization: 'Bearer user:u1' } });
  assert.equal(withheld.statusCode, 403);
  assert.equal(withheld.json().error.message, refusal.message);
  assert.equal((await app.inject({ url: `/lookup?p=${PROJECT}`, headers: { authorization: 'Bearer user:u1' } })).statusCode, 200, 'the roles left are used as usual');
  await app.close();
});

// --- route declarations: the rules `validateAuthRequirement` holds every route to -------------------

test('a project role needs :project_id or a project header', () => {
  assert.match(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'member' } } }) ?? '', /no :project_id/);
  assert.equal(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'member', project: { headers: ['service-project-id'] } } } }), undefined);
});

const checkPost = (url: string, auth: AuthRequirement) => validateAuthRequirement({ method: 'POST', url, config: { auth } });

test('a project role needs :project_id, unless the project comes from an API key', () => {
  assert.equal(checkPost('/accounts/projects/:project_id/sessions', { permission: 'room_server' }), undefined);
  assert.match(checkPost('/otlp/v1/traces', { permission: 'room_server' })!, /no :project_id/);
  assert.equal(checkPost('/otlp/v1/traces', { permission: 'room_server', credentials: ['api_key'], project: 'credential' }), undefined);
});

test('only API keys name one project: other credentials cannot take the project from the credential', () => {
  assert.match(checkPost('/otlp/v1/traces', { permission: 'room_server', project: 'credential' })!, /only API keys/);
  assert.match(checkPost('/otlp/v1/traces', { permission: 'room_server', credentials: ['api_key', 'user'], project: 'credential' })!, /only API keys/);
  assert.match(checkPost('/accounts/projects/:project_id/x', { permission: 'room_server', credentials: ['api_key'], project: 'credential' })!, /and from the path/);
  assert.match(checkPost('/otlp/v1/traces', { permission: 'authenticated', credentials: ['api_key'], project: 'credential' })!, /no project role/);
});

test('a role needs a :project_id or a project lookup, and a lookup only goes with a role', () => {
  const project = { what: 'Route', resolve: async () => undefined };
  assert.match(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'room_server' } } }) ?? '', /no :project_id/);
  assert.equal(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'room_server', project } } }), undefined);
  assert.match(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'authenticated', project } } }) ?? '', /found from the request/);
  assert.match(validateAuthRequirement({ method: 'GET', url: '/p/:project_id', config: { auth: { permission: 'member', project } } }) ?? '', /found from the request/);
});

test('route declarations: every rule names the route', () => {
  const check = (url: string, config?: unknown) => validateAuthRequirement({ method: 'GET', url, ...(config === undefined ? {} : { config }) } as never);
  assert.match(check('/x') ?? '', /GET \/x declares no auth requirement/);
  assert.match(check('/x', {}) ?? '', /declares no auth requirement/);
  assert.match(check('/x', { auth: { permission: 'wizard' } }) ?? '', /unknown permission wizard/);
  assert.equal(check('/x', { auth: { permission: 'public' } }), undefined);
  assert.equal(check('/x', { auth: { permission: 'authenticated' } }), undefined);
  assert.match(check('/x', { auth: { permission: 'member', project: { headers: [] } } }) ?? '', /names no project header/);
  assert.match(check('/x', { auth: { permission: 'authenticated', project: { headers: ['h'] } } }) ?? '', /found from the request/);
  assert.match(check('/p/:project_id', { auth: { permission: 'member', project: { headers: ['h'] } } }) ?? '', /found from the request/);
  assert.match(check('/p/:project_id', { auth: { permission: 'member', credentials: ['oauth'] } }) ?? '', /exactly when an oauthScope/);
  assert.match(check('/p/:project_id', { auth: { permission: 'member', oauthScope: 'profile:read' } }) ?? '', /exactly when an oauthScope/);
  assert.match(check('/otlp', { auth: { permission: 'room_server', credentials: ['user'], project: 'credential' } }) ?? '', /only API keys/);
});

test('a handler asking for more than its route declares is told so: a caller of a public route, project access of an authenticated one', async () => {
  const auth = new Auth(0);
  auth.addVerifier(verifier('user', 'jwt.user', { userId: 'u1' }));
  const app = Fastify();
  installAuth(app, auth);
  let problem: unknown;
  const ask = (what: (request: FastifyRequest) => unknown) => async (request: FastifyRequest) => {
    try {
      return { got: Boolean(what(request)) };
    } catch (error) {
      problem = error;
      return { got: false };
    }
  };
  app.get('/open', { config: { auth: { permission: 'public' } } }, ask(callerOf));
  app.get('/me', { config: { auth: { permission: 'authenticated' } } }, ask((request) => [callerOf(request), accessOf(request)]));
  app.get('/me/only', { config: { auth: { permission: 'authenticated' } } }, ask(callerOf));
  app.get('/undeclared', ask(callerOf));
  await app.ready();
  await app.inject({ method: 'GET', url: '/undeclared' });
  assert.match(String(problem), /GET \/undeclared asks for its caller, but declares no credential \(permission none\)/, 'a route that declares nothing at all');
  await app.inject({ method: 'GET', url: '/open' });
  assert.match(String(problem), /GET \/open asks for its caller, but declares no credential \(permission public\)/);
  await app.inject({ method: 'GET', url: '/me', headers: { authorization: 'Bearer jwt.user' } });
  assert.match(String(problem), /GET \/me asks for its project access, but declares no project role \(permission authenticated\)/);
  assert.deepEqual((await app.inject({ method: 'GET', url: '/me/only', headers: { authorization: 'Bearer jwt.user' } })).json(), { got: true });
});

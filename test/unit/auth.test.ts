// The auth hook's ways of finding the credential and the project: verifiers that look alike are
// tried in turn, a credential may come in a header of its own, and a route without `:project_id`
// takes its project from a header or from a credential bound to one project.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Auth, installAuth, validateAuthRequirement, type CredentialVerifier, type Principal } from '../../src/platform/http/auth.ts';
import { installErrorHandling } from '../../src/platform/http/errors.ts';

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
    kind: request.principal!.kind,
    project: request.access!.projectId,
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

test('a project role needs :project_id or a project header', () => {
  assert.match(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'member' } } }) ?? '', /no :project_id/);
  assert.equal(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'member', project: { headers: ['service-project-id'] } } } }), undefined);
});

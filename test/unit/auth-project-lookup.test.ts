// Routes whose project is not in the path (an ingress resolving a domain): the project is found from
// the validated query, the caller must hold the role there, and a project the caller cannot see
// answers exactly like no project at all.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { Auth, installAuth, validateAuthRequirement, type Principal } from '../../src/platform/http/auth.ts';
import { installErrorHandling } from '../../src/platform/http/errors.ts';

const ours = randomUUID();
const theirs = randomUUID();
const OWNERS: Record<string, string> = { 'ours.example.com': ours, 'theirs.example.com': theirs };

function principal(token: string): Principal | undefined {
  const [kind, project, ...roles] = token.split(':');
  if (kind !== 'key') return undefined;
  return { kind: 'api_key', credentialId: token, projectId: project === 'ours' ? ours : theirs, keyRoles: roles as never, name: token };
}

async function app() {
  const auth = new Auth(0);
  auth.addVerifier({ kind: 'api_key', matches: (t) => t.startsWith('key:'), verify: async (t) => principal(t) });
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
  const { server } = await app();
  const get = (domain: string, token?: string) => server.inject({ url: `/resolve?domain=${domain}`, headers: token ? { authorization: `Bearer ${token}` } : {} });
  const ok = await get('ours.example.com', 'key:ours:room_server');
  assert.equal(ok.statusCode, 200);
  assert.deepEqual(ok.json(), { project: ours });
  assert.equal((await get('ours.example.com', 'key:ours:room_creator')).statusCode, 403, 'the role is needed in that project');
  const elsewhere = await get('theirs.example.com', 'key:ours:room_server');
  const nowhere = await get('none.example.com', 'key:ours:room_server');
  assert.equal(elsewhere.statusCode, 404);
  assert.deepEqual(elsewhere.json(), nowhere.json(), 'another project looks exactly like no project');
  assert.equal(nowhere.json().error.message, 'Route not found');
  assert.equal((await get('ours.example.com')).statusCode, 401);
  await server.close();
});

test('the query is validated before the project is looked up', async () => {
  const { server, resolved } = await app();
  const tooLong = await server.inject({ url: `/resolve?domain=${'x'.repeat(50)}`, headers: { authorization: 'Bearer key:ours:room_server' } });
  assert.equal(tooLong.statusCode, 400);
  const unauthenticated = await server.inject({ url: '/resolve?domain=ours.example.com' });
  assert.equal(unauthenticated.statusCode, 401);
  assert.equal(resolved(), 0, 'neither bad input nor a missing credential reaches the lookup');
  await server.close();
});

test('a role needs a :project_id or a project lookup, and a lookup only goes with a role', () => {
  const project = { what: 'Route', resolve: async () => undefined };
  assert.match(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'room_server' } } }) ?? '', /no :project_id/);
  assert.equal(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'room_server', project } } }), undefined);
  assert.match(validateAuthRequirement({ method: 'GET', url: '/x', config: { auth: { permission: 'authenticated', project } } }) ?? '', /found from the request/);
  assert.match(validateAuthRequirement({ method: 'GET', url: '/p/:project_id', config: { auth: { permission: 'member', project } } }) ?? '', /found from the request/);
});

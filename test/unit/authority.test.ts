// The one place that decides who may do what to one resource (src/platform/http/authority.ts): the
// declarations it refuses at boot, the order of its reasons (project role, the resource's own
// settings, the policy, a participant token's grants within its signer), the route step that answers
// 404 for what the caller may not see and 403 for what it may not do, and the record of each
// decision that a hook reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import type { Db } from '../../src/platform/db/engine.ts';
import { Auth, installAuth, type AuthRequirement, type CredentialVerifier, type Principal } from '../../src/platform/http/auth.ts';
import { Authority, decisionOf, installAuthority, narrowScope, resourceType, type Decision, type ResourceType } from '../../src/platform/http/authority.ts';
import { installErrorHandling } from '../../src/platform/http/errors.ts';
import { effectiveRoles } from '../../src/platform/http/roles.ts';

const PROJECT = '6f1c2a55-3b0e-4f53-9a49-2d7c8b1e0a01';
const NO_DB = {} as Db;

interface Doc { id: string; name: string; open: boolean }
const DOCS: Doc[] = [{ id: 'd1', name: 'plans', open: false }, { id: 'd2', name: 'notice', open: true }];

const doc = (overrides: Partial<ResourceType> = {}) => ({
  ...resourceType<Doc>({
    type: 'doc',
    label: 'Doc',
    actions: {
      see: { description: 'find it', roles: ['developer'] },
      edit: { description: 'change it', roles: ['admin'] },
    },
    find: { id: async (_db, _project, id) => DOCS.find((d) => d.id === id), name: async (_db, _project, name) => DOCS.find((d) => d.name === name) },
    policy: { readRole: 'developer', manageRole: 'admin', roles: { editor: ['see', 'edit'], list: ['see'] } },
    open: { description: 'everyone, for an open doc', actions: ['see'], of: (d) => (d.open ? { actions: ['see'] } : undefined) },
    grants: { doc: { description: 'a doc by id', actions: ['see', 'edit'], names: (d) => [d.id], by: 'id', every: '*' } },
    token: { grant: 'api', roles: [['admin', { write: {}, read: {}, llm: {} }]], policy: [['editor', { write: {}, read: {} }]] },
  }),
  ...overrides,
});

/** Bindings by subject key ("user:<id>", "service_account:<key id>") and resource id. */
function authorityWith(bindings: Record<string, Record<string, string[]>> = {}) {
  const authority = new Authority(NO_DB, [doc()], [{ grant: 'api', surface: 'llm', role: 'llm_proxy_user', oauthScope: 'llm:invoke', description: 'uses the LLM proxy' }]);
  const keyOf = (p: Principal) => (p.kind === 'api_key' ? `service_account:${p.credentialId}` : `user:${p.userId}`);
  authority.setPolicyBindings({
    rolesOn: async (principal, _access, _type, id) => new Set(bindings[keyOf(principal)]?.[id] ?? []),
    resourcesWithRoles: async (principal, _access, _type, roles) => Object.entries(bindings[keyOf(principal)] ?? {}).filter(([, held]) => held.some((r) => roles.includes(r))).map(([id]) => id),
  });
  return authority;
}

/** A server with the auth and authority steps, whose bearer token is the user's id and `people` their project roles. */
function appWith(authority: Authority, people: Record<string, string[]>) {
  const auth = new Auth(0);
  auth.setMemberships({ rolesOf: async (userId) => people[userId], sharesProjectWithRole: async () => false });
  auth.addVerifier({ kind: 'user', matches: () => true, verify: async (token) => ({ kind: 'user', credentialId: token, userId: token, name: token }) } satisfies CredentialVerifier);
  const app = Fastify();
  installErrorHandling(app);
  installAuth(app, auth);
  installAuthority(app, authority);
  return app;
}

const user = (id: string, roles: string[], extra: Partial<Principal> = {}) => ({
  principal: { kind: 'user', credentialId: `pat-${id}`, userId: id, name: id, ...extra } as Principal,
  access: { projectId: PROJECT, roles: effectiveRoles(roles) },
});

test('declarations that cannot be decided stop the boot', () => {
  const boot = (type: ResourceType) => () => new Authority(NO_DB, [type]);
  assert.throws(() => new Authority(NO_DB, [doc(), doc()]), /declared twice/);
  assert.throws(boot(doc({ type: 'Doc' })), /lower-case/);
  assert.throws(boot(doc({ actions: { edit: { description: 'x', roles: ['admin'] } } })), /declares `see`/);
  assert.throws(boot(doc({ actions: { see: { description: 'x', roles: ['owner' as never] } } })), /owner, which is not a project role/);
  assert.throws(boot(doc({ policy: { readRole: 'admin', manageRole: 'admin', roles: { editor: ['publish'] } } })), /editor allows publish/);
  assert.throws(boot(doc({ policy: { readRole: 'admin', manageRole: 'admin', roles: {} } })), /needs roles/);
  assert.throws(boot(doc({ open: { description: 'x', actions: ['publish'], of: () => undefined } })), /open publish/);
  assert.throws(boot(doc({ token: { grant: 'api', roles: [], policy: [['owner', {}]] } })), /names owner/);
  assert.throws(() => new Authority(NO_DB, [doc()], [{ grant: 'api', surface: 'llm', role: 'llm_user' as never, description: 'x' }]), /not a project role/);
  const withPolicy = new Authority(NO_DB, [doc()]).type('doc')!;
  assert.deepEqual(Object.keys(withPolicy.actions), ['see', 'edit', 'read_policy', 'change_policy'], 'a policy brings the actions that read and change it');
  assert.deepEqual(withPolicy.actions.read_policy!.roles, ['developer']);
});

test('a decision names its action and why: project role, own settings, policy role, or nothing', async () => {
  const authority = authorityWith({ 'user:alice': { d1: ['editor'] }, 'user:bob': { d1: ['list'] } });
  const type = authority.type('doc')!;
  const decide = (who: ReturnType<typeof user>, d: Doc, action: string) => authority.decide(authority.actor(who.principal, who.access), type, d, action);
  const [plans, notice] = DOCS as [Doc, Doc];

  const admin = await decide(user('root', ['admin']), plans, 'edit');
  assert.deepEqual([admin.action, admin.allowed, admin.via], ['doc.edit', true, { kind: 'role', role: 'admin' }]);
  assert.deepEqual((await decide(user('carol', ['member']), notice, 'see')).via, { kind: 'open' });
  assert.deepEqual((await decide(user('alice', ['member']), plans, 'edit')).via, { kind: 'policy', role: 'editor' });
  const bob = await decide(user('bob', ['member']), plans, 'edit');
  assert.equal(bob.allowed, false);
  assert.match(bob.reason, /doc\.edit needs the admin project role, or the editor role on the doc's policy, or a participant token's doc grant/);
  assert.equal((await decide(user('bob', ['member']), plans, 'see')).allowed, true, 'list lets its holder see');
  assert.equal((await decide(user('carol', ['member']), plans, 'see')).allowed, false);
});

test('a participant token does what its grants name, never more than the key that signed it', async () => {
  const authority = authorityWith({ 'service_account:key-1': { d1: ['list'] } });
  const type = authority.type('doc')!;
  const [plans] = DOCS as [Doc];
  const token = (grants: { name: string; scope: unknown }[], signer?: Principal) => authority.actor(
    { kind: 'participant', credentialId: 'jwt', projectId: PROJECT, keyRoles: [], grants, signer, name: 'guest' },
    { projectId: PROJECT, roles: effectiveRoles([]) },
  );
  const narrowKey: Principal = { kind: 'api_key', credentialId: 'key-1', projectId: PROJECT, keyRoles: ['member'], name: 'narrow' };
  const adminKey: Principal = { kind: 'api_key', credentialId: 'key-2', projectId: PROJECT, keyRoles: undefined, name: 'admin' };

  assert.equal((await authority.decide(token([{ name: 'doc', scope: 'd1' }]), type, plans, 'edit')).allowed, true, 'minted by the service: its grant');
  assert.equal((await authority.decide(token([{ name: 'doc', scope: 'd2' }]), type, plans, 'edit')).allowed, false, 'a grant of another doc');
  assert.equal((await authority.decide(token([{ name: 'doc', scope: '*' }], adminKey), type, plans, 'edit')).allowed, true, 'every doc, signed by a key that may');
  const beyond = await authority.decide(token([{ name: 'doc', scope: '*' }], narrowKey), type, plans, 'edit');
  assert.equal(beyond.allowed, false, 'signed by a key that may only see it');
  assert.match(beyond.reason, /beyond its signing key/);
  assert.equal((await authority.decide(token([{ name: 'doc', scope: 'd1' }], narrowKey), type, plans, 'see')).allowed, true, 'what the key may do too');
});

test('what a token may carry: the strongest way the caller holds the resource, and role-bound surfaces only for their holders', async () => {
  const authority = authorityWith({ 'user:alice': { d1: ['editor'] } });
  const type = authority.type('doc')!;
  const [plans] = DOCS as [Doc];
  const scope = (who: ReturnType<typeof user>) => authority.tokenScope(authority.actor(who.principal, who.access), type, plans);
  assert.deepEqual(await scope(user('root', ['admin'])), { write: {}, read: {}, llm: {} });
  assert.deepEqual(await scope(user('alice', ['member'])), { write: {}, read: {} });
  assert.equal(await scope(user('carol', ['member'])), undefined);
  const oauth = user('root', ['admin'], { kind: 'oauth', scopes: new Set(['rooms:connect']) });
  assert.deepEqual(await scope(oauth), { write: {}, read: {} }, 'an OAuth token without llm:invoke: no llm');
  assert.deepEqual(narrowScope({ read: {}, write: { paths: ['a'] }, admin: {} }, { read: { only: true }, write: {} }), { read: { only: true }, write: { paths: ['a'] } });
  assert.deepEqual(await authority.visible(authority.actor(user('alice', ['member']).principal, user('alice', ['member']).access), type), ['d1']);
});

test('the route step: 404 for what the caller may not see, 403 for what it may not do, and a record a hook reads', async () => {
  const authority = authorityWith({ 'user:alice': { d1: ['list'] } });
  const app = appWith(authority, { root: ['admin'], alice: ['member'], carol: ['member'] });
  const decisions: (Decision | undefined)[] = [];
  app.addHook('onResponse', (request, _reply, done) => {
    decisions.push(decisionOf(request));
    done();
  });
  app.put('/projects/:project_id/docs/:doc_id', {
    schema: { params: Type.Object({ project_id: Type.String(), doc_id: Type.String() }) },
    config: { auth: { permission: 'member', resource: { type: 'doc', param: 'doc_id', action: 'edit' } } },
  }, async (request) => ({ doc: (await authority.resourceOf<Doc>(request)).name }));
  await app.ready();
  const edit = (who: string, docId: string) => app.inject({ method: 'PUT', url: `/projects/${PROJECT}/docs/${docId}`, headers: { authorization: `Bearer ${who}` } });

  const root = await edit('root', 'd1');
  assert.deepEqual([root.statusCode, root.json()], [200, { doc: 'plans' }], 'the handler finds the doc the project role did not need');
  assert.deepEqual(decisions.at(-1), { action: 'doc.edit', resource: { type: 'doc', key: 'd1' }, allowed: true, reason: 'the project role admin', via: { kind: 'role', role: 'admin' } });
  assert.equal((await edit('root', 'nope')).statusCode, 404);

  const alice = await edit('alice', 'd1');
  assert.equal(alice.statusCode, 403, 'she sees it (list), and may not edit it');
  assert.match(alice.json().error.message, /needs the admin project role, or the editor role on the doc's policy/);
  assert.deepEqual([decisions.at(-1)?.action, decisions.at(-1)?.allowed, decisions.at(-1)?.resource], ['doc.edit', false, { type: 'doc', id: 'd1', name: 'plans' }]);

  const carol = await edit('carol', 'd1');
  assert.equal(carol.statusCode, 404, 'she may not see it: not found, like a missing doc');
  assert.deepEqual(carol.json().error.code, 'not_found');
  assert.match(decisions.at(-1)!.reason, /cannot see it/);
  assert.equal((await edit('carol', 'd2')).statusCode, 403, 'an open doc she sees');

  // Refused before the step (no credential, a project it is not in): recorded all the same.
  assert.equal((await app.inject({ method: 'PUT', url: `/projects/${PROJECT}/docs/d1` })).statusCode, 401);
  assert.deepEqual(decisions.at(-1), { action: 'doc.edit', resource: { type: 'doc', key: 'd1' }, allowed: false, reason: 'A valid bearer credential is required' });
  assert.equal((await edit('dave', 'd1')).statusCode, 404);
  assert.deepEqual([decisions.at(-1)?.allowed, decisions.at(-1)?.reason], [false, 'Project not found']);
});

test('within: a route that binds its resource to another requires the declared action there; one that declares none cannot ask', async () => {
  const authority = authorityWith({ 'user:alice': { d1: ['editor'] } });
  const app = appWith(authority, { root: ['admin'], alice: ['member'] });
  const Params = Type.Object({ project_id: Type.String() });
  const Body = Type.Object({ doc: Type.String() });
  // A note pinned to a doc: the handler finds the doc the body names, then asks.
  app.post('/projects/:project_id/notes', {
    schema: { params: Params, body: Body },
    config: { auth: { permission: 'member', within: { type: 'doc', action: 'edit' } } },
  }, async (request) => {
    const target = DOCS.find((d) => d.name === (request.body as { doc: string }).doc)!;
    await authority.requireWithin(authority.actorOf(request), target);
    return { pinned: target.name };
  });
  app.post('/projects/:project_id/loose', { schema: { params: Params, body: Body }, config: { auth: { permission: 'member' } } }, async (request) => {
    await authority.requireWithin(authority.actorOf(request), DOCS[0]!);
    return {};
  });
  await app.ready();
  const pin = (who: string, doc: string, path = 'notes') => app.inject({ method: 'POST', url: `/projects/${PROJECT}/${path}`, headers: { authorization: `Bearer ${who}` }, payload: { doc } });

  assert.deepEqual([(await pin('alice', 'plans')).statusCode, (await pin('alice', 'plans')).json()], [200, { pinned: 'plans' }], 'her policy role on the doc');
  const refused = await pin('alice', 'notice');
  assert.equal(refused.statusCode, 403, 'she sees the open doc, and may not edit it');
  assert.match(refused.json().error.message, /needs the admin project role, or the editor role on the doc's policy/);
  assert.equal((await pin('root', 'notice')).statusCode, 200, 'the project role');
  assert.equal((await pin('root', 'plans', 'loose')).statusCode, 500, 'a route that declares nothing cannot require it');

  assert.equal(authority.requiresWithin({ type: 'doc', action: 'edit' }), '`doc.edit` on its doc: the admin project role, or the editor role on the doc\'s policy');
  const route = (auth: AuthRequirement) => ({ method: 'POST', url: '/projects/:project_id/notes', config: { auth } });
  assert.equal(authority.check(route({ permission: 'member', within: { type: 'doc', action: 'edit' } })), undefined);
  assert.match(authority.check(route({ permission: 'member', within: { type: 'doc', action: 'fly' } }))!, /within names doc\.fly, which no module declares/);
  assert.match(authority.check(route({ permission: 'member', within: { type: 'page', action: 'edit' } }))!, /within names page\.edit/);
  assert.match(authority.check(route({ permission: 'public', within: { type: 'doc', action: 'edit' } }))!, /within is for a route with a project role/);
});

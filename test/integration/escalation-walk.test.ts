// Authority inside one project, driven by the route table and the modules' resource types: every
// kind of credential — the admin key, a key with each project role, the admin user and a member, a
// member with each role of each resource policy, an OAuth token per scope, participant tokens and a
// share — is sent to every route that names an action on a resource (`auth.resource`), and
//   (1) whether it was let through equals the table written out below, action by action (not read
//       from the code's tables: a wrong entry there fails here); a refused request changed nothing;
//   (2) what the rights answer says equals the same table;
//   (3) no token a credential signs or mints (participant tokens signed with an API key, connect,
//       minted tokens, shares, API keys) goes further than the credential itself at any route that
//       accepts participant tokens, nor gets more vouched for by validate than its signer connects with.
// A new resource type's actions are walked as soon as their routes have fixtures and their rows are
// written here; an action without a row fails the walk.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import * as oidc from 'openid-client';
import type * as Sdk from '@meshagent/meshagent';
import type { ResourceType } from '../../src/platform/http/authority.ts';
import { PROJECT_ROLES } from '../../src/platform/http/roles.ts';
import { FULL_SCOPE } from '../../src/modules/participant-tokens/service.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/llm-upstream.ts';
import { EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, insertClient, signInAndConsent } from '../support/oauth.ts';
import { LOCAL_PAYMENTS_ENV } from '../support/payments.ts';
import { apiRoutes, fillPath, type RouteInfo } from '../support/routes.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Response, type Tenant, type TestService } from '../support/service.ts';
import { createFixtures, fingerprint, paramValue, validBody, type FixtureValues } from '../support/walk.ts';

const { ParticipantToken, ParticipantGrant } = createRequire(import.meta.url)('@meshagent/meshagent') as typeof Sdk;

/** The OAuth scopes that routes name (each token is the admin user's, so that only its scope limits it). */
const OAUTH_SCOPES = ['profile:read', 'rooms:connect', 'llm:invoke'];
/** Policy roles a member is bound with, one member each, on the walk's resource of the type. */
const BOUND: Record<string, readonly string[]> = {
  room: ['admin', 'developer', 'operator', 'viewer', 'list'],
  repository: ['admin', 'developer', 'operator', 'viewer', 'list'],
  feed: ['manager', 'publisher', 'subscriber', 'reader', 'list'],
};

// ---- the expected table --------------------------------------------------------------------------

const ADMINS = ['admin key', 'key:admin', 'admin user'];
const DEVELOPERS = [...ADMINS, 'key:developer'];
const KEYS = ['admin key', ...PROJECT_ROLES.map((role) => `key:${role}`)];
const BOUND_MEMBERS = Object.entries(BOUND).flatMap(([type, roles]) => roles.map((role) => `${type}:${role}`));
/** Every credential that acts as someone of the project: keys and users. */
const MEMBERS = [...KEYS, 'admin user', 'member', ...BOUND_MEMBERS];
const on = (type: string, roles: readonly string[]) => roles.map((role) => `${type}:${role}`);

/** Who may take each action on the walk's resources (a private feed, a room nobody is named in). */
const EXPECTED: Record<string, readonly string[]> = {
  'room.see': MEMBERS,
  // Every API key joins with the participant defaults; users need a role (or the room's permissions).
  'room.connect': [...KEYS, 'admin user', 'oauth:rooms:connect', ...on('room', ['admin', 'developer', 'operator', 'viewer'])],
  'room.read_files': [...KEYS, 'admin user', ...on('room', ['admin', 'developer', 'operator', 'viewer'])],
  'room.update': DEVELOPERS,
  'room.delete': DEVELOPERS,
  'room.read_policy': DEVELOPERS,
  'room.change_policy': DEVELOPERS,
  'agent.see': MEMBERS,
  'agent.connect': MEMBERS,
  'agent.update': DEVELOPERS,
  'agent.delete': DEVELOPERS,
  'repository.see': [...DEVELOPERS, 'key:repository_inventory', 'key:repository_manager', ...on('repository', ['admin', 'developer', 'operator', 'viewer', 'list'])],
  'repository.pull': [...DEVELOPERS, 'key:repository_inventory', 'key:repository_manager', ...on('repository', ['admin', 'developer', 'operator', 'viewer'])],
  'repository.push': [...DEVELOPERS, 'key:repository_manager', ...on('repository', ['admin', 'developer'])],
  'repository.update': [...DEVELOPERS, 'key:repository_manager'],
  'repository.delete': [...DEVELOPERS, 'key:repository_manager'],
  'repository.read_policy': [...DEVELOPERS, 'key:repository_inventory', 'key:repository_manager'],
  'repository.change_policy': [...DEVELOPERS, 'key:repository_manager'],
  // A private feed: project roles of subscriptions alone do not even find it.
  'feed.see': [...DEVELOPERS, 'key:feed_inventory', 'key:feed_manager', ...on('feed', ['manager', 'publisher', 'subscriber', 'reader', 'list'])],
  'feed.read_subscriptions': [...DEVELOPERS, ...on('feed', ['manager', 'publisher', 'subscriber', 'reader'])],
  'feed.add_subscription': [...DEVELOPERS, ...on('feed', ['manager', 'subscriber'])],
  'feed.change_subscriptions': [...DEVELOPERS, ...on('feed', ['manager', 'subscriber'])],
  // A token signed by a key that may not publish here publishes nothing.
  'feed.publish': [...DEVELOPERS, 'key:feed_manager', ...on('feed', ['manager', 'publisher']), 'participant:admin key', 'participant:minted'],
  'feed.manage': [...DEVELOPERS, 'key:feed_manager', 'feed:manager'],
  'feed.read_policy': [...DEVELOPERS, 'key:feed_inventory', 'key:feed_manager'],
  'feed.change_policy': [...DEVELOPERS, 'key:feed_manager'],
};

// ---- the walk ------------------------------------------------------------------------------------

interface Credential {
  label: string;
  token: string;
  kind: 'api_key' | 'user' | 'oauth' | 'participant' | 'share';
  /** A member bound on the walk's resource of a type (and on each fresh one). */
  bound?: { type: string; role: string; userId: string };
  /** A share: its id, and the credential that created it (whose strength is its bound). */
  share?: { id: string; creator: string };
}

/** One route with a resource action, for one resource type. */
interface Probe {
  route: RouteInfo;
  type: ResourceType;
  action: string;
}

forEachEngine('escalation walk', (engine) => {
  let upstream: FakeUpstream;
  let service: TestService;
  let tenant: Tenant;
  let values: FixtureValues;
  let credentials: Credential[];
  let probes: Probe[];
  let types: readonly ResourceType[];
  /** The walk's resource of each type: its id (policy and rights paths). */
  const ids = new Map<string, string>();

  const project = () => `/accounts/projects/${tenant.projectId}`;
  const ok = (r: Response, what: string) => {
    assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };

  before(async () => {
    upstream = await startFakeUpstream();
    // No background work: every row change comes from a request.
    service = await startTestService(engine, {
      ...EMAIL_LOGIN_ENV,
      ...LOCAL_PAYMENTS_ENV,
      ATRIUM_OPENAI_BASE_URL: `${upstream.url}/v1`, ATRIUM_OPENAI_API_KEY: 'sk-operator',
      ATRIUM_ANTHROPIC_BASE_URL: upstream.url, ATRIUM_ANTHROPIC_API_KEY: 'sk-operator',
    }, { workers: () => [] });
    tenant = await createTenant(service, 'escalation');
    types = service.ctx.authority.types;
    values = await createFixtures(service, tenant);
    // The walk's feed is private: who finds it at all is part of the question.
    const feed = ok(await call(service, 'POST', `${project()}/feeds`, { token: tenant.apiKey, json: { name: 'walk-private' } }), 'private feed').feed;
    const subscription = ok(await call(service, 'POST', `${project()}/feeds/${feed.id}/subscriptions`, { token: tenant.apiKey, json: { room: values.any.room_name, path: 'walk' } }), 'subscription').subscription;
    values.byModule.set('feeds', { ...values.byModule.get('feeds'), feed_id: feed.id, subscription_id: subscription.id });

    probes = apiRoutes(service).flatMap((route) => {
      const resource = route.auth?.resource;
      if (!resource) return [];
      const named = typeof resource.type === 'string' ? [service.ctx.authority.type(resource.type)!] : types.filter((t) => t.actions[resource.action]);
      return named.map((type) => ({ route, type, action: resource.action }));
    });
    for (const type of types) {
      const byId = probes.find((p) => p.type === type && typeof p.route.auth!.resource!.type === 'string' && p.route.auth!.resource!.param && p.route.auth!.resource!.by !== 'name');
      if (byId) ids.set(type.type, paramValue(byId.route, values, byId.route.auth!.resource!.param!)!);
    }

    credentials = [
      { label: 'admin key', token: tenant.apiKey, kind: 'api_key' },
      { label: 'admin user', token: tenant.userToken, kind: 'user' },
    ];
    for (const role of PROJECT_ROLES) {
      credentials.push({ label: `key:${role}`, token: ok(await call(service, 'POST', `${project()}/api-keys`, { token: tenant.apiKey, json: { name: `walk-${role}`, roles: [role] } }), role).value, kind: 'api_key' });
    }
    const member = async () => {
      const user = await createUserWithToken(service, 'walk-member');
      ok(await call(service, 'POST', `${project()}/users`, { token: tenant.apiKey, json: { user_id: user.userId, roles: ['member'] } }), 'member');
      return user;
    };
    credentials.push({ label: 'member', token: (await member()).token, kind: 'user' });
    for (const [type, roles] of Object.entries(BOUND)) {
      for (const role of roles) {
        const user = await member();
        const credential: Credential = { label: `${type}:${role}`, token: user.token, kind: 'user', bound: { type, role, userId: user.userId } };
        await bind(credential, ids.get(type)!);
        credentials.push(credential);
      }
    }
    const client = await insertClient(service, tenant.projectId, { scope: `openid ${OAUTH_SCOPES.join(' ')}` });
    const config = await discover(service, client);
    for (const scope of OAUTH_SCOPES) {
      const request = await authorizationRequest(config, client.redirectUri, `openid ${scope}`);
      const callback = await signInAndConsent(new FormBrowser(service.url), request, client.redirectUri, tenant.email, tenant.password);
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
      credentials.push({ label: `oauth:${scope}`, token: tokens.access_token, kind: 'oauth' });
    }
    const memberKey = credentials.find((c) => c.label === 'key:member')!.token;
    credentials.push({ label: 'participant:admin key', token: await signed(tenant.apiKey), kind: 'participant' });
    credentials.push({ label: 'participant:member key', token: await signed(memberKey), kind: 'participant' });
    credentials.push({ label: 'participant:minted', token: ok(await call(service, 'POST', `${project()}/participant-tokens`, { token: tenant.apiKey, json: { name: 'walk', grants: everything() } }), 'minted').token, kind: 'participant' });
    const share = ok(await call(service, 'POST', `${project()}/shares`, { token: tenant.apiKey, json: { settings: { room: values.any.room_name, grants: FULL_SCOPE } } }), 'share');
    credentials.push({ label: 'share', token: share.token, kind: 'share', share: { id: share.id, creator: 'admin key' } });
  });
  after(async () => {
    await service?.stop();
    await upstream?.close();
  });

  /** Every grant a participant token can carry, naming the walk's resources. */
  const everything = () => [
    { name: 'room', scope: values.any.room_name },
    { name: 'agent', scope: values.any.agent_name },
    { name: 'feed', scope: '*' },
    { name: 'role', scope: 'agent' },
    { name: 'api', scope: FULL_SCOPE },
  ];
  /** A participant token an application signs with an API key, the official SDK's way. */
  const signed = (apiKey: string) => new ParticipantToken({ name: 'walk', grants: everything().map((g) => ParticipantGrant.fromJson(g)) }).toJwt({ apiKey });

  async function bind(credential: Credential, id: string): Promise<void> {
    const { type, role, userId } = credential.bound!;
    ok(await call(service, 'POST', `${project()}/policies/resources/${type}/${id}`, { token: tenant.apiKey, json: { subject: { type: 'user', id: userId }, roles: [role] } }), `bind ${credential.label}`);
  }

  /** The request of a probe: its path (the type and id for routes of every type; storage paths that name a room), and a valid body. */
  function requestOf(probe: Probe, fixtures: FixtureValues, id: string | undefined): { path: string; body: ReturnType<typeof validBody> } {
    const { route, type } = probe;
    const requirement = route.auth!.resource!;
    const fill = (name: string) => {
      if (typeof requirement.type !== 'string' && name === requirement.type.param) return type.type;
      if (typeof requirement.type !== 'string' && name === requirement.param) return id!;
      return paramValue(route, fixtures, name) ?? `missing-${name}`;
    };
    const path = fillPath(route.url, (name) => encodeURIComponent(fill(name)));
    // A resource found from the request (a storage path naming a room): every query parameter the fixtures give.
    const query = Object.keys(route.schema?.querystring?.properties ?? {}).filter((name) => (route.schema?.querystring?.required ?? []).includes(name) || (requirement.from && paramValue(route, fixtures, name) !== undefined));
    return { path: query.length > 0 ? `${path}?${new URLSearchParams(query.map((name): [string, string] => [name, fill(name)]))}` : path, body: validBody(route) };
  }

  /** Refused: no credential or the wrong one (401), not allowed (403), or the resource is not there for the caller. */
  const refused = (r: Response, type: ResourceType) => r.status === 401 || r.status === 403 || (r.status === 404 && r.body?.error?.message === `${type.label} not found`);

  const send = (credential: Credential, probe: Probe, request: ReturnType<typeof requestOf>) => call(service, probe.route.method, request.path, {
    ...request.body,
    headers: { ...('headers' in request.body ? request.body.headers : {}) },
    token: credential.token,
  });

  /** A resource of the probe's type made for one request that will change it, with the credential's binding. */
  async function fresh(probe: Probe, credential: Credential): Promise<{ fixtures: FixtureValues; id: string | undefined }> {
    const source = typeof probe.route.auth!.resource!.type === 'string'
      ? probe.route
      : probes.find((p) => p.type === probe.type && typeof p.route.auth!.resource!.type === 'string' && p.route.auth!.resource!.by !== 'name' && p.route.auth!.resource!.param)!.route;
    const fixtures = await createFixtures(service, tenant, source);
    const idParam = probes.find((p) => p.type === probe.type && typeof p.route.auth!.resource!.type === 'string' && p.route.auth!.resource!.param && p.route.auth!.resource!.by !== 'name')?.route.auth!.resource!.param;
    const id = idParam ? paramValue(source, fixtures, idParam) : undefined;
    if (credential.bound?.type === probe.type.type) await bind(credential, id!);
    return { fixtures, id };
  }

  test('every declared action has a row, and every route naming one a resource to walk', () => {
    const actions = types.flatMap((type) => Object.keys(type.actions).map((action) => `${type.type}.${action}`));
    assert.deepEqual(actions.filter((a) => !EXPECTED[a]), [], 'write the expected row of each new action');
    assert.deepEqual(Object.keys(EXPECTED).filter((a) => !actions.includes(a)), [], 'rows of actions no type declares');
    assert.ok(probes.length > 30, 'the routes naming actions were found');
    assert.deepEqual(types.filter((type) => !ids.has(type.type)).map((t) => t.type), [], 'each type has a route naming one by id');
    const named = new Set(apiRoutes(service).map((route) => route.auth?.oauthScope).filter((scope) => scope !== undefined && scope !== 'openid'));
    assert.deepEqual([...named].filter((scope) => !OAUTH_SCOPES.includes(scope!)), [], 'an OAuth token of each scope a route names is walked');
    const labels = new Set(credentials.map((c) => c.label));
    assert.deepEqual(Object.entries(EXPECTED).flatMap(([a, who]) => who.filter((label) => !labels.has(label)).map((label) => `${a}: ${label}`)), [], 'rows name only the walk\'s credentials');
  });

  test('(1) every credential at every route that names an action: let through exactly as the table says; refusals change nothing', async () => {
    const failures: string[] = [];
    let known = await fingerprint(service);
    for (const probe of probes) {
      const name = `${probe.type.type}.${probe.action}`;
      const shared = requestOf(probe, values, ids.get(probe.type.type));
      const expected = (c: Credential) => EXPECTED[name]!.includes(c.label);
      const changes = probe.route.method !== 'GET';
      const where = `${probe.route.method} ${probe.route.url} [${name}]`;
      // Requests that may not change anything go to the walk's resources, side by side.
      const onShared = credentials.filter((c) => !changes || !expected(c));
      const answers = await Promise.all(onShared.map((c) => send(c, probe, shared)));
      onShared.forEach((c, i) => {
        const r = answers[i]!;
        if (refused(r, probe.type) === expected(c)) failures.push(`${c.label}: ${where} ${expected(c) ? 'refused' : 'let through'}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      });
      const now = await fingerprint(service);
      if (now !== known) failures.push(`${where}: a refused request changed the database`);
      // A request that will change its resource gets one of its own.
      for (const c of credentials.filter((cred) => changes && expected(cred))) {
        const { fixtures, id } = await fresh(probe, c);
        const r = await send(c, probe, requestOf(probe, fixtures, id));
        if (refused(r, probe.type)) failures.push(`${c.label}: ${where} refused: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
      known = await fingerprint(service);
    }
    assert.deepEqual(failures, []);
  });

  test('(2) the rights answer of each resource says the same, action by action', async () => {
    const failures: string[] = [];
    for (const type of types) {
      const path = `${project()}/rights/${type.type}/${ids.get(type.type)}`;
      for (const c of credentials) {
        const r = await call(service, 'GET', path, { token: c.token });
        if (r.status === 401 || r.status === 403) {
          // Credentials the rights route does not take: they take no action but at routes that take them (the table).
          if (c.kind === 'api_key' || c.kind === 'user') failures.push(`${c.label}: rights of ${type.type} ${r.status}`);
          continue;
        }
        const rights = r.status === 200 ? ['see', ...r.body.rights] : [];
        const expected = Object.keys(type.actions).filter((action) => EXPECTED[`${type.type}.${action}`]!.includes(c.label));
        if (!isDeepStrictEqual([...rights].sort(), expected.sort())) failures.push(`${c.label}: rights of ${type.type} ${JSON.stringify(rights)}, expected ${JSON.stringify(expected)}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  test('(3) no token a credential signs or mints goes further than the credential, nor gets more vouched for', async () => {
    const failures: string[] = [];
    // One route of each requirement among those that take participant tokens (the LLM proxy's two, feed publishing).
    const seen = new Set<string>();
    const targets = apiRoutes(service).filter((r) => r.auth?.credentials?.includes('participant')).filter((r) => {
      const key = JSON.stringify(r.auth, (k, v) => (typeof v === 'function' ? undefined : v));
      return !seen.has(key) && Boolean(seen.add(key));
    });
    assert.ok(targets.some((r) => r.url.startsWith('/openai/')) && targets.some((r) => r.url.startsWith('/anthropic/')) && targets.some((r) => r.url.includes('/feeds/')), 'the routes that take participant tokens');
    const feedProbe: Probe = { route: targets.find((r) => r.url.includes('/feeds/'))!, type: service.ctx.authority.type('feed')!, action: 'publish' };
    const at = async (token: string, route: RouteInfo) => {
      if (route.url.includes('/feeds/')) return !refused(await send({ label: '', token, kind: 'api_key' }, feedProbe, requestOf(feedProbe, values, undefined)), feedProbe.type);
      const r = await call(service, route.method, fillPath(route.url, () => 'fake-chat'), { token, headers: { 'service-project-id': tenant.projectId }, ...validBody(route) });
      return r.status !== 401 && r.status !== 403 && r.status !== 404;
    };
    const validate = async (token: string) => (await call(service, 'POST', '/api/participant-token/validate', { json: { token } })).body as { grants: { name: string; scope: any }[] };
    const apiOf = (grants: { name: string; scope: any }[]) => grants.find((g) => g.name === 'api')?.scope ?? {};

    const through = new Map<string, number>();
    for (const credential of credentials) {
      // What the credential mints or signs, and whose strength is its bound (a share's: its creator's).
      const tokens: [string, string][] = [];
      const post = (path: string, json: unknown = {}) => call(service, 'POST', `${project()}${path}`, { token: credential.token, json });
      if (credential.kind === 'api_key') tokens.push(['a token it signs', await signed(credential.token)]);
      const connected = await post(`/rooms/${values.any.room_name}/connect`);
      if (connected.status === 200) tokens.push(['its connect token', connected.body.jwt]);
      const agent = await post(`/agents/${values.any.agent_name}/connect`);
      if (agent.status === 200) tokens.push(['its agent token', agent.body.jwt]);
      const minted = await post('/participant-tokens', { name: 'walk', grants: everything() });
      if (minted.status === 200) tokens.push(['a token it mints', minted.body.token]);
      let share = await post('/shares', { settings: { room: values.any.room_name, grants: FULL_SCOPE } });
      if (share.status === 403 && /beyond/.test(share.body.error?.message ?? '')) share = await post('/shares', { settings: { room: values.any.room_name } });
      if (share.status === 201) tokens.push(["its share's token", (await call(service, 'POST', `/shares/${share.body.id}/connect`, { token: share.body.token, json: {} })).body.jwt]);
      const key = await post('/api-keys', { name: 'walk-minted', roles: ['admin'] });
      if (key.status === 201) tokens.push(['a key it creates', key.body.value]);
      if (credential.share) tokens.push(['its connect token', (await call(service, 'POST', `/shares/${credential.share.id}/connect`, { token: credential.token, json: {} })).body.jwt]);
      const bound = credential.share ? credentials.find((c) => c.label === credential.share!.creator)! : credential;

      for (const route of targets) {
        const itself = await at(bound.token, route);
        for (const [what, token] of tokens) {
          const passes = await at(token, route);
          if (passes) through.set(route.url, (through.get(route.url) ?? 0) + 1);
          if (passes && !itself) failures.push(`${credential.label}: ${what} passes ${route.method} ${route.url}, where ${bound.label} does not`);
        }
      }
      // Validate: what a token it signed is vouched for is at most what its own connect gives it, and the LLM proxy it may use.
      if (credential.kind === 'api_key' && connected.status === 200) {
        const own = apiOf((await validate(connected.body.jwt)).grants);
        const mayUseLlm = await at(credential.token, targets.find((r) => r.url.startsWith('/openai/'))!);
        const mayPublishAll = await at(credential.token, feedProbe.route);
        const vouched = (await validate(tokens.find(([what]) => what === 'a token it signs')![1])).grants;
        for (const [surface, value] of Object.entries(apiOf(vouched))) {
          const within = surface in own && (Object.keys(own[surface]).length === 0 || isDeepStrictEqual(own[surface], value));
          if (!within && !(surface === 'llm' && mayUseLlm)) failures.push(`${credential.label}: validate vouches for api.${surface} beyond its own connect`);
        }
        for (const grant of vouched) {
          if (grant.name === 'role' && !['user', 'agent', 'tool'].includes(grant.scope)) failures.push(`${credential.label}: validate vouches for the role ${grant.scope}`);
          if (grant.name === 'feed' && !mayPublishAll) failures.push(`${credential.label}: validate vouches for a feed grant it may not give`);
        }
      }
    }
    assert.deepEqual(targets.filter((r) => !through.get(r.url)).map((r) => r.url), [], 'tokens of credentials that may pass do pass: the check is not empty');
    assert.deepEqual(failures, []);
  });
});

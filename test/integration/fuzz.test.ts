// A fuzz over the whole route table, generated from the route declarations: for every route, the
// core bad requests (malformed, wrong-typed and oversize bodies; no, expired, revoked and
// other-project credentials) and a seeded sample of the others (bad JSON, wrong types, missing and unknown fields, oversize
// values, bad Unicode and NUL, path traversal, bad percent-encoding, no / garbage / expired /
// revoked / other-project credentials) and, for the OAuth server, its discovery endpoints. It fails
// on any 5xx, on an error body off the documented shapes, and on any change to the database made
// by a request that was refused. A new route is fuzzed without anyone writing a line for it.
//
// ATRIUM_FUZZ_SEED=<n> replays a run (the seed is printed); ATRIUM_FUZZ_PER_ROUTE sets the sample
// size per route (default 16).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { issuePersonalAccessToken } from '../../src/modules/users/service.ts';
import { ERROR_CATALOGUE } from '../../src/platform/http/errors.ts';
import { mutations, pick, sample, seededRandom, type BaseRequest, type FuzzRequest } from '../support/fuzz.ts';
import { apiRoutes, pathParams, type RouteInfo } from '../support/routes.ts';
import { LOCAL_PAYMENTS_ENV } from '../support/payments.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { createFixtures, fingerprint, isProtocolError, paramValue, validBody } from '../support/walk.ts';

const SEED = Number(process.env.ATRIUM_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const PER_ROUTE = Number(process.env.ATRIUM_FUZZ_PER_ROUTE ?? 16);
const CATALOGUE_CODES = new Set(Object.keys(ERROR_CATALOGUE));

const isProtocol = (path: string) => path.startsWith('/oauth/') || path.startsWith('/.well-known/');
const isPage = (path: string) => /^\/(interaction|signin|dev)\//.test(path);

/** Whether an error answer has one of the documented shapes for where it was sent. */
function documentedShape(path: string, contentType: string, body: unknown): boolean {
  const error = (body as { error?: unknown } | null)?.error;
  const catalogue = contentType.includes('json') && typeof error === 'object' && error !== null
    && CATALOGUE_CODES.has((error as { code?: string }).code ?? '') && typeof (error as { message?: unknown }).message === 'string';
  if (catalogue || isProtocolError(path, contentType, body)) return true;
  // RFC 6749 §5.2 on the protocol endpoints; HTML pages where a person is looking.
  if (isProtocol(path)) return (contentType.includes('json') && typeof error === 'string') || contentType.includes('text/html');
  if (isPage(path)) return contentType.includes('text/html');
  return false;
}

forEachEngine('fuzz over the route table', (engine) => {
  let service: TestService;
  let a: Tenant;
  let b: Tenant;
  const wrongTokens: Record<string, string> = {};

  before(async () => {
    // No background work: every row change must come from a request.
    // The fixtures buy credits: the local payment provider, allowed on PostgreSQL too.
    service = await startTestService(engine, LOCAL_PAYMENTS_ENV, { workers: () => [] });
    a = await createTenant(service, 'fuzz-a');
    b = await createTenant(service, 'fuzz-b');
    const revoked = await call(service, 'POST', `/accounts/projects/${a.projectId}/api-keys`, { token: a.apiKey, json: { name: 'revoked' } });
    await call(service, 'DELETE', `/accounts/projects/${a.projectId}/api-keys/${revoked.body.id}`, { token: a.apiKey });
    Object.assign(wrongTokens, {
      "another project's API key": b.apiKey,
      "another project's admin": b.userToken,
      'an expired personal token': await issuePersonalAccessToken(service.ctx.db, a.userId, 'expired', new Date(Date.now() - 60_000)),
      'a revoked API key': revoked.body.value,
    });
  });
  after(() => service?.stop());

  async function baseFor(route: RouteInfo): Promise<BaseRequest> {
    const values = await createFixtures(service, a, route);
    const params = Object.fromEntries(pathParams(route.url).map((name) => [name, paramValue(route, values, name) ?? `missing-${name}`]));
    const query = Object.fromEntries((route.schema?.querystring?.required ?? []).map((name) => [name, paramValue(route, values, name) ?? 'fuzz.txt']));
    const body = validBody(route);
    const credentials = route.auth?.credentials ?? ['api_key', 'user'];
    const token = route.auth?.permission === 'public' ? undefined : credentials.includes('api_key') ? a.apiKey : a.userToken;
    return { route, params, query, ...('json' in body ? { json: body.json } : 'body' in body ? { raw: body.body } : {}), token, wrongTokens };
  }

  /** Requests to the OAuth server's endpoints, which take forms and queries rather than JSON. */
  async function protocolRequests(random: () => number): Promise<FuzzRequest[]> {
    const discovery = (await call(service, 'GET', '/.well-known/openid-configuration')).body as Record<string, unknown>;
    const endpoints = [...new Set(Object.entries(discovery).filter(([k, v]) => k.endsWith('_endpoint') && typeof v === 'string').map(([, v]) => new URL(v as string).pathname))];
    assert.ok(endpoints.length >= 5, 'the discovery document names the endpoints');
    const bad = ['client_id=%00', 'client_id=%E0%A4%A', 'client_id=%ED%A0%80', `client_id=${'x'.repeat(5000)}`, 'response_type=code&client_id=nope&redirect_uri=javascript:alert(1)', 'grant_type=%00', 'user_code=%00&x=1', 'token=%00'];
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const out: FuzzRequest[] = [];
    for (const path of [...endpoints, '/oauth/unknown', '/oauth/device/auth', '/oauth/%E0%A4%A']) {
      for (const query of bad) {
        out.push({ what: `GET ?${query.slice(0, 40)}`, method: 'GET', path: `${path}?${query}`, headers: {} });
        out.push({ what: `POST form ${query.slice(0, 40)}`, method: 'POST', path, headers: form, body: query });
      }
      out.push({ what: 'POST JSON garbage', method: 'POST', path, headers: { 'content-type': 'application/json' }, body: '{"' });
      out.push({ what: 'DELETE', method: 'DELETE', path, headers: {} });
    }
    return sample(out, Math.max(PER_ROUTE * 6, 60), random);
  }

  // One test walks every route, so it grows with the route table: the runner's 2-minute default is
  // too short for it on a busy 2-core machine.
  test(`no bad request gets a 5xx, an undocumented error body, or changes data (seed ${SEED})`, { timeout: 15 * 60_000 }, async (t) => {
    t.diagnostic(`fuzz seed ${SEED} (replay with ATRIUM_FUZZ_SEED=${SEED})`);
    const random = seededRandom(SEED);
    const failures: string[] = [];
    let sent = 0;
    // The state after the previous request (fixtures made in between are taken in by `settle`).
    let state = '';
    const settle = async () => { state = await fingerprint(service); };
    const send = async (request: FuzzRequest, where: string) => {
      let response: Response;
      try {
        response = await fetch(`${service.url}${request.path}`, { method: request.method, headers: request.headers, body: request.body ?? null, redirect: 'manual' });
      } catch (error) {
        // The client refused to send it (an invalid header value): nothing reached the server.
        if ((error as Error).name === 'TypeError' && /header/i.test(String((error as Error & { cause?: Error }).cause?.message ?? (error as Error).message))) return;
        throw error;
      }
      sent += 1;
      const contentType = response.headers.get('content-type') ?? '';
      const text = await response.text();
      let body: unknown = text;
      try {
        if (contentType.includes('json')) body = JSON.parse(text);
      } catch {
        failures.push(`${where} — ${request.what}: ${response.status} with unparseable JSON`);
      }
      const label = `${where} — ${request.what}: ${request.method} ${request.path.slice(0, 160)} → ${response.status}`;
      if (response.status >= 500) failures.push(`${label} ${text.slice(0, 200)}`);
      else if (response.status >= 400 && !documentedShape(request.path, contentType, body)) failures.push(`${label} (${contentType}) ${text.slice(0, 200)}: not a documented error shape`);
      const previous = state;
      await settle();
      if (response.status >= 400 && state !== previous) failures.push(`${label}: refused, yet the database changed`);
    };

    const routes = apiRoutes(service);
    assert.ok(routes.length > 40, 'the route table is populated');
    for (const route of routes) {
      const base = await baseFor(route);
      await settle();
      for (const request of pick(mutations(base), PER_ROUTE, random)) await send(request, `${route.method} ${route.url}`);
    }
    const protocol = await protocolRequests(random);
    await settle();
    for (const request of protocol) await send(request, 'OAuth server');
    t.diagnostic(`${sent} requests over ${routes.length} routes and the OAuth endpoints`);
    assert.deepEqual(failures, [], `fuzz seed ${SEED}`);
  });
});

// /oauth and the sign-in pages under hostile input, on both engines: every endpoint of the discovery
// document (and the provider's pages it links to), every sign-in page route of the route table,
// with wrong methods, garbage and oversized parameters, bad percent-encoding, NUL, control
// characters and lone surrogates in query, form and JSON values. Nothing may answer 5xx, and every
// error has a shape: RFC 6749's JSON or our HTML page on protocol endpoints, the catalogue's
// `{"error": {"code", "message"}}` for paths and methods nothing serves, our HTML page or the
// catalogue on the sign-in pages. The probes are enumerated, not random: a failure replays as is.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import * as oidc from 'openid-client';
import { ATRIUM_CLI_CLIENT_ID } from '../../src/modules/oauth/first-party.ts';
import { forEachEngine, freePort, type TestService } from '../support/service.ts';
import {
  EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, findForm, pageError, startOAuthService, startUpstreamProvider, type TestClient,
  type UpstreamProviderFixture,
} from '../support/oauth.ts';

/** Values as they travel in a query or form (already percent-encoded, or deliberately not). */
const BAD_VALUES: Record<string, string> = {
  nul: '%00',
  controls: '%01%08%1B%7F',
  'lone surrogate': '%ED%A0%80',
  'truncated UTF-8': '%F0%9F',
  'bad percent-encoding': '%zz%',
  'bad percent-encoding, cut': '%E0%A4%A',
  oversized: 'x'.repeat(6000),
  markup: '%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E',
  'path traversal': '..%2F..%2Fetc%2Fpasswd',
  empty: '',
};

/** JSON bodies carry what a form cannot: an escaped lone surrogate, a NUL, a wrong type. */
const BAD_JSON_VALUES: Record<string, string> = {
  'lone surrogate': '"\\ud800"',
  nul: '"a\\u0000b"',
  number: '42',
  object: '{"$ne": null}',
};

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'];

/** Parameters the provider's endpoints read. */
const OAUTH_PARAMS = [
  'client_id', 'client_secret', 'redirect_uri', 'response_type', 'response_mode', 'scope', 'state', 'nonce', 'prompt', 'max_age',
  'login_hint', 'id_token_hint', 'ui_locales', 'claims', 'request', 'request_uri', 'resource', 'code_challenge', 'code_challenge_method',
  'grant_type', 'code', 'code_verifier', 'refresh_token', 'device_code', 'user_code', 'token', 'token_type_hint', 'post_logout_redirect_uri',
  'xsrf', 'logout', 'confirm', 'abort',
];

type Kind = 'protocol' | 'page' | 'unrouted';

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

const isCatalogue = (body: unknown): body is { error: { code: string; message: string } } => {
  const error = (body as { error?: unknown } | null)?.error as { code?: unknown; message?: unknown } | undefined;
  return typeof error === 'object' && error !== null && typeof error.code === 'string' && typeof error.message === 'string';
};
const isRfc = (body: unknown): boolean => {
  const b = body as { error?: unknown; error_description?: unknown } | null;
  return typeof b?.error === 'string' && (b.error_description === undefined || typeof b.error_description === 'string');
};

/** What is wrong with an answer, if anything. */
function problemWith(kind: Kind, method: string, answer: Answer): string | undefined {
  const { status, contentType, body } = answer;
  if (status >= 500) return `${status}`;
  if (status < 400) return undefined;
  // Pages may say "not found" themselves (an unknown mail); the protocol's 404s are all unrouted.
  const mustBeCatalogue404 = kind !== 'page' && status === 404;
  if (method === 'HEAD') return mustBeCatalogue404 && !contentType.includes('application/json') ? `404 as ${contentType}` : undefined;
  let json: unknown;
  if (contentType.includes('application/json')) {
    try {
      json = JSON.parse(body);
    } catch {
      return `${status} with unparseable JSON`;
    }
  }
  if (mustBeCatalogue404 && !(isCatalogue(json) && json.error.code === 'not_found')) return `404 off the catalogue: ${contentType} ${JSON.stringify(body.slice(0, 100))}`;
  if (kind === 'unrouted') return isCatalogue(json) ? undefined : `${status} off the catalogue: ${contentType} ${JSON.stringify(body.slice(0, 100))}`;
  if (contentType.includes('text/html')) return body.includes('<footer>Sign-in secured by Atrium</footer>') ? undefined : `${status} HTML that is not our page`;
  if (json !== undefined && (isCatalogue(json) || (kind === 'protocol' && isRfc(json)))) return undefined;
  return `${status} off-shape: ${contentType} ${JSON.stringify(body.slice(0, 100))}`;
}

forEachEngine('oauth robustness', (engine) => {
  let service: TestService;
  let upstream: UpstreamProviderFixture;
  let client: TestClient;
  let config: oidc.Configuration;
  let discovery: Record<string, unknown>;
  const basic = () => `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;

  before(async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    upstream = await startUpstreamProvider(await freePort(), `${publicUrl}/signin/upstream/test-idp/callback`);
    ({ service, client, config } = await startOAuthService(engine, {
      env: {
        ...EMAIL_LOGIN_ENV,
        PORT: String(port),
        ATRIUM_PUBLIC_URL: publicUrl,
        ATRIUM_OIDC_PROVIDERS: JSON.stringify([{ id: 'test-idp', issuer: upstream.issuer, client_id: upstream.clientId, client_secret: upstream.clientSecret, label: 'Test IdP' }]),
      },
      tenant: 'robust',
    }));
    discovery = (await (await fetch(`${service.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  });
  after(async () => {
    await service?.stop();
    await upstream?.stop();
  });

  async function send(method: string, path: string, options: { body?: string; type?: string; headers?: Record<string, string>; cookie?: FormBrowser } = {}): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.body !== undefined) headers['content-type'] = options.type ?? 'application/x-www-form-urlencoded';
    if (options.cookie) {
      const page = await options.cookie.request(method, path, options.body, headers);
      return { status: page.status, contentType: page.headers.get('content-type') ?? '', body: page.html };
    }
    const response = await fetch(`${service.url}${path}`, { method, headers, redirect: 'manual', body: options.body ?? null, signal: AbortSignal.timeout(10_000) });
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: await response.text() };
  }

  /** Sends every probe (a few at a time) and returns what is wrong with the answers. */
  async function sweep(probes: { kind: Kind; method: string; path: string; body?: string; type?: string; headers?: Record<string, string>; cookie?: FormBrowser }[]): Promise<string[]> {
    const problems: string[] = [];
    const queue = [...probes];
    const worker = async () => {
      for (let probe = queue.shift(); probe; probe = queue.shift()) {
        const answer = await send(probe.method, probe.path, probe);
        const problem = problemWith(probe.kind, probe.method, answer);
        if (problem) problems.push(`${probe.method} ${probe.path.slice(0, 120)}${probe.body !== undefined ? ` [${probe.type ?? 'form'}: ${JSON.stringify(probe.body.slice(0, 80))}]` : ''} → ${problem}`);
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    return problems;
  }

  const report = (problems: string[], total: number) => `${problems.length} of ${total} probes failed, the first ones:\n${problems.slice(0, 25).join('\n')}`;

  /** The provider's endpoints: those discovery names, and the pages and steps they lead to. */
  async function protocolPaths(): Promise<string[]> {
    const own = (value: unknown) => typeof value === 'string' && value.startsWith(`${service.url}/`) ? value.slice(service.url.length) : undefined;
    const listed = Object.entries(discovery)
      .filter(([key]) => key.endsWith('_endpoint') || key === 'jwks_uri')
      .map(([, value]) => own(value))
      .filter((path): path is string => path !== undefined && (path.startsWith('/oauth/') || path.startsWith('/.well-known/')));
    assert.ok(listed.length >= 8, `discovery lists the endpoints: ${listed.join(' ')}`);
    const device = await oidc.initiateDeviceAuthorization(await oidc.discovery(new URL(service.url), ATRIUM_CLI_CLIENT_ID, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] }), { scope: 'openid' });
    const verification = own(device.verification_uri)!;
    const endSession = own(discovery.end_session_endpoint)!;
    const authorization = own(discovery.authorization_endpoint)!;
    return [
      ...listed,
      '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server',
      verification, `${verification}/${randomUUID()}`, `${authorization}/${randomUUID()}`, `${endSession}/confirm`, `${endSession}/success`,
    ];
  }

  test('the device endpoints answer a page, not 500, to a browser without a session, store nothing, and lead back to the form', async () => {
    for (const [method, path, body] of [['POST', '/oauth/device', 'x=1'], ['POST', '/oauth/device', ''], ['GET', '/oauth/device/auth', undefined]] as const) {
      const answer = await fetch(`${service.url}${path}`, { method, headers: { accept: 'text/html', ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) }, body: body ?? null, redirect: 'manual' });
      assert.equal(answer.status, 400, `${method} ${path}`);
      assert.match(answer.headers.get('content-type')!, /text\/html/);
      assert.deepEqual(answer.headers.getSetCookie(), [], 'no session is started for a refused request');
      assert.match(pageError(await answer.text())!, /Enter the code again/);
    }
    // The page leads to the form, which then works: a real code goes on to the confirmation.
    const cli = await oidc.discovery(new URL(service.url), ATRIUM_CLI_CLIENT_ID, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const device = await oidc.initiateDeviceAuthorization(cli, { scope: 'openid' });
    const browser = new FormBrowser(service.url);
    const refused = await browser.go('POST', '/oauth/device', { user_code: device.user_code });
    assert.equal(refused.status, 400);
    const href = /<a href="([^"]+)">Enter the code<\/a>/.exec(refused.html)?.[1];
    assert.equal(href, `${service.url}/oauth/device`);
    const entry = await browser.go('GET', href);
    const confirm = await browser.submit(entry, '/oauth/device', { user_code: device.user_code });
    assert.equal(confirm.status, 200, pageError(confirm.html));
    assert.match(confirm.html, /Confirm the device/);
  });

  test('NUL and lone surrogates in OAuth parameters are refused as bad requests', async () => {
    for (const path of ['/oauth/authorize?client_id=%00', '/oauth/logout?client_id=%00', '/oauth/authorize?client_id=%ED%A0%80']) {
      const answer = await send('GET', path, { headers: { accept: 'text/html' } });
      assert.equal(answer.status, 400, path);
      assert.match(answer.body, /This sign-in request cannot continue/, path);
    }
    // With a valid client and redirect URI, the error goes back to the client (RFC 6749 §4.1.2.1).
    // (A lone surrogate cannot travel in a URL: decoding makes it U+FFFD.)
    for (const [name, value] of [['state', '%00'], ['login_hint', 'a%00b'], ['nonce', 'n%00']] as const) {
      const url = (await authorizationRequest(config, client.redirectUri, 'openid')).url;
      url.searchParams.delete(name);
      const response = await fetch(`${url.href}&${name}=${value}`, { redirect: 'manual' });
      assert.equal(response.status, 303, name);
      const back = new URL(response.headers.get('location')!);
      assert.equal(`${back.origin}${back.pathname}`, client.redirectUri, name);
      assert.equal(back.searchParams.get('error'), 'invalid_request', name);
    }
    const token = await send('POST', '/oauth/token', { body: 'grant_type=authorization_code&code=%00&redirect_uri=x&code_verifier=%ED%A0%80', headers: { authorization: basic() } });
    assert.equal(token.status, 400);
    assert.equal(JSON.parse(token.body).error, 'invalid_grant');
  });

  test('paths and methods the provider does not serve answer not_found in the catalogue\'s shape', async () => {
    const probes: [string, string][] = [
      ['GET', '/oauth/nope'], ['GET', '/oauth/'], ['POST', '/oauth/token/extra'], ['GET', '/oauth/token'], ['PUT', '/oauth/token'],
      ['DELETE', '/oauth/jwks'], ['POST', '/oauth/jwks'], ['PATCH', '/oauth/authorize'], ['PUT', '/oauth/authorize'], ['GET', '/oauth/%00'],
      ['OPTIONS', '/oauth/nope'], ['GET', '/oauth/register'], ['DELETE', '/oauth/userinfo'],
    ];
    for (const [method, path] of probes) {
      const answer = await send(method, path);
      assert.equal(answer.status, 404, `${method} ${path}`);
      assert.match(answer.contentType, /application\/json/, `${method} ${path}`);
      assert.equal(JSON.parse(answer.body).error.code, 'not_found', `${method} ${path}`);
    }
  });

  test('every protocol endpoint, every method, hostile parameters: no 5xx, every error in its shape', async () => {
    const probes: Parameters<typeof sweep>[0] = [];
    const paths = await protocolPaths();
    for (const path of paths) {
      for (const method of METHODS) {
        probes.push({ kind: 'protocol', method, path });
        for (const value of Object.values(BAD_VALUES)) {
          const params = OAUTH_PARAMS.map((name) => `${name}=${value}`).join('&');
          probes.push(method === 'GET' || method === 'HEAD' || method === 'OPTIONS'
            ? { kind: 'protocol', method, path: `${path}?${params}` }
            : { kind: 'protocol', method, path, body: params });
        }
      }
      for (const value of Object.values(BAD_JSON_VALUES)) {
        probes.push({ kind: 'protocol', method: 'POST', path, type: 'application/json', body: `{${OAUTH_PARAMS.map((name) => `"${name}": ${value}`).join(', ')}}` });
      }
      probes.push(
        { kind: 'protocol', method: 'POST', path, type: 'application/json', body: '{"client_id": ' },
        { kind: 'protocol', method: 'POST', path, type: 'text/plain; charset=no-such-charset', body: 'client_id=x' },
        { kind: 'protocol', method: 'POST', path, body: `client_id=${'x'.repeat(70 * 1024)}` },
        { kind: 'protocol', method: 'POST', path, body: 'client_id=a&client_id=b&scope=openid&scope=openid' },
        { kind: 'protocol', method: 'GET', path: `${path}/%00` },
        { kind: 'protocol', method: 'GET', path: `${path}/%ED%A0%80` },
        { kind: 'protocol', method: 'GET', path: `${path}%zz` },
      );
    }
    const problems = await sweep(probes);
    assert.equal(problems.length, 0, report(problems, probes.length));
  });

  test('each parameter of a valid request poisoned in turn reaches deeper checks, and fails in shape', async () => {
    const challenge = 'a'.repeat(43);
    const baselines: { method: 'GET' | 'POST'; path: string; params: Record<string, string>; headers?: Record<string, string> }[] = [
      {
        method: 'GET',
        path: '/oauth/authorize',
        params: { client_id: client.clientId, response_type: 'code', redirect_uri: client.redirectUri, scope: 'openid profile', state: 's', nonce: 'n', code_challenge: challenge, code_challenge_method: 'S256', prompt: 'login', max_age: '60', login_hint: 'a@example.test', ui_locales: 'en', resource: service.url, claims: '{}', response_mode: 'query' },
      },
      {
        method: 'POST',
        path: '/oauth/par',
        headers: { authorization: basic() },
        params: { response_type: 'code', redirect_uri: client.redirectUri, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' },
      },
      { method: 'POST', path: '/oauth/token', headers: { authorization: basic() }, params: { grant_type: 'authorization_code', code: 'c', redirect_uri: client.redirectUri, code_verifier: challenge } },
      { method: 'POST', path: '/oauth/token', headers: { authorization: basic() }, params: { grant_type: 'refresh_token', refresh_token: 'r', scope: 'openid' } },
      { method: 'POST', path: '/oauth/token', headers: { authorization: basic() }, params: { grant_type: 'client_credentials', scope: 'profile:read', resource: service.url } },
      { method: 'POST', path: '/oauth/token', params: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'd', client_id: ATRIUM_CLI_CLIENT_ID } },
      { method: 'POST', path: '/oauth/revoke', headers: { authorization: basic() }, params: { token: 't', token_type_hint: 'refresh_token' } },
      { method: 'POST', path: '/oauth/introspect', headers: { authorization: basic() }, params: { token: 't', token_type_hint: 'access_token' } },
      { method: 'POST', path: '/oauth/device/auth', params: { client_id: ATRIUM_CLI_CLIENT_ID, scope: 'openid' } },
      { method: 'GET', path: '/oauth/logout', params: { client_id: client.clientId, post_logout_redirect_uri: client.redirectUri, state: 's', id_token_hint: 'x.y.z' } },
      { method: 'POST', path: '/oauth/device', params: { user_code: 'BCDF-GHJK', xsrf: 'x', confirm: 'yes' } },
      { method: 'POST', path: '/oauth/logout/confirm', params: { xsrf: 'x', logout: 'yes' } },
    ];
    const probes: Parameters<typeof sweep>[0] = [];
    for (const { method, path, params, headers } of baselines) {
      for (const poisoned of [...Object.keys(params), 'unknown_parameter']) {
        for (const value of Object.values(BAD_VALUES)) {
          const query = Object.entries({ ...params, [poisoned]: undefined })
            .filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(v!)}`).concat(`${poisoned}=${value}`).join('&');
          probes.push(method === 'GET'
            ? { kind: 'protocol', method, path: `${path}?${query}`, ...(headers ? { headers } : {}) }
            : { kind: 'protocol', method, path, body: query, ...(headers ? { headers } : {}) });
        }
      }
    }
    const problems = await sweep(probes);
    assert.equal(problems.length, 0, report(problems, probes.length));
  });

  test('every sign-in page route, each field poisoned with a valid CSRF token in a live flow: no 5xx, every error in its shape', async () => {
    const browser = new FormBrowser(service.url);
    const login = await browser.go('GET', (await authorizationRequest(config, client.redirectUri, 'openid')).url);
    assert.equal(login.status, 200);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;
    const csrf = findForm(login.html, '/password').hidden._csrf!;
    const pages = service.routes.filter((r) => /^\/(interaction|signin|dev\/mail)\b/.test(r.url) && r.method !== 'HEAD');
    assert.ok(pages.length >= 20, `the sign-in routes are in the table (${pages.length})`);
    const fill = (url: string) => url.replace(':uid', uid).replace(':provider', 'test-idp').replace(':id', randomUUID());
    const valid: Record<string, string> = {
      _csrf: csrf, email: 'fuzz@example.test', password: 'a long enough password', code: '123456', token: 'x', first_name: 'Fuzz', last_name: 'Tester',
      decision: 'deny', notice: 'password-changed', state: 's', iss: upstream.issuer, error: 'access_denied', error_description: 'd',
    };
    const odd: Record<string, string> = {
      ...BAD_VALUES,
      unicode: encodeURIComponent('Zoë 🦄 العربية'),
      'almost an address': encodeURIComponent('a@b.c\u202e'),
      'spaces and quotes': encodeURIComponent(' "x" '),
    };
    const probes: Parameters<typeof sweep>[0] = [];
    const pathsSeen = new Set<string>();
    for (const route of pages) {
      const schema = route.schema as { body?: { properties?: Record<string, unknown> }; querystring?: { properties?: Record<string, unknown> } } | undefined;
      const path = fill(route.url);
      const inQuery = route.method === 'GET';
      const fields = Object.keys((inQuery ? schema?.querystring : schema?.body)?.properties ?? {});
      const encode = (poisoned: string, value: string) => [...fields.filter((f) => f !== poisoned).map((f) => `${f}=${encodeURIComponent(valid[f] ?? 'x')}`), `${poisoned}=${value}`].join('&');
      for (const poisoned of [...fields, 'unknown_field']) {
        for (const value of Object.values(odd)) {
          probes.push(inQuery
            ? { kind: 'page', method: route.method, path: `${path}?${encode(poisoned, value)}`, cookie: browser }
            : { kind: 'page', method: route.method, path, body: encode(poisoned, value), cookie: browser });
        }
        if (!inQuery) {
          for (const value of Object.values(BAD_JSON_VALUES)) {
            const json = Object.fromEntries(fields.map((f) => [f, valid[f] ?? 'x']));
            probes.push({ kind: 'page', method: route.method, path, type: 'application/json', body: JSON.stringify({ ...json, [poisoned]: '§' }).replace('"§"', value), cookie: browser });
          }
        }
      }
      if (!pathsSeen.has(route.url)) {
        pathsSeen.add(route.url);
        for (const method of METHODS) probes.push({ kind: 'page', method, path, cookie: browser });
        probes.push(
          { kind: 'page', method: 'POST', path, body: '%zz=%&_csrf=%', cookie: browser },
          { kind: 'page', method: 'POST', path, body: `email=${'x'.repeat(70 * 1024)}`, cookie: browser },
          { kind: 'page', method: 'POST', path, type: 'application/json', body: '{"email": ', cookie: browser },
          { kind: 'page', method: 'GET', path: path.replace(uid, '%00'), cookie: browser },
          { kind: 'page', method: 'GET', path: path.replace(uid, 'x'.repeat(300)), cookie: browser },
          { kind: 'page', method: 'GET', path: path.replace('test-idp', 'a%20b;c=d'), cookie: browser },
          { kind: 'page', method: 'GET', path: `${path}%zz`, cookie: browser },
        );
      }
    }
    const problems = await sweep(probes);
    assert.equal(problems.length, 0, report(problems, probes.length));
  });
});

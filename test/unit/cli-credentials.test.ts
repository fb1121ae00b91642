// The CLI credential store: file permissions, one entry per server, and refresh (with rotation)
// through openid-client against a fake authorization server on 127.0.0.1.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { CredentialStore, NotSignedInError, configDir, serverKey, tokensFrom, type StoredTokens } from '../../src/cli/credentials.ts';
import { accessTokenFor, logout, whoami } from '../../src/cli/login.ts';

interface FakeServer {
  url: string;
  server: Server;
  tokenRequests: URLSearchParams[];
  revocations: URLSearchParams[];
  /** What the token endpoint does with a refresh request. */
  onRefresh: (form: URLSearchParams) => { status: number; body: unknown };
  /** Access tokens that /accounts/profiles/me accepts. */
  valid: Set<string>;
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of request) body += chunk;
  return new URLSearchParams(body);
}

async function startFake(): Promise<FakeServer> {
  const fake = { tokenRequests: [], revocations: [], valid: new Set<string>() } as unknown as FakeServer;
  fake.server = createServer(async (request, response) => {
    const json = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const path = new URL(request.url ?? '/', fake.url).pathname;
    if (path === '/.well-known/openid-configuration') {
      return json(200, {
        issuer: fake.url,
        authorization_endpoint: `${fake.url}/oauth/authorize`,
        token_endpoint: `${fake.url}/oauth/token`,
        revocation_endpoint: `${fake.url}/oauth/token/revocation`,
        jwks_uri: `${fake.url}/oauth/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
      });
    }
    if (path === '/oauth/token' && request.method === 'POST') {
      const form = await readForm(request);
      fake.tokenRequests.push(form);
      const { status, body } = fake.onRefresh(form);
      return json(status, body);
    }
    if (path === '/oauth/token/revocation' && request.method === 'POST') {
      fake.revocations.push(await readForm(request));
      return response.writeHead(200).end();
    }
    if (path === '/accounts/profiles/me') {
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      if (!token || !fake.valid.has(token)) return json(401, { error: { code: 'unauthorized', message: 'no' } });
      return json(200, { id: 'u-1', email: 'cli@example.test', first_name: 'Cli', last_name: 'User' });
    }
    return json(404, {});
  });
  await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  return fake;
}

const now = () => Math.floor(Date.now() / 1000);
const tokens = (overrides: Partial<StoredTokens> = {}): StoredTokens => ({
  access_token: 'at-old', refresh_token: 'rt-old', token_type: 'Bearer', scope: 'openid profile:read', expires_at: now() + 3600, client_id: 'atrium-cli', saved_at: new Date().toISOString(), ...overrides,
});

describe('CLI credentials', () => {
  let dir: string;
  let store: CredentialStore;
  let fake: FakeServer;

  before(async () => {
    fake = await startFake();
  });
  after(() => new Promise<void>((resolve) => fake.server.close(() => resolve())));
  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'atrium-cli-')), 'config');
    store = new CredentialStore(dir);
    fake.tokenRequests.length = 0;
    fake.revocations.length = 0;
    fake.valid.clear();
    let issued = 0;
    fake.onRefresh = (form) => {
      if (form.get('grant_type') !== 'refresh_token' || form.get('client_id') !== 'atrium-cli') return { status: 400, body: { error: 'invalid_request' } };
      issued += 1;
      fake.valid.add(`at-${issued}`);
      return { status: 200, body: { access_token: `at-${issued}`, refresh_token: `rt-${issued}`, token_type: 'Bearer', expires_in: 600, scope: 'openid profile:read' } };
    };
  });
  afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

  test('the file is 0600 in a 0700 directory, one entry per server however it is spelled', () => {
    store.save('http://LOCALHOST:8000/', tokens());
    store.save('https://atrium.example.com', tokens({ access_token: 'other' }));
    assert.equal(statSync(store.file).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(store.get('http://localhost:8000')?.access_token, 'at-old');
    assert.equal(store.get('https://atrium.example.com/')?.access_token, 'other');
    assert.deepEqual(store.servers().sort(), ['http://localhost:8000', 'https://atrium.example.com']);
    // A file someone loosened is written back as 0600.
    writeFileSync(store.file, readFileSync(store.file), { mode: 0o644 });
    store.save('http://localhost:8000', tokens({ access_token: 'again' }));
    assert.equal(statSync(store.file).mode & 0o777, 0o600);
    assert.equal(store.delete('http://localhost:8000/'), true);
    assert.equal(store.delete('http://localhost:8000'), false);
    assert.equal(store.get('http://localhost:8000'), undefined);
    assert.equal(store.get('https://atrium.example.com')?.access_token, 'other');
  });

  test('ATRIUM_CONFIG_DIR overrides ~/.config/atrium; server URLs must be http(s)', () => {
    assert.equal(configDir({ ATRIUM_CONFIG_DIR: '/x/y' }), '/x/y');
    assert.equal(configDir({ XDG_CONFIG_HOME: '/cfg' }), '/cfg/atrium');
    assert.match(configDir({}), /\.config\/atrium$/);
    assert.equal(serverKey('https://a.example/base/'), 'https://a.example/base');
    assert.throws(() => serverKey('ftp://a.example'));
  });

  test('tokensFrom keeps the old refresh token when a refresh response carries none', () => {
    const at = Date.parse('2026-01-01T00:00:00Z');
    const first = tokensFrom({ access_token: 'a', refresh_token: 'r', expires_in: 60 }, 'atrium-cli', undefined, at);
    assert.equal(first.expires_at, at / 1000 + 60);
    assert.equal(first.token_type, 'Bearer');
    const second = tokensFrom({ access_token: 'b', expires_in: 60 }, 'atrium-cli', first, at);
    assert.equal(second.refresh_token, 'r');
  });

  test('a fresh token is used as is; an expiring one is refreshed once and the rotated tokens saved', async () => {
    store.save(fake.url, tokens());
    assert.equal(await accessTokenFor(fake.url, store), 'at-old');
    assert.equal(fake.tokenRequests.length, 0);

    store.save(fake.url, tokens({ expires_at: now() + 10 })); // inside the 30 s margin
    const [a, b] = await Promise.all([accessTokenFor(fake.url, store), accessTokenFor(fake.url, store)]);
    assert.equal(a, 'at-1');
    assert.equal(b, 'at-1', 'the second caller uses what the first one got');
    assert.equal(fake.tokenRequests.length, 1, 'one refresh for parallel callers: a rotated token must not be reused');
    assert.equal(fake.tokenRequests[0]!.get('refresh_token'), 'rt-old');
    const saved = store.get(fake.url)!;
    assert.equal(saved.refresh_token, 'rt-1');
    assert.ok(saved.expires_at! > now() + 500);
    assert.equal(statSync(store.file).mode & 0o777, 0o600);
  });

  test('a refused refresh token forgets the sign-in; no refresh token means sign in again', async () => {
    store.save(fake.url, tokens({ expires_at: now() - 1 }));
    fake.onRefresh = () => ({ status: 400, body: { error: 'invalid_grant', error_description: 'grant request is invalid' } });
    await assert.rejects(accessTokenFor(fake.url, store), NotSignedInError);
    assert.equal(store.get(fake.url), undefined);

    store.save(fake.url, tokens({ expires_at: now() - 1, refresh_token: undefined }));
    await assert.rejects(accessTokenFor(fake.url, store), /expired\. Run: npx atrium login --server /);
    await assert.rejects(accessTokenFor('http://127.0.0.1:9', store), /Not signed in/);
  });

  test('whoami refreshes a token the server rejects, once', async () => {
    store.save(fake.url, tokens()); // looks fresh, but the server does not accept at-old
    const profile = await whoami(fake.url, store);
    assert.equal(profile.email, 'cli@example.test');
    assert.equal(fake.tokenRequests.length, 1);
    assert.equal(store.get(fake.url)?.access_token, 'at-1');
  });

  test('logout revokes the refresh token and deletes the entry', async () => {
    store.save(fake.url, tokens());
    const result = await logout(fake.url, store);
    assert.deepEqual(result, { signedIn: true, revoked: true });
    assert.equal(fake.revocations.length, 1);
    assert.equal(fake.revocations[0]!.get('token'), 'rt-old');
    assert.equal(fake.revocations[0]!.get('token_type_hint'), 'refresh_token');
    assert.equal(fake.revocations[0]!.get('client_id'), 'atrium-cli');
    assert.equal(store.get(fake.url), undefined);
    assert.deepEqual(await logout(fake.url, store), { signedIn: false, revoked: false });
  });
});

// Three real `atrium serve` processes on one PostgreSQL and one S3-compatible store, behind a
// round-robin proxy (ATRIUM_TRUST_PROXY=1, ATRIUM_PUBLIC_URL = the proxy), as operators deploy them:
// the official SDK's core flows, files written by one process and read (whole and by range) by the
// others, an API key revoked on one and refused by the others within ATRIUM_AUTH_CACHE_SECONDS, an
// OAuth sign-in whose steps land on different processes, a webhook burst delivered once each, and
// `atrium keys rotate` picked up by every process. The in-process version is
// test/integration/three-instances.test.ts; this one checks what only separate processes share.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import * as oidc from 'openid-client';
import type * as Sdk from '@meshagent/meshagent';
import { pgUrl, requireOrSkip } from '../support/env.ts';
import { EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, jwtClaims, signInAndConsent } from '../support/oauth.ts';
import { roundRobin, type RoundRobin } from '../support/proxy.ts';
import { startLocalS3, type LocalS3 } from '../support/s3.ts';
import { call, isolatedDatabase } from '../support/service.ts';
import { atriumCommand, childEnv, sleep, spawnAtrium, startReceiver, verifyDelivery, type AtriumChild, type Receiver } from '../support/webhooks.ts';

// The SDK's "import" build does not load on Node 24 (see test/e2e/sdk.test.ts): require() it.
const require = createRequire(import.meta.url);
const { Meshagent, RoomException } = require('@meshagent/meshagent') as typeof Sdk;

const PASSWORD = 'correct horse battery staple';
const EMAIL = `three-${randomUUID()}@example.test`;
const CACHE_SECONDS = 1;
const REFRESH_SECONDS = 1;

describe('three atrium serve processes behind a round-robin proxy', { timeout: 120_000 }, () => {
  let s3: LocalS3;
  let proxy: RoundRobin;
  let receiver: Receiver;
  let instances: AtriumChild[] = [];
  let env: Record<string, string>;
  let boot: { project_id: string; api_key: string; user_token: string; user_id: string };
  let cleanUp = async () => {};
  const project = () => `/accounts/projects/${boot.project_id}`;

  before(async () => {
    if (!pgUrl) return;
    s3 = await startLocalS3();
    receiver = await startReceiver();
    proxy = await roundRobin(() => instances.map((i) => i.url), () => '203.0.113.30');
    const database = await isolatedDatabase('postgres');
    cleanUp = () => database.drop();
    env = {
      ...childEnv(database), ...s3.env, ...EMAIL_LOGIN_ENV,
      ATRIUM_PUBLIC_URL: proxy.url, ATRIUM_TRUST_PROXY: '1', ATRIUM_AUTH_CACHE_SECONDS: String(CACHE_SECONDS),
      ATRIUM_KEY_REFRESH_SECONDS: String(REFRESH_SECONDS), ATRIUM_JOBS_POLL_MS: '200', ATRIUM_JOBS_BATCH_SIZE: '10',
    };
    boot = JSON.parse(atriumCommand(['bootstrap', '--email', EMAIL, '--password', PASSWORD, '--project', 'three', '--json'], env));
    instances = await Promise.all([0, 1, 2].map(() => spawnAtrium(env)));
  });
  after(async () => {
    await Promise.all(instances.map((i) => i.kill('SIGTERM')));
    instances = [];
    await proxy?.close();
    await receiver?.close();
    await s3?.stop();
    await cleanUp();
  });

  test('the official SDK through the proxy: rooms, connect, API keys, storage, each call on the next process', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const asUser = new Meshagent({ baseUrl: proxy.url, token: boot.user_token });
    const asKey = new Meshagent({ baseUrl: proxy.url, token: boot.api_key });
    const from = proxy.log.length;

    assert.equal((await asUser.getProject(boot.project_id)).id, boot.project_id);
    const room = await asKey.createRoom({ projectId: boot.project_id, name: 'three-lobby', metadata: { floor: '1' } });
    assert.deepEqual(await asKey.getRoom(boot.project_id, 'three-lobby'), { id: room.id, name: 'three-lobby', metadata: { floor: '1' }, annotations: {} });
    assert.deepEqual((await asKey.listRooms(boot.project_id)).map((r) => r.name), ['three-lobby']);

    // A room token minted by one process validates on every process.
    const info = await asUser.connectRoom(boot.project_id, 'three-lobby');
    assert.equal(info.roomName, 'three-lobby');
    for (const instance of instances) {
      const validated = await call(instance, 'POST', '/api/participant-token/validate', { json: { token: info.jwt } });
      assert.equal(validated.status, 200, JSON.stringify(validated.body));
      assert.equal(validated.body.sub, boot.project_id);
    }

    const created = await asUser.createApiKey(boot.project_id, 'three key', 'made through the proxy');
    const withNewKey = new Meshagent({ baseUrl: proxy.url, token: created.value as string });
    for (let i = 0; i < 3; i++) assert.equal((await withNewKey.getProject(boot.project_id)).id, boot.project_id);

    const bytes = randomBytes(300_000);
    await asKey.upload({ projectId: boot.project_id, path: 'sdk/blob.bin', data: bytes });
    for (let i = 0; i < 3; i++) assert.ok(Buffer.from(await withNewKey.download({ projectId: boot.project_id, path: 'sdk/blob.bin' })).equals(bytes), `download ${i}`);

    await asUser.deleteApiKey(boot.project_id, created.id as string);
    await sleep(CACHE_SECONDS * 1000 + 200);
    for (let i = 0; i < 3; i++) {
      await assert.rejects(withNewKey.getProject(boot.project_id), (e: unknown) => e instanceof RoomException && /Status code: 401\b/.test((e as Error).message));
    }
    await asKey.deleteRoom(boot.project_id, room.id);
    assert.deepEqual(await asKey.listRooms(boot.project_id), []);
    const served = new Set(proxy.log.slice(from).map((r) => r.instance));
    assert.deepEqual([...served].sort(), [0, 1, 2], 'every process served SDK calls');
  });

  test('a file uploaded to one process downloads byte for byte, whole and by range, from the others', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const storage = (path: string) => `/projects/${boot.project_id}/storage${path}`;
    const body = randomBytes(6 * 1024 * 1024 + 11);
    const up = await call(instances[0]!, 'POST', storage('/upload?path=shared/big.bin'), { token: boot.api_key, body, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    for (const instance of instances.slice(1)) {
      const whole = await fetch(`${instance.url}${storage('/download?path=shared/big.bin')}`, { headers: { authorization: `Bearer ${boot.api_key}` } });
      assert.equal(whole.status, 200);
      assert.ok(Buffer.from(await whole.arrayBuffer()).equals(body));
    }
    // Across the 5 MiB part boundary of the multipart upload.
    const start = 5 * 1024 * 1024 - 100;
    const ranged = await fetch(`${instances[2]!.url}${storage('/download?path=shared/big.bin')}`, { headers: { authorization: `Bearer ${boot.api_key}`, range: `bytes=${start}-${start + 999}` } });
    assert.equal(ranged.status, 206);
    assert.equal(ranged.headers.get('content-range'), `bytes ${start}-${start + 999}/${body.length}`);
    assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(body.subarray(start, start + 1000)));
  });

  test('an API key revoked on one process is refused by each of the others within ATRIUM_AUTH_CACHE_SECONDS', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const created = await call(instances[0]!, 'POST', `${project()}/api-keys`, { token: boot.api_key, json: { name: 'doomed' } });
    assert.equal(created.status, 201);
    const rooms = (instance: AtriumChild) => call(instance, 'GET', `${project()}/rooms`, { token: created.body.value });
    // Every process has the key in its cache.
    for (const instance of instances) assert.equal((await rooms(instance)).status, 200);
    assert.equal((await call(instances[1]!, 'DELETE', `${project()}/api-keys/${created.body.id}`, { token: boot.api_key })).status, 200);
    // Every cache entry was written before the revocation, so one cache time after it a request is
    // refused by every process, whichever took the revocation.
    await sleep(CACHE_SECONDS * 1000 + 50);
    for (const [i, instance] of instances.entries()) assert.equal((await rooms(instance)).status, 401, `instance ${i}`);
  });

  test('an OAuth authorization-code + PKCE sign-in whose steps land on different processes', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const redirectUri = 'http://127.0.0.1:9/three/callback';
    const registered = await call(proxy.url, 'POST', `${project()}/oauth/clients`, {
      token: boot.api_key,
      json: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: [redirectUri], scope: 'openid profile email offline_access profile:read' },
    });
    assert.equal(registered.status, 201, JSON.stringify(registered.body));
    const config = await discover(proxy, { clientId: registered.body.client_id, clientSecret: registered.body.client_secret });
    assert.equal(config.serverMetadata().issuer, proxy.url);

    const from = proxy.log.length;
    const request = await authorizationRequest(config, redirectUri, 'openid profile email offline_access profile:read', { prompt: 'consent' });
    const callback = await signInAndConsent(new FormBrowser(proxy.url), request, redirectUri, EMAIL, PASSWORD);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
    const steps = proxy.log.slice(from).filter((r) => !r.path.startsWith('/.well-known'));
    assert.ok(steps.some((r) => r.path.startsWith('/oauth/token')), 'the code was redeemed through the proxy');
    assert.deepEqual([...new Set(steps.map((r) => r.instance))].sort(), [0, 1, 2], `the steps spread over the processes: ${steps.map((r) => `${r.instance} ${r.method} ${r.path.split('?')[0]}`).join(', ')}`);

    assert.equal(jwtClaims(tokens.id_token!).sub, boot.user_id);
    assert.equal(tokens.claims()!.iss, proxy.url);
    // The access token works on every process, and the refresh token on whichever process takes it.
    for (let i = 0; i < 3; i++) assert.equal((await oidc.fetchUserInfo(config, tokens.access_token, boot.user_id)).email, EMAIL);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    assert.notEqual(refreshed.access_token, tokens.access_token);
    assert.equal((await oidc.fetchUserInfo(config, refreshed.access_token, boot.user_id)).sub, boot.user_id);
  });

  test('a burst of 200 events is delivered to the receiver once each, by more than one process', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const secret = randomBytes(24).toString('hex');
    const hook = await call(proxy.url, 'POST', `${project()}/webhooks`, { token: boot.api_key, json: { name: 'burst', url: `${receiver.url}/hook`, events: ['storage.file.updated'], secret } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const count = 200;
    const paths = Array.from({ length: count }, (_, i) => `burst/${String(i).padStart(3, '0')}.txt`);
    // Ten writers at a time, through the proxy: the events are committed by all three processes.
    for (let i = 0; i < count; i += 10) {
      const answers = await Promise.all(paths.slice(i, i + 10).map((path) => call(proxy.url, 'POST', `/projects/${boot.project_id}/storage/upload?path=${path}`, { token: boot.api_key, body: path, headers: { 'content-type': 'application/octet-stream' } })));
      assert.deepEqual(answers.map((a) => a.status), Array(answers.length).fill(200));
    }
    await receiver.waitFor((all) => new Set(all.map((r) => r.headers['service-event-id'])).size >= count, 60_000);
    // Late duplicates would arrive now: let every process poll a few more times.
    await sleep(1500);
    const received = receiver.received;
    const ids = received.map((r) => r.headers['service-event-id']);
    assert.equal(new Set(ids).size, count, 'no loss');
    assert.equal(received.length, count, `no duplicates (${received.length} deliveries of ${count} events)`);
    assert.deepEqual(received.map((r) => r.json.data.path).sort(), paths);
    for (const r of received) await verifyDelivery(secret, r.body, r.headers['service-signature']);
    const delivered = await Promise.all(instances.map(async (instance) => {
      const text = await (await fetch(`${instance.url}/metrics`)).text();
      return Number(/atrium_jobs_settled_total\{topic="webhooks\.deliver",outcome="done"\} (\d+)/.exec(text)?.[1] ?? 0);
    }));
    assert.equal(delivered.reduce((a, b) => a + b, 0), count, `deliveries per process: ${delivered.join(' + ')}`);
    assert.ok(delivered.filter((n) => n > 0).length >= 2, `more than one process delivered: ${delivered.join(' + ')}`);
    process.stdout.write(`# webhook burst: ${count} events, deliveries per process ${delivered.join(' + ')}\n`);
  });

  test('atrium keys rotate mid-run: every process signs with the new kid within the refresh time; earlier tokens still verify', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const mint = async (instance: AtriumChild) => {
      const minted = await call(instance, 'POST', `${project()}/participant-tokens`, { token: boot.api_key, json: { name: 'agent' } });
      assert.equal(minted.status, 200, JSON.stringify(minted.body));
      return minted.body.token as string;
    };
    const validEverywhere = async (token: string) => {
      for (const [i, instance] of instances.entries()) {
        assert.equal((await call(instance, 'POST', '/api/participant-token/validate', { json: { token } })).status, 200, `instance ${i}`);
      }
    };
    const before = await Promise.all(instances.map(mint));
    const oldKid = decodeProtectedHeader(before[0]!).kid;
    assert.ok(before.every((token) => decodeProtectedHeader(token).kid === oldKid));

    const rotated = JSON.parse(atriumCommand(['keys', 'rotate'], env)) as { kid: string; signing_within_seconds: number };
    assert.equal(rotated.signing_within_seconds, REFRESH_SECONDS);
    assert.notEqual(rotated.kid, oldKid);
    // Each process reads the keys every ATRIUM_KEY_REFRESH_SECONDS: one period (plus a second for the
    // read itself on a busy machine) after the rotation, every process signs with the new key.
    await sleep(REFRESH_SECONDS * 1000 + 1000);
    const newTokens = await Promise.all(instances.map(mint));
    assert.deepEqual(newTokens.map((token) => decodeProtectedHeader(token).kid), [rotated.kid, rotated.kid, rotated.kid]);
    for (const token of [...before, ...newTokens]) await validEverywhere(token);
    const jwks = (await (await fetch(`${proxy.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    assert.deepEqual(jwks.keys.map((k) => k.kid).sort(), [oldKid, rotated.kid].sort());
  });
});

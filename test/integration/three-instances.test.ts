// Three instances on one PostgreSQL and one S3-compatible store behind a small round-robin proxy
// (ATRIUM_TRUST_PROXY=1, ATRIUM_PUBLIC_URL = the proxy): files, revocations, rate limits and a
// signing-key rotation behave as they would on one instance.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { rotateSigningKey } from '../../src/platform/crypto/signing-keys.ts';
import { pgUrl, requireOrSkip } from '../support/env.ts';
import { roundRobin, type RoundRobin } from '../support/proxy.ts';
import { startLocalS3, type LocalS3 } from '../support/s3.ts';
import { call, createTenant, isolatedDatabase, startTestService, type Tenant, type TestService } from '../support/service.ts';

describe('three instances behind a round-robin proxy', () => {
  let s3: LocalS3;
  let proxy: RoundRobin;
  let instances: TestService[] = [];
  let drop: () => Promise<void> = async () => {};
  let tenant: Tenant;
  let client = '203.0.113.10';
  before(async () => {
    if (!pgUrl) return;
    s3 = await startLocalS3();
    proxy = await roundRobin(() => instances.map((i) => i.url), () => client);
    const database = await isolatedDatabase('postgres');
    drop = database.drop;
    const env = {
      ...database.env, ...s3.env, ATRIUM_PUBLIC_URL: proxy.url, ATRIUM_TRUST_PROXY: '1', ATRIUM_AUTH_CACHE_SECONDS: '1',
      ATRIUM_KEY_REFRESH_SECONDS: '1', ATRIUM_TOKEN_LIMIT_PER_IP: '6',
    };
    for (let i = 0; i < 3; i++) instances.push(await startTestService('postgres', env));
    tenant = await createTenant(instances[0]!, 'three');
  });
  after(async () => {
    for (const instance of instances) await instance.stop();
    instances = [];
    await proxy?.close();
    await drop();
    await s3?.stop();
  });

  test('an upload through one instance downloads byte for byte through every other', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const body = randomBytes(7 * 1024 * 1024 + 3);
    const up = await call(proxy.url, 'POST', `/projects/${tenant.projectId}/storage/upload?path=shared/blob.bin`, { token: tenant.apiKey, body, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(up.status, 200);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${proxy.url}/projects/${tenant.projectId}/storage/download?path=shared/blob.bin`, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(body));
    }
    assert.deepEqual(proxy.hits.map((n) => n > 0), [true, true, true], 'every instance answered');
  });

  test('a key revoked on one instance is refused by all within ATRIUM_AUTH_CACHE_SECONDS', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const created = await call(proxy.url, 'POST', `/accounts/projects/${tenant.projectId}/api-keys`, { token: tenant.apiKey, json: { name: 'short-lived' } });
    assert.equal(created.status, 201);
    const listRooms = (i: number) => call(instances[i]!, 'GET', `/accounts/projects/${tenant.projectId}/rooms`, { token: created.body.value });
    for (let i = 0; i < 3; i++) assert.equal((await listRooms(i)).status, 200);
    assert.equal((await call(instances[0]!, 'DELETE', `/accounts/projects/${tenant.projectId}/api-keys/${created.body.id}`, { token: tenant.apiKey })).status, 200);
    const revokedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    for (let i = 0; i < 3; i++) assert.equal((await listRooms(i)).status, 401, `instance ${i}`);
    assert.ok(Date.now() - revokedAt < 5000);
  });

  test('the token endpoint limit counts the client the proxy names, over all instances', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    client = '203.0.113.77';
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await fetch(`${proxy.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    assert.deepEqual(statuses.map((s) => s === 429), [false, false, false, false, false, false, true, true], String(statuses));
    // Another client behind the same proxy has its own budget.
    client = '203.0.113.78';
    assert.notEqual((await fetch(`${proxy.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' })).status, 429);
  });

  test('a signing-key rotation mid-run: tokens from before and after validate through every instance', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const mint = async () => (await call(proxy.url, 'POST', `/accounts/projects/${tenant.projectId}/participant-tokens`, { token: tenant.apiKey, json: { name: 'agent' } })).body.token as string;
    const validEverywhere = async (token: string) => {
      for (let i = 0; i < 3; i++) assert.equal((await call(instances[i]!, 'POST', '/api/participant-token/validate', { json: { token } })).status, 200, `instance ${i}`);
    };
    const old = await mint();
    await validEverywhere(old);
    const kid = await rotateSigningKey(instances[0]!.ctx.db, instances[0]!.ctx.secrets);
    const started = Date.now();
    const seen = new Set<string>();
    // Until all three instances (round robin) have minted with the new key, every token validates everywhere.
    while (Date.now() - started < 5000) {
      const token = await mint();
      await validEverywhere(token);
      if (decodeProtectedHeader(token).kid === kid) seen.add(token);
      if (instances.every((i) => i.ctx.keys.current.kid === kid) && seen.size >= 3) break;
    }
    assert.ok(instances.every((i) => i.ctx.keys.current.kid === kid), 'all instances sign with the new key');
    assert.ok(Date.now() - started < 3000, `converged in ${Date.now() - started} ms`);
    await validEverywhere(old);
    const jwks = (await (await fetch(`${proxy.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    assert.ok(jwks.keys.some((k) => k.kid === kid) && jwks.keys.length === 2);
  });
});

// Project storage on an S3-compatible store: two instances on one PostgreSQL and one bucket see the
// same files (an upload to one is a download from the other), and nothing lands in a data dir.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pgUrl, requireOrSkip } from '../support/env.ts';
import { startLocalS3, type LocalS3 } from '../support/s3.ts';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../support/service.ts';

describe('project storage on S3, two instances', () => {
  let s3: LocalS3;
  let a: TestService;
  let b: TestService;
  let tenant: Tenant;
  before(async () => {
    if (!pgUrl) return;
    s3 = await startLocalS3();
    const env = { ...s3.env, ATRIUM_S3_PREFIX: 'instances/' };
    a = await startTestService('postgres', env);
    b = await startTestService('postgres', { ...env, DATABASE_URL: a.ctx.config.databaseUrl! });
    tenant = await createTenant(a, 's3');
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await s3?.stop();
  });

  const storage = (path: string) => `/projects/${tenant.projectId}/storage${path}`;

  test('upload on one instance, list, download and delete on the other', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const big = randomBytes(6 * 1024 * 1024 + 5);
    const up = await call(a, 'POST', storage(`/upload?path=${encodeURIComponent('data/big.bin')}`), { token: tenant.apiKey, body: big, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(up.status, 200);
    assert.equal(up.body.size, big.length);

    const down = await fetch(`${b.url}${storage('/download?path=data/big.bin')}`, { headers: { authorization: `Bearer ${tenant.apiKey}` } });
    assert.equal(down.status, 200);
    assert.equal(down.headers.get('content-length'), String(big.length));
    assert.ok(Buffer.from(await down.arrayBuffer()).equals(big));
    // A range across the 5 MiB part boundary of the multipart upload.
    const start = 5 * 1024 * 1024 - 10;
    const ranged = await fetch(`${b.url}${storage('/download?path=data/big.bin')}`, { headers: { authorization: `Bearer ${tenant.apiKey}`, range: `bytes=${start}-${start + 99}` } });
    assert.equal(ranged.status, 206);
    assert.equal(ranged.headers.get('content-range'), `bytes ${start}-${start + 99}/${big.length}`);
    assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(big.subarray(start, start + 100)));
    const past = await fetch(`${b.url}${storage('/download?path=data/big.bin')}`, { headers: { authorization: `Bearer ${tenant.apiKey}`, range: `bytes=${big.length}-` } });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${big.length}`);

    const listed = await call(b, 'GET', storage('?path=data'), { token: tenant.apiKey });
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.files.map((f: { name: string; size: number }) => [f.name, f.size]), [['big.bin', big.length]]);

    const removed = await call(b, 'DELETE', storage('?path=data/big.bin'), { token: tenant.apiKey });
    assert.ok(removed.status < 300, `delete answered ${removed.status}`);
    assert.equal((await fetch(`${a.url}${storage('/download?path=data/big.bin')}`, { headers: { authorization: `Bearer ${tenant.apiKey}` } })).status, 404);
    for (const service of [a, b]) assert.equal(existsSync(join(service.dataDir, 'blobs')), false, 'nothing in the data directory');
  });

  test('a body over ATRIUM_MAX_UPLOAD_BYTES is refused with 413 on S3 too, leaving nothing', async (t) => {
    if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
    const small = await startTestService('postgres', { ...s3.env, ATRIUM_S3_PREFIX: 'instances/', ATRIUM_MAX_UPLOAD_BYTES: '1000', DATABASE_URL: a.ctx.config.databaseUrl! });
    try {
      const up = await call(small, 'POST', storage('/upload?path=limit.bin'), { token: tenant.apiKey, body: randomBytes(5000), headers: { 'content-type': 'application/octet-stream' } });
      assert.equal(up.status, 413);
      assert.equal((await fetch(`${a.url}${storage('/download?path=limit.bin')}`, { headers: { authorization: `Bearer ${tenant.apiKey}` } })).status, 404);
    } finally {
      await small.stop();
    }
  });
});

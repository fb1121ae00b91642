// What goes over the wire compressed: the console's hashed assets as the brotli or gzip file built
// beside each, cached for a year; large JSON answers compressed for clients that accept it; small
// answers (the hot paths) and clients that accept nothing as they are.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { COMPRESS_FROM_BYTES } from '../../src/platform/http/compression.ts';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../support/service.ts';

const ASSETS = resolve(import.meta.dirname, '../../console/dist/assets');

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** A request whose answer is read as it came over the wire (fetch would decompress it). */
function raw(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  return new Promise((resolveRaw, reject) => {
    request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolveRaw({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject).end();
  });
}

describe('compressed answers [pglite]', () => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService('pglite');
    tenant = await createTenant(service, 'compression');
    for (let i = 0; i < 150; i++) {
      const created = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms`, { token: tenant.apiKey, json: { name: `room-${String(i).padStart(3, '0')}`, metadata: { topic: 'a room with a few words of metadata' } } });
      assert.equal(created.status, 201);
    }
  });
  after(() => service?.stop());

  test('the console\'s hashed assets: brotli, else gzip, else as built; a year\'s cache either way', async () => {
    const script = readdirSync(ASSETS).find((name) => /^index-.*\.js$/.test(name) || /^App-.*\.js$/.test(name))!;
    const url = `${service.url}/console/assets/${script}`;
    const plain = await raw(url);
    const br = await raw(url, { 'accept-encoding': 'gzip, deflate, br' });
    const gz = await raw(url, { 'accept-encoding': 'gzip' });
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(gz.headers['content-encoding'], 'gzip');
    for (const answer of [plain, br, gz]) {
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.match(String(answer.headers.vary), /accept-encoding/i);
      assert.match(String(answer.headers['content-type']), /javascript/);
    }
    assert.deepEqual(brotliDecompressSync(br.body), plain.body);
    assert.deepEqual(gunzipSync(gz.body), plain.body);
    assert.ok(br.body.length < plain.body.length / 2, `brotli ${br.body.length} of ${plain.body.length} bytes`);
  });

  test('a large JSON answer is compressed for a client that accepts it; a small one never is', async () => {
    const list = `${service.url}/accounts/projects/${tenant.projectId}/rooms?limit=1000`;
    const auth = { authorization: `Bearer ${tenant.apiKey}` };
    const plain = await raw(list, auth);
    assert.ok(plain.body.length >= COMPRESS_FROM_BYTES, `the list is ${plain.body.length} bytes`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(String(plain.headers.vary), /accept-encoding/i);
    const br = await raw(list, { ...auth, 'accept-encoding': 'gzip, br' });
    const gz = await raw(list, { ...auth, 'accept-encoding': 'gzip;q=1, br;q=0' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(Number(br.headers['content-length']), br.body.length);
    assert.deepEqual(JSON.parse(brotliDecompressSync(br.body).toString()), JSON.parse(plain.body.toString()));
    assert.deepEqual(JSON.parse(gunzipSync(gz.body).toString()), JSON.parse(plain.body.toString()));
    assert.ok(br.body.length < plain.body.length / 5, `brotli ${br.body.length} of ${plain.body.length} bytes`);

    // The hot path: one room, a few hundred bytes, sent as it is whatever the client accepts.
    const one = await raw(`${service.url}/accounts/projects/${tenant.projectId}/rooms/room-007`, { ...auth, 'accept-encoding': 'gzip, br' });
    assert.equal(one.status, 200);
    assert.equal(one.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(one.body.toString()).name, 'room-007');
  });
});

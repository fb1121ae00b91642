// Project storage: raw uploads streamed to the blob store, downloads, path rules and the size limit.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { eventually } from '../support/webhooks.ts';

/** Every file under `dir`, relative. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
}

forEachEngine('project storage', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'storage');
  });
  after(() => service?.stop());

  const base = (t: Tenant = tenant) => `/projects/${t.projectId}/storage`;
  const upload = (path: string, body: Uint8Array | string, token = tenant.apiKey, t = tenant, headers: Record<string, string> = { 'content-type': 'application/octet-stream' }) =>
    call(t === tenant ? service : service, 'POST', `${base(t)}/upload?path=${encodeURIComponent(path)}`, { token, body, headers });
  const download = async (path: string, token = tenant.apiKey, t = tenant, range?: string) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(range === undefined ? {} : { range }) };
    const response = await fetch(`${service.url}${base(t)}/download?path=${encodeURIComponent(path)}`, { headers });
    const bytes = new Uint8Array(await response.arrayBuffer());
    return { status: response.status, bytes, headers: response.headers, json: () => JSON.parse(Buffer.from(bytes).toString('utf8')) };
  };

  test('upload then download returns the same bytes (text, binary, 5 MiB), overwrite replaces', async () => {
    const text = await upload('docs/readme.md', '# hello\n');
    assert.equal(text.status, 200);
    assert.deepEqual(text.body, { path: 'docs/readme.md', size: 8 });
    const got = await download('docs/readme.md');
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('content-type'), 'application/octet-stream');
    assert.equal(Buffer.from(got.bytes).toString('utf8'), '# hello\n');

    const binary = new Uint8Array(256).map((_, i) => i);
    assert.equal((await upload('bin/all-bytes.bin', binary)).status, 200);
    assert.deepEqual((await download('bin/all-bytes.bin')).bytes, binary);

    const big = randomBytes(5 * 1024 * 1024 + 17);
    const bigUp = await upload('big/blob.dat', big);
    assert.equal(bigUp.status, 200);
    assert.equal(bigUp.body.size, big.length);
    const bigDown = await download('big/blob.dat');
    assert.equal(bigDown.headers.get('content-length'), String(big.length));
    assert.ok(Buffer.from(bigDown.bytes).equals(big));

    assert.equal((await upload('docs/readme.md', 'v2')).status, 200);
    assert.equal(Buffer.from((await download('docs/readme.md')).bytes).toString(), 'v2');

    // Empty files are files.
    const empty = await upload('empty.txt', new Uint8Array(0));
    assert.equal(empty.status, 200, JSON.stringify(empty.body));
    assert.equal(empty.body.size, 0);
    const emptyDown = await download('empty.txt');
    assert.equal(emptyDown.status, 200);
    assert.equal(emptyDown.bytes.length, 0);

    // Whatever the content type, the body is stored as raw bytes.
    for (const [type, body] of [['application/json', '{"a":1}'], ['text/plain', 'plain'], ['application/x-www-form-urlencoded', 'a=b'], ['image/png', '\u0089PNG']] as const) {
      const r = await upload(`typed/${type.replace('/', '_')}`, body, tenant.apiKey, tenant, { 'content-type': type });
      assert.equal(r.status, 200, `${type}: ${JSON.stringify(r.body)}`);
      assert.equal(Buffer.from((await download(`typed/${type.replace('/', '_')}`)).bytes).toString(), body);
    }
    const untyped = await call(service, 'POST', `${base()}/upload?path=untyped.bin`, { token: tenant.apiKey, body: 'raw' });
    assert.equal(untyped.status, 200);
    const noBody = await call(service, 'POST', `${base()}/upload?path=no-body.bin`, { token: tenant.apiKey });
    assert.equal(noBody.status, 200, JSON.stringify(noBody.body));
    assert.equal(noBody.body.size, 0);
  });

  test('a single byte range is 206 with exactly those bytes; past the end is 416; anything else is the whole file', async () => {
    const bytes = randomBytes(5000);
    await upload('ranges/file.bin', bytes);
    const ranged = (range: string, path = 'ranges/file.bin') => download(path, tenant.apiKey, tenant, range);

    const whole = await download('ranges/file.bin');
    assert.equal(whole.headers.get('accept-ranges'), 'bytes', 'a plain download says ranges are accepted');
    assert.equal(whole.headers.get('content-range'), null);

    for (const [range, start, end] of [
      ['bytes=0-99', 0, 99], ['bytes=0-0', 0, 0], ['bytes=4990-', 4990, 4999], ['bytes=-7', 4993, 4999], ['bytes=1234-1234', 1234, 1234],
      // The last position is clamped to the file; a suffix longer than the file is all of it (RFC 9110).
      ['bytes=4999-99999', 4999, 4999], ['bytes=-9999', 0, 4999], ['bytes=0-', 0, 4999],
    ] as const) {
      const r = await ranged(range);
      assert.equal(r.status, 206, range);
      assert.equal(r.headers.get('content-range'), `bytes ${start}-${end}/5000`, range);
      assert.equal(r.headers.get('content-length'), String(end - start + 1), range);
      assert.equal(r.headers.get('accept-ranges'), 'bytes', range);
      assert.equal(r.headers.get('content-type'), 'application/octet-stream', range);
      assert.ok(Buffer.from(r.bytes).equals(bytes.subarray(start, end + 1)), `${range}: the bytes of the range`);
    }

    for (const range of ['bytes=5000-', 'bytes=5000-6000', 'bytes=-0', 'bytes=9000-9001,9005-9006']) {
      const r = await ranged(range);
      assert.equal(r.status, 416, range);
      assert.equal(r.headers.get('content-range'), 'bytes */5000', range);
      assert.equal(r.json().error.code, 'range_not_satisfiable', range);
    }
    await upload('ranges/empty', new Uint8Array(0));
    const empty = await ranged('bytes=0-', 'ranges/empty');
    assert.equal(empty.status, 416, 'no range of an empty file is satisfiable');
    assert.equal(empty.headers.get('content-range'), 'bytes */0');

    // Malformed headers, other units and several ranges are answered with the whole file (RFC 9110 allows it).
    for (const range of ['bytes=abc', 'bytes=1-x', '0-99', 'items=0-99', 'bytes=0-9,20-29', 'bytes', '']) {
      const r = await ranged(range);
      assert.equal(r.status, 200, JSON.stringify(range));
      assert.equal(r.headers.get('content-range'), null, range);
      assert.equal(r.headers.get('content-length'), '5000', range);
      assert.ok(Buffer.from(r.bytes).equals(bytes), `${range}: the whole file`);
    }

    // A range changes neither 404s nor access.
    assert.equal((await ranged('bytes=0-9', 'ranges/missing')).status, 404);
    const other = await createTenant(service, 'storage-range-other');
    assert.equal((await download('ranges/file.bin', other.apiKey, tenant, 'bytes=0-9')).status, 404);
  });

  test('missing files are 404', async () => {
    const r = await download('nothing/here.txt');
    assert.equal(r.status, 404);
    assert.equal(r.json().error.code, 'not_found');
    await upload('folder/inside.txt', 'x');
    assert.equal((await download('folder')).status, 404, 'a folder is not a file');
    assert.equal((await download('folder/inside.txt/deeper')).status, 404, 'below a file');
  });

  test('paths are normalised', async () => {
    const up = await upload('a//b/./c.txt', 'same');
    assert.equal(up.status, 200);
    assert.equal(up.body.path, 'a/b/c.txt');
    for (const alias of ['a/b/c.txt', 'a//b/./c.txt', './a/b/c.txt', 'a/b/c.txt/', 'a\\b\\c.txt']) {
      const r = await download(alias);
      assert.equal(r.status, 200, alias);
      assert.equal(Buffer.from(r.bytes).toString(), 'same');
    }
    // Names that only look special are ordinary.
    assert.equal((await upload('...', 'dots')).status, 200);
    assert.equal((await upload('a/..b/c..', 'dots')).status, 200);
    assert.equal((await upload('unicode/ünï 文件.txt', 'u')).status, 200);
    assert.equal(Buffer.from((await download('unicode/ünï 文件.txt')).bytes).toString(), 'u');
  });

  test('escaping, absolute, control-character and empty paths are 400', async () => {
    const bad = ['../secret', 'a/../../b', 'a/..', '..', '/etc/passwd', '\\windows', 'C:/x', 'a\u0000b', 'line\nbreak', 'tab\there', 'del\u007f', '', '.', './', '//', `${'x'.repeat(300)}.txt`, `dir/${'y'.repeat(256)}`, 'z'.repeat(1025)];
    for (const path of bad) {
      const up = await upload(path, 'nope');
      assert.equal(up.status, 400, `upload ${JSON.stringify(path.slice(0, 40))}: ${JSON.stringify(up.body)}`);
      assert.equal(typeof up.body.error.message, 'string');
      const down = await download(path);
      assert.equal(down.status, 400, `download ${JSON.stringify(path.slice(0, 40))}`);
    }
    assert.equal((await call(service, 'POST', `${base()}/upload`, { token: tenant.apiKey, body: 'x' })).status, 400, 'path is required');
    assert.equal((await call(service, 'GET', `${base()}/download`, { token: tenant.apiKey })).status, 400);
    // Nothing escaped the project's folder.
    const root = join(service.dataDir, 'blobs');
    assert.ok(filesUnder(root).every((f) => f.startsWith(`projects${'/'}`)), filesUnder(root).join());
  });

  test('a file and a folder of the same name conflict cleanly', async () => {
    await upload('clash/file', 'x');
    const under = await upload('clash/file/child', 'y');
    assert.equal(under.status, 409, JSON.stringify(under.body));
    const over = await upload('clash', 'z');
    assert.equal(over.status, 409, JSON.stringify(over.body));
    assert.equal(Buffer.from((await download('clash/file')).bytes).toString(), 'x');
  });

  test('members download but do not upload; other projects are 404', async () => {
    const member = await createUserWithToken(service, 'storage-member');
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token: tenant.apiKey, json: { user_id: member.userId } });
    await upload('shared/notes.txt', 'for members');
    assert.equal(Buffer.from((await download('shared/notes.txt', member.token)).bytes).toString(), 'for members');
    const denied = await upload('shared/notes.txt', 'overwritten', member.token);
    assert.equal(denied.status, 403);
    assert.equal(Buffer.from((await download('shared/notes.txt')).bytes).toString(), 'for members');

    const other = await createTenant(service, 'storage-other');
    assert.equal((await download('shared/notes.txt', other.apiKey, tenant)).status, 404);
    assert.equal((await upload('shared/notes.txt', 'x', other.apiKey, tenant)).status, 404);
    // Same path in another project is another file.
    assert.equal((await download('shared/notes.txt', other.apiKey, other)).status, 404);
  });

  test('an upload the client aborts half-way leaves nothing behind', async () => {
    const path = `aborted/${randomUUID()}.bin`;
    const temp = join(service.dataDir, 'blobs', '.tmp');
    const sending = request(`${service.url}${base()}/upload?path=${encodeURIComponent(path)}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' },
    });
    const aborted = new Promise<void>((resolve) => sending.once('close', resolve));
    sending.on('error', () => {});
    sending.write(Buffer.alloc(4096));
    // Abort only once the server is streaming the body into its temporary file.
    await eventually(async () => filesUnder(temp).length > 0, 10_000, 10);
    sending.destroy();
    await aborted;
    await eventually(async () => filesUnder(temp).length === 0, 10_000, 10);
    assert.equal((await download(path)).status, 404);
    // No folder was made for it either: a file may take the folder's name.
    assert.equal((await upload('aborted', 'a file')).status, 200);
  });

  test('an upload is answered once its audit entry is written, without waiting for other entries to join it', async () => {
    // Entries of refusals wait up to a second for others of their project; an upload's must not, or
    // every upload would take a second. Ten small uploads in sequence stay well under ten seconds,
    // and each entry is there as soon as its upload was answered: nothing lingers to be flushed.
    const uploadEntries = async () => {
      const listed = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/audit-log?action=storage.upload&page_size=100`, { token: tenant.apiKey });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      return (listed.body.entries as unknown[]).length;
    };
    const before = await uploadEntries();
    const started = performance.now();
    for (let i = 0; i < 10; i++) assert.equal((await upload(`quick/${i}.txt`, `file ${i}`)).status, 200);
    const seconds = (performance.now() - started) / 1000;
    assert.ok(seconds < 5, `ten uploads took ${seconds.toFixed(1)} s`);
    assert.equal(await uploadEntries(), before + 10);
  });

  test('uploads beyond ATRIUM_MAX_UPLOAD_BYTES are 413 and leave nothing behind', async () => {
    const limited = await startTestService(engine, { ATRIUM_MAX_UPLOAD_BYTES: '1024' });
    try {
      const t = await createTenant(limited, 'limited');
      const url = (path: string) => `${limited.url}/projects/${t.projectId}/storage/upload?path=${path}`;
      const headers = { authorization: `Bearer ${t.apiKey}`, 'content-type': 'application/octet-stream' };
      assert.equal((await fetch(url('keep.bin'), { method: 'POST', headers, body: new Uint8Array(1024) })).status, 200, 'exactly the limit is fine');

      for (const size of [1025, 64 * 1024, 8 * 1024 * 1024]) {
        const r = await fetch(url('too-big.bin'), { method: 'POST', headers, body: randomBytes(size) });
        assert.equal(r.status, 413, `${size} bytes`);
        assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'payload_too_large');
        // An oversize body replacing an existing file leaves the old one.
        const replace = await fetch(url('keep.bin'), { method: 'POST', headers, body: randomBytes(size) });
        assert.equal(replace.status, 413);
        await replace.arrayBuffer();
      }
      // Without a content length (chunked), the limit is enforced while streaming.
      const chunks = (async function* () {
        for (let i = 0; i < 64; i += 1) yield new Uint8Array(512);
      })();
      const chunked = await fetch(url('chunked.bin'), { method: 'POST', headers, body: ReadableStream.from(chunks), duplex: 'half' } as RequestInit);
      assert.equal(chunked.status, 413);
      assert.deepEqual(filesUnder(join(limited.dataDir, 'blobs', '.tmp')), [], 'the temporary file is gone when the 413 is sent');
      await chunked.arrayBuffer();

      const files = filesUnder(join(limited.dataDir, 'blobs'));
      assert.deepEqual(files, [`projects/${t.projectId}/keep.bin`]);
      const kept = await fetch(`${limited.url}/projects/${t.projectId}/storage/download?path=keep.bin`, { headers });
      assert.equal((await kept.arrayBuffer()).byteLength, 1024);
      // The service still serves requests afterwards.
      assert.equal((await call(limited, 'GET', '/healthz')).status, 200);
    } finally {
      await limited.stop();
    }
  });
});

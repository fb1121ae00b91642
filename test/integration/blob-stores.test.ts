// One contract for every blob store: the filesystem store (the default) and the S3 store against a
// local S3-compatible server. Bytes are compared, not just sizes and statuses.
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { S3BlobStore } from '../../src/platform/blobs/s3.ts';
import { BlobTooLargeError, FileBlobStore, type BlobStore, type ByteRange } from '../../src/platform/blobs/store.ts';
import { S3_TEST_CREDENTIALS, startLocalS3, type LocalS3 } from '../support/s3.ts';

const MiB = 1024 * 1024;

async function bytesOf(store: BlobStore, key: string): Promise<Buffer | undefined> {
  const got = await store.get(key);
  if (!got) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of got.stream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  assert.equal(got.size, bytes.length, 'the announced size is the size read');
  return bytes;
}

/** The bytes of one range of a blob, checking what the store says about it. */
async function rangeOf(store: BlobStore, key: string, choose: (size: number) => ByteRange | undefined): Promise<{ bytes: Buffer; size: number; range?: ByteRange } | undefined> {
  const got = await store.get(key, choose);
  if (!got) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of got.stream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  if (got.range) assert.equal(bytes.length, got.range.end - got.range.start + 1, 'the stream holds exactly the range');
  else assert.equal(bytes.length, got.size, 'no range: the whole blob');
  return { bytes, size: got.size, ...(got.range ? { range: got.range } : {}) };
}

/** A body of `total` pseudo-random bytes in 64 KiB chunks, produced lazily (never all in memory at once). */
function streamedBody(total: number, seed: string): { body: Readable; digest: () => string } {
  const hash = createHash('sha256');
  let sent = 0;
  let counter = 0;
  const body = new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const size = Math.min(64 * 1024, total - sent);
      const chunk = Buffer.alloc(size);
      const block = createHash('sha256').update(`${seed}:${counter++}`).digest();
      for (let i = 0; i < size; i += block.length) block.copy(chunk, i, 0, Math.min(block.length, size - i));
      hash.update(chunk);
      sent += size;
      this.push(chunk);
    },
  });
  return { body, digest: () => hash.digest('hex') };
}

/** A body that sends `before` bytes, then fails like a client that went away. */
function failingBody(before: number): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(randomBytes(before));
      } else {
        this.destroy(new Error('client aborted'));
      }
    },
  });
}

function contract(name: string, open: () => Promise<{ store: BlobStore; close(): Promise<void> }>): void {
  describe(`blob store contract: ${name}`, () => {
    let store: BlobStore;
    let close: () => Promise<void>;
    const root = `p-${randomUUID()}`;
    before(async () => ({ store, close } = await open()));
    after(() => close?.());

    test('write then read returns the same bytes; overwrite replaces them', async () => {
      const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      assert.deepEqual(await store.put(`${root}/a/bin`, Readable.from([binary]), MiB), { size: 256 });
      assert.ok((await bytesOf(store, `${root}/a/bin`))!.equals(binary));
      assert.deepEqual(await store.put(`${root}/a/bin`, Readable.from([Buffer.from('v2')]), MiB), { size: 2 });
      assert.equal((await bytesOf(store, `${root}/a/bin`))!.toString(), 'v2');
      assert.deepEqual(await store.put(`${root}/empty`, Readable.from([]), MiB), { size: 0 });
      assert.equal((await bytesOf(store, `${root}/empty`))!.length, 0);
    });

    test('a missing key reads as undefined and deletes as false', async () => {
      assert.equal(await store.get(`${root}/nope/never`), undefined);
      assert.equal(await store.delete(`${root}/nope/never`), false);
    });

    test('list by prefix: recursive, relative, sorted, never a sibling with the same start', async () => {
      const dir = `${root}/list`;
      for (const key of ['b.txt', 'a/one.txt', 'a/deep/two.txt']) await store.put(`${dir}/${key}`, Readable.from([Buffer.from(key)]), MiB);
      await store.put(`${root}/listing-sibling.txt`, Readable.from([Buffer.from('x')]), MiB);
      const listed = await store.list(dir);
      assert.deepEqual(listed.map((b) => b.path), ['a/deep/two.txt', 'a/one.txt', 'b.txt']);
      assert.deepEqual(listed.map((b) => b.size), [14, 9, 5]);
      for (const blob of listed) assert.ok(blob.updatedAt instanceof Date && Date.now() - blob.updatedAt.getTime() < 600_000);
      assert.deepEqual(await store.list(`${root}/no-such-folder`), []);
    });

    test('delete removes the blob, from reads and listings', async () => {
      await store.put(`${root}/del/x`, Readable.from([Buffer.from('x')]), MiB);
      assert.equal(await store.delete(`${root}/del/x`), true);
      assert.equal(await store.get(`${root}/del/x`), undefined);
      assert.deepEqual(await store.list(`${root}/del`), []);
      assert.equal(await store.delete(`${root}/del/x`), false);
    });

    test('a large streamed object (12 MiB + 3 bytes, several multipart parts) round-trips byte for byte', async () => {
      const size = 12 * MiB + 3;
      const { body, digest } = streamedBody(size, name);
      assert.deepEqual(await store.put(`${root}/large.bin`, body, 100 * MiB), { size });
      const got = await bytesOf(store, `${root}/large.bin`);
      assert.equal(got!.length, size);
      assert.equal(createHash('sha256').update(got!).digest('hex'), digest());
      assert.deepEqual((await store.list(root)).find((b) => b.path === 'large.bin')?.size, size);
    });

    test('an aborted upload leaves nothing visible, and an old version stays whole', async () => {
      await assert.rejects(store.put(`${root}/aborted/new.bin`, failingBody(64 * 1024), MiB), /client aborted/);
      await assert.rejects(store.put(`${root}/aborted/big.bin`, failingBody(7 * MiB), 100 * MiB), /client aborted/);
      assert.equal(await store.get(`${root}/aborted/new.bin`), undefined);
      assert.equal(await store.get(`${root}/aborted/big.bin`), undefined);
      assert.deepEqual(await store.list(`${root}/aborted`), []);

      await store.put(`${root}/aborted/kept.txt`, Readable.from([Buffer.from('old')]), MiB);
      await assert.rejects(store.put(`${root}/aborted/kept.txt`, failingBody(1000), MiB), /client aborted/);
      assert.equal((await bytesOf(store, `${root}/aborted/kept.txt`))!.toString(), 'old');
    });

    test('a body over the limit is refused (small and multipart) and leaves nothing', async () => {
      await assert.rejects(store.put(`${root}/limit/small`, Readable.from([randomBytes(1001)]), 1000), BlobTooLargeError);
      await assert.rejects(store.put(`${root}/limit/big`, streamedBody(11 * MiB, 'x').body, 6 * MiB), BlobTooLargeError);
      assert.deepEqual(await store.list(`${root}/limit`), []);
      // Exactly at the limit is fine.
      assert.deepEqual(await store.put(`${root}/limit/exact`, Readable.from([randomBytes(1000)]), 1000), { size: 1000 });
    });

    test('ranged reads: the chooser sees the whole size, the stream holds exactly the bytes chosen', async () => {
      const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7) % 256));
      await store.put(`${root}/range/file`, Readable.from([bytes]), MiB);
      const seen: number[] = [];
      for (const [start, end] of [[0, 0], [0, 999], [1, 998], [999, 999], [500, 510]] as const) {
        const got = await rangeOf(store, `${root}/range/file`, (size) => (seen.push(size), { start, end }));
        assert.deepEqual({ size: got!.size, range: got!.range }, { size: 1000, range: { start, end } });
        assert.ok(got!.bytes.equals(bytes.subarray(start, end + 1)), `${start}-${end}`);
      }
      assert.deepEqual(seen, [1000, 1000, 1000, 1000, 1000]);
      // No range chosen: the whole blob, and no range reported.
      const whole = await rangeOf(store, `${root}/range/file`, () => undefined);
      assert.ok(whole!.bytes.equals(bytes));
      assert.equal(whole!.range, undefined);
      // A chooser that refuses rejects the read; the blob stays readable and deletable.
      await assert.rejects(store.get(`${root}/range/file`, () => { throw new Error('refused'); }), /refused/);
      assert.ok((await bytesOf(store, `${root}/range/file`))!.equals(bytes));
      // A missing blob is undefined, and its chooser is never asked.
      assert.equal(await store.get(`${root}/range/missing`, () => assert.fail('asked for a missing blob')), undefined);
      assert.equal(await store.delete(`${root}/range/file`), true);
    });

    test('a range across multipart part boundaries of a large object reads the right bytes', async () => {
      const size = 11 * MiB + 9;
      const whole = randomBytes(size);
      const chunks = Array.from({ length: Math.ceil(size / (64 * 1024)) }, (_, i) => whole.subarray(i * 64 * 1024, (i + 1) * 64 * 1024));
      assert.deepEqual(await store.put(`${root}/range/large.bin`, Readable.from(chunks), 100 * MiB), { size });
      for (const [start, end] of [[5 * MiB - 3, 5 * MiB + 3], [10 * MiB - 1, size - 1], [0, 2 * MiB]] as const) {
        const got = await rangeOf(store, `${root}/range/large.bin`, () => ({ start, end }));
        assert.equal(got!.size, size);
        assert.ok(got!.bytes.equals(whole.subarray(start, end + 1)), `${start}-${end}`);
      }
    });

    test('keys are confined to the store', async () => {
      await assert.rejects(store.put(`${root}/../../escape`, Readable.from([Buffer.from('x')]), MiB), /escapes/);
    });
  });
}

contract('filesystem', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-blobs-'));
  return { store: new FileBlobStore(dir), close: async () => rmSync(dir, { recursive: true, force: true }) };
});

let s3: LocalS3 | undefined;
contract('S3 (s3rver)', async () => {
  s3 = await startLocalS3();
  const store = new S3BlobStore({ bucket: s3.bucket, endpoint: s3.endpoint, forcePathStyle: true, prefix: 'deploy-a', credentials: S3_TEST_CREDENTIALS });
  return {
    store,
    close: async () => {
      store.client.destroy();
      await s3?.stop();
    },
  };
});

describe('S3 store specifics', () => {
  let local: LocalS3;
  before(async () => (local = await startLocalS3('prefixes')));
  after(() => local?.stop());

  test('deployments with different prefixes share a bucket without seeing each other', async () => {
    const a = new S3BlobStore({ bucket: local.bucket, endpoint: local.endpoint, forcePathStyle: true, prefix: 'a', credentials: S3_TEST_CREDENTIALS });
    const b = new S3BlobStore({ bucket: local.bucket, endpoint: local.endpoint, forcePathStyle: true, prefix: 'a-b/', credentials: S3_TEST_CREDENTIALS });
    try {
      await a.put('x/file', Readable.from([Buffer.from('from a')]), MiB);
      await b.put('x/file', Readable.from([Buffer.from('from b')]), MiB);
      assert.equal(await text((await a.get('x/file'))!.stream), 'from a');
      assert.equal(await text((await b.get('x/file'))!.stream), 'from b');
      assert.deepEqual((await a.list('')).map((x) => x.path), ['x/file']);
      assert.equal(await a.delete('x/file'), true);
      assert.equal(await text((await b.get('x/file'))!.stream), 'from b');
    } finally {
      a.client.destroy();
      b.client.destroy();
    }
  });
});

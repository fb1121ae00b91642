// The filesystem blob store under concurrent change, with the file system's timing forced rather
// than hoped for: a failed upload leaves nothing even when creating its temporary file is slow, and
// a listing tolerates files and folders deleted while it walks.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { BlobTooLargeError, FileBlobStore } from '../../src/platform/blobs/store.ts';

const root = fs.mkdtempSync(join(tmpdir(), 'atrium-test-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** Every file under `dir`, relative. */
const filesUnder = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort() : []);

/**
 * Runs `fn` with Node's `fs` functions replaced (the callback and promise APIs, and the named
 * imports of ES modules), then restores them.
 */
async function withFs<T>(patch: { open?: typeof fsp.open; openCallback?: typeof fs.open; stat?: typeof fsp.stat; readdir?: typeof fsp.readdir }, fn: () => Promise<T>): Promise<T> {
  const saved = { open: fsp.open, openCallback: fs.open, stat: fsp.stat, readdir: fsp.readdir };
  const apply = (p: typeof saved) => {
    Object.assign(fsp, { open: p.open, stat: p.stat, readdir: p.readdir });
    Object.assign(fs, { open: p.openCallback });
    syncBuiltinESMExports();
  };
  apply({ ...saved, ...patch });
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}

test('an upload failing at its first chunk leaves no file, even when creating the temporary file is slow', async () => {
  const store = new FileBlobStore(join(root, 'slow-open'));
  const tempDir = join(root, 'slow-open', '.tmp');
  // Opens of temporary files complete 50 ms late; `opened` settles when each one has.
  const opened: Promise<void>[] = [];
  const real = { open: fsp.open, openCallback: fs.open };
  const late = <T>(work: () => Promise<T>) => {
    const done = new Promise<T>((resolve, reject) => setTimeout(() => work().then(resolve, reject), 50));
    opened.push(done.then(() => {}, () => {}));
    return done;
  };
  const slowOpen = ((path: fs.PathLike, ...rest: unknown[]) => (String(path).startsWith(tempDir) ? late(() => (real.open as any)(path, ...rest)) : (real.open as any)(path, ...rest))) as typeof fsp.open;
  const slowOpenCallback = ((path: fs.PathLike, ...rest: unknown[]) => {
    if (!String(path).startsWith(tempDir)) return (real.openCallback as any)(path, ...rest);
    const callback = rest.pop() as (error: Error | null, fd?: number) => void;
    void late(() => new Promise<void>((resolve) => (real.openCallback as any)(path, ...rest, (error: Error | null, fd?: number) => {
      callback(error, fd);
      resolve();
    })));
  }) as typeof fs.open;

  await withFs({ open: slowOpen, openCallback: slowOpenCallback }, async () => {
    for (const body of [
      Readable.from([Buffer.alloc(2048)]),
      new Readable({ read() { this.destroy(new Error('client went away')); } }),
    ]) {
      await assert.rejects(store.put('folder/file.bin', body, 1024), (error: Error) => error instanceof BlobTooLargeError || /client went away/.test(error.message));
      // Every open the upload started has completed: nothing can appear after this point.
      await Promise.all(opened);
      assert.deepEqual(filesUnder(tempDir), [], 'no temporary file left');
      assert.equal(fs.existsSync(join(root, 'slow-open', 'folder')), false, 'no folder made for a refused upload');
    }
  });
  assert.ok(opened.length >= 2, 'the uploads did open temporary files (otherwise this proves nothing)');
  // The store still works afterwards.
  assert.deepEqual(await store.put('folder/file.bin', Readable.from([Buffer.from('ok')]), 1024), { size: 2 });
  assert.deepEqual(filesUnder(join(root, 'slow-open')), ['folder/file.bin']);
});

test('a listing skips files and folders deleted while it walks', async () => {
  const base = join(root, 'listing');
  const store = new FileBlobStore(base);
  for (const key of ['p/a.txt', 'p/b.txt', 'p/c.txt', 'p/gone/x.txt', 'p/gone/y.txt', 'p/kept/z.txt']) await store.put(key, Readable.from([Buffer.from(key)]), 1024);
  const real = { stat: fsp.stat, readdir: fsp.readdir };
  // Another request deletes b.txt just before the listing stats it, and the folder `gone` just
  // before the listing reads it.
  const stat = (async (path: fs.PathLike, ...rest: unknown[]) => {
    if (String(path) === join(base, 'p/b.txt')) await fsp.unlink(path);
    return (real.stat as any)(path, ...rest);
  }) as typeof fsp.stat;
  const readdir = (async (path: fs.PathLike, ...rest: unknown[]) => {
    if (String(path) === join(base, 'p/gone')) await fsp.rm(path, { recursive: true });
    return (real.readdir as any)(path, ...rest);
  }) as typeof fsp.readdir;
  const listed = await withFs({ stat, readdir }, () => store.list('p'));
  assert.deepEqual(listed.map((b) => [b.path, b.size]), [['a.txt', 7], ['c.txt', 7], ['kept/z.txt', 12]]);
  assert.ok(!fs.existsSync(join(base, 'p/b.txt')) && !fs.existsSync(join(base, 'p/gone')), 'the deletions did happen mid-listing');
  assert.deepEqual(await store.list('p/nothing-here'), []);
});

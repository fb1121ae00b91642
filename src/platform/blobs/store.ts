// Blob storage behind a small interface (an S3-compatible store can implement it), with the
// filesystem implementation used by default. Writes go to a temporary file and are renamed into
// place, so a failed or aborted upload never leaves a partial file behind, and readers see a file
// either whole or not at all. Other requests may write and delete at any moment: listing tolerates
// files and folders that vanish while it walks.
import { randomUUID } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface BlobInfo {
  path: string;
  size: number;
  updatedAt: Date;
}

/** Bytes `start` to `end` of a blob, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Picks the bytes to read once the blob's size is known (undefined: all of them); it may throw to
 * refuse the read, and then nothing is left open.
 */
export type RangeChooser = (size: number) => ByteRange | undefined;

export interface BlobStore {
  /** Streams `body` to `key`, replacing it; rejects (leaving nothing) when longer than `maxBytes`. */
  put(key: string, body: Readable, maxBytes: number): Promise<{ size: number }>;
  /**
   * A stream of the blob (of the range `choose` picks, from the same version whose size it saw), or
   * undefined when there is none. `size` is the whole blob's.
   */
  get(key: string, choose?: RangeChooser): Promise<{ stream: Readable; size: number; range?: ByteRange } | undefined>;
  /** True when something was deleted. */
  delete(key: string): Promise<boolean>;
  /** Blobs whose key starts with `prefix` (a folder), recursively. */
  list(prefix: string): Promise<BlobInfo[]>;
}

export class BlobTooLargeError extends Error {}

/** The key cannot be a file: a folder has that name, or a file sits where a folder should be. */
export class BlobConflictError extends Error {}

const CONFLICT_CODES = new Set(['EEXIST', 'ENOTDIR', 'EISDIR']);
/** What a path that another request just deleted (or replaced) answers. */
const VANISHED_CODES = new Set(['ENOENT', 'ENOTDIR']);
const errnoOf = (error: unknown) => (error as NodeJS.ErrnoException).code;

export class FileBlobStore implements BlobStore {
  readonly #root: string;

  constructor(root: string) {
    this.#root = root;
  }

  #file(key: string): string {
    const file = join(this.#root, key);
    if (file !== this.#root && !file.startsWith(this.#root + sep)) throw new Error('blob key escapes the store');
    return file;
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<{ size: number }> {
    const file = this.#file(key);
    const temp = join(this.#root, '.tmp', randomUUID());
    await mkdir(dirname(temp), { recursive: true });
    // Created before the body is read: a write stream opens its file lazily, so a body failing early
    // could otherwise see that open create the file after the cleanup below had run.
    const handle = await open(temp, 'wx', 0o600);
    let size = 0;
    try {
      await pipeline(
        body,
        async function* limit(source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            size += chunk.length;
            if (size > maxBytes) throw new BlobTooLargeError(`Upload exceeds the ${maxBytes}-byte limit`);
            yield chunk;
          }
        },
        handle.createWriteStream(),
      );
      // Folders only once the body is complete: a refused upload leaves none behind.
      await mkdir(dirname(file), { recursive: true });
      await rename(temp, file);
      return { size };
    } catch (error) {
      await handle.close().catch(() => {});
      await rm(temp, { force: true });
      if (CONFLICT_CODES.has(errnoOf(error) ?? '')) throw new BlobConflictError(`${key} clashes with a file or folder`);
      throw error;
    }
  }

  async get(key: string, choose?: RangeChooser): Promise<{ stream: Readable; size: number; range?: ByteRange } | undefined> {
    let handle;
    try {
      handle = await open(this.#file(key), 'r');
    } catch (error) {
      // ENOTDIR: a file sits where the key has a folder, so there is no such blob.
      if (errnoOf(error) === 'ENOENT' || errnoOf(error) === 'ENOTDIR') return undefined;
      throw error;
    }
    // The size and the bytes come from the open file: a concurrent replace renames another file
    // into place and leaves this one whole.
    try {
      const info = await handle.stat();
      if (!info.isFile()) {
        await handle.close();
        return undefined;
      }
      const range = choose?.(info.size);
      return { stream: handle.createReadStream(range ?? {}), size: info.size, ...(range ? { range } : {}) };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async delete(key: string): Promise<boolean> {
    try {
      await unlink(this.#file(key));
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'EPERM') return false;
      throw error;
    }
  }

  async list(prefix: string): Promise<BlobInfo[]> {
    const base = this.#file(prefix);
    const out: BlobInfo[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries: Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (error) {
        // The folder is gone (or is a file) by now: it holds nothing to list.
        if (VANISHED_CODES.has(errnoOf(error) ?? '')) return;
        throw error;
      }
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          await walk(path);
        } else if (entry.isFile()) {
          try {
            const info = await stat(path);
            if (info.isFile()) out.push({ path: relative(base, path).split(sep).join('/'), size: info.size, updatedAt: info.mtime });
          } catch (error) {
            // Deleted since the folder was read.
            if (!VANISHED_CODES.has(errnoOf(error) ?? '')) throw error;
          }
        }
      }
    };
    await walk(base);
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }
}

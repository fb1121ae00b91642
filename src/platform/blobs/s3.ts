// The blob store on any S3-compatible object store (AWS S3, MinIO, Ceph, R2, …) through the official
// SDK, so that every instance behind a load balancer sees the same files. Bodies stream through
// `@aws-sdk/lib-storage` (one PUT for small bodies, multipart beyond the part size) and are counted
// on the way: a body over the limit or one that fails midway aborts the upload, and S3 makes an
// object visible only when its upload completes, so nothing partial is ever readable.
//
// Checksums: current SDK versions add CRC trailers (aws-chunked framing) to streamed uploads,
// which some S3-compatible servers store verbatim; the client asks for them only when an operation
// requires one (`WHEN_REQUIRED`, the same as AWS_REQUEST_CHECKSUM_CALCULATION /
// AWS_RESPONSE_CHECKSUM_VALIDATION), which works with AWS and with the others.
import { Readable, Transform } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { BlobTooLargeError, type BlobInfo, type BlobStore, type ByteRange, type RangeChooser } from './store.ts';

export interface S3BlobStoreOptions {
  bucket: string;
  /** Prepended to every key, e.g. `atrium/prod/`: several deployments can share a bucket. */
  prefix?: string;
  /** An S3-compatible endpoint (MinIO, …); unset for AWS. */
  endpoint?: string;
  region?: string;
  /** Bucket in the path rather than the host name: what most S3-compatible servers want. */
  forcePathStyle?: boolean;
  /** Explicit credentials; unset: the SDK's standard chain (AWS_ACCESS_KEY_ID, profiles, roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Size of multipart parts (at least 5 MiB, S3's minimum). */
  partSize?: number;
}

const MIN_PART_SIZE = 5 * 1024 * 1024;

const isMissing = (error: unknown) =>
  error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404);

/**
 * The bytes of `range` from a ranged GET's body. A server that ignored or widened the range (s3rver
 * answers `bytes=0-0` with the whole object) is cut to it here, and stops sending once it is read.
 */
function cutTo(body: Readable, contentRange: string | undefined, range: ByteRange): Readable {
  const sent = /^bytes (\d+)-(\d+)\//.exec(contentRange ?? '');
  const first = sent ? Number(sent[1]) : 0;
  if (sent && first === range.start && Number(sent[2]) === range.end) return body;
  if (first > range.start) {
    body.destroy();
    throw new Error(`The S3 server answered the range ${range.start}-${range.end} with ${contentRange}`);
  }
  return Readable.from((async function* () {
    let at = first;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const from = Math.max(range.start - at, 0);
      const to = Math.min(range.end + 1 - at, chunk.length);
      at += chunk.length;
      if (to > from) yield chunk.subarray(from, to);
      // Leaving the loop destroys the body: the rest is never downloaded.
      if (at > range.end) return;
    }
  })());
}

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #partSize: number;

  constructor(options: S3BlobStoreOptions) {
    this.#bucket = options.bucket;
    const prefix = (options.prefix ?? '').replace(/^\/+/, '');
    this.#prefix = prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.#partSize = Math.max(options.partSize ?? MIN_PART_SIZE, MIN_PART_SIZE);
    this.client = new S3Client({
      region: options.region ?? 'us-east-1',
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle ?? false,
      ...(options.credentials ? { credentials: options.credentials } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  #key(key: string): string {
    if (key.split('/').some((part) => part === '..')) throw new Error('blob key escapes the store');
    return this.#prefix + key;
  }

  async put(key: string, body: Readable, maxBytes: number): Promise<{ size: number }> {
    let size = 0;
    let tooLarge: BlobTooLargeError | undefined;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        if (size > maxBytes) {
          tooLarge = new BlobTooLargeError(`Upload exceeds the ${maxBytes}-byte limit`);
          done(tooLarge);
          return;
        }
        done(null, chunk);
      },
    });
    body.on('error', (error) => counted.destroy(error));
    body.pipe(counted);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.#bucket, Key: this.#key(key), Body: counted, ContentType: 'application/octet-stream' },
      partSize: this.#partSize,
      queueSize: 2,
      // Abort the multipart upload on failure: its parts are never visible, and not kept either.
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      body.unpipe(counted);
      counted.destroy();
      if (!body.destroyed) body.resume();
      throw tooLarge ?? error;
    }
    if (tooLarge) throw tooLarge;
    return { size };
  }

  async get(key: string, choose?: RangeChooser): Promise<{ stream: Readable; size: number; range?: ByteRange } | undefined> {
    const Key = this.#key(key);
    try {
      if (!choose) {
        const out = await this.client.send(new GetObjectCommand({ Bucket: this.#bucket, Key }));
        return { stream: out.Body as Readable, size: out.ContentLength ?? 0 };
      }
      // The range depends on the size: ask for it, then read that version only (If-Match), again
      // from the start when an upload replaced the object in between.
      for (let attempt = 1; ; attempt += 1) {
        const head = await this.client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key }));
        const size = head.ContentLength ?? 0;
        const range = choose(size);
        try {
          const out = await this.client.send(new GetObjectCommand({
            Bucket: this.#bucket, Key, IfMatch: head.ETag, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }));
          if (!range) return { stream: out.Body as Readable, size };
          return { stream: cutTo(out.Body as Readable, out.ContentRange, range), size, range };
        } catch (error) {
          if (attempt === 3 || !(error instanceof S3ServiceException && error.$metadata.httpStatusCode === 412)) throw error;
        }
      }
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<boolean> {
    // S3 deletes answer the same whether or not there was an object: ask first.
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }));
    return true;
  }

  async list(prefix: string): Promise<BlobInfo[]> {
    // `prefix` is a folder: `a/b` lists `a/b/…`, never `a/bc`.
    const folder = prefix === '' ? this.#prefix : `${this.#key(prefix.replace(/\/+$/, ''))}/`;
    const out: BlobInfo[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: folder, ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        if (!object.Key || object.Key.endsWith('/')) continue;
        out.push({ path: object.Key.slice(folder.length), size: object.Size ?? 0, updatedAt: object.LastModified ?? new Date(0) });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort((a, b) => a.path.localeCompare(b.path));
  }
}

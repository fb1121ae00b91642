// `atrium storage …` (declared in src/cli/groups.ts): remote paths start with ":".
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { unwrap } from '../../api-client/client.ts';
import { bytes, transferLine } from '../api.ts';
import { arg, UsageError, type Implementations } from '../command-kit.ts';

/** `:path` names a file in project storage; anything else is a local path. */
const remote = (value: string) => (value.startsWith(':') ? value.slice(1) : undefined);

export const commands = {
  async ls(ctx) {
    const path = remote(ctx.args[0] ?? ':') ?? ctx.args[0] ?? '';
    const body = await unwrap(ctx.api.GET('/projects/{project_id}/storage', { params: { path: { project_id: await ctx.project() }, query: path ? { path } : {} } }));
    const rows = body.files.map((f) => ({ ...f, size: f.is_folder ? '-' : bytes(f.size ?? 0), name: f.is_folder ? `${f.name}/` : f.name }));
    return { rows, columns: ['name', 'size', 'updated_at'], data: body };
  },
  async cp(ctx) {
    const [source, destination] = [arg(ctx, 0, '<source>'), arg(ctx, 1, '<destination>')];
    const project_id = await ctx.project();
    const from = remote(source);
    const to = remote(destination);
    if ((from === undefined) === (to === undefined)) throw new UsageError('exactly one of <source> and <destination> must be a storage path, written with a leading ":" (:folder/file.txt)');
    if (to !== undefined) {
      const path = to === '' || to.endsWith('/') ? `${to}${basename(source)}` : to;
      const size = statSync(source).size;
      let sent = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          sent += chunk.length;
          ctx.progress(transferLine(path, sent, size));
          done(null, chunk);
        },
      });
      const body = Readable.toWeb(createReadStream(source).pipe(counter)) as unknown as ReadableStream<Uint8Array>;
      const result = await unwrap(ctx.api.POST('/projects/{project_id}/storage/upload', {
        params: { path: { project_id }, query: { path } },
        body: body as never,
        bodySerializer: (b: unknown) => b as never,
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
        duplex: 'half',
      } as never));
      ctx.progress(`${path}  ${bytes(size)}  done`, true);
      return { message: `Uploaded ${source} to :${(result as { path: string }).path}`, data: result };
    }
    const { data, error, response } = await ctx.api.GET('/projects/{project_id}/storage/download', { params: { path: { project_id }, query: { path: from! } }, parseAs: 'stream' });
    if (error !== undefined || !response.ok || !data) return unwrap(Promise.resolve({ data: undefined, error: error ?? {}, response })) as never;
    const total = Number(response.headers.get('content-length') ?? 0);
    let received = 0;
    const target = destination.endsWith('/') ? `${destination}${basename(from!)}` : destination;
    await pipeline(Readable.fromWeb(data as never), new Transform({
      transform(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        ctx.progress(transferLine(from!, received, total));
        done(null, chunk);
      },
    }), createWriteStream(target));
    ctx.progress(`${from}  ${bytes(received)}  done`, true);
    return { message: `Downloaded :${from} to ${target}`, data: { path: from, file: target, size: received } };
  },
  async rm(ctx) {
    const path = remote(arg(ctx, 0, '<:path>')) ?? ctx.args[0]!;
    await unwrap(ctx.api.DELETE('/projects/{project_id}/storage', { params: { path: { project_id: await ctx.project() }, query: { path } } }));
    return { message: `Removed :${path}` };
  },
} satisfies Implementations;

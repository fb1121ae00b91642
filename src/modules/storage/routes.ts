// Project storage: raw-byte upload (streamed, size-limited), download, delete and folder listing.
// Uploads and deletes emit storage.file.updated / storage.file.deleted webhook events.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { ProjectParams } from '../../platform/http/schemas.ts';
import { callerOf, type AuthRequirement } from '../../platform/http/auth.ts';
import { ROOM_RESOURCE } from '../rooms/service.ts';
import { MAX_PATH_LENGTH } from './paths.ts';
import * as service from './service.ts';

const Entry = Type.Object({
  name: Type.String(),
  path: Type.String({ description: 'Relative path from the project storage root' }),
  is_folder: Type.Boolean(),
  size: Type.Union([Type.Integer(), Type.Null()], { description: 'Bytes; null for folders' }),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const Listing = Type.Object({
  path: Type.String({ description: 'The folder listed ("" for the root)' }),
  files: Type.Array(Entry),
  truncated: Type.Boolean({ description: `true when the folder has more than ${service.MAX_LISTING} entries` }),
});
const FolderQuery = Type.Object({ path: Type.Optional(Type.String({ maxLength: MAX_PATH_LENGTH, default: '', description: 'Folder to list; the root when empty' })) });

const tags = ['Project storage'];
const RangeHeaders = Type.Object({
  range: Type.Optional(Type.String({ maxLength: 1000, description: 'One byte range: `bytes=0-1023`, `bytes=1024-` or `bytes=-512` (RFC 9110)', examples: ['bytes=0-1023'] })),
});
const PathQuery = Type.Object({ path: Type.String({ minLength: 1, maxLength: MAX_PATH_LENGTH, description: 'Relative file path, e.g. `docs/readme.md`' }) });

/** Reads under `rooms/<room>/` are the room's `read_files` for members below the project roles that hold it everywhere. */
const inRoom: { auth: AuthRequirement } = {
  auth: { permission: 'member', resource: { type: ROOM_RESOURCE, action: 'read_files', from: (request) => service.roomOfPath((request.query as { path?: string }).path ?? '') } },
};

export function storageRoutes(app: Api, ctx: AppContext): void {
  // Upload bodies are streamed to the blob store as they arrive, whatever their content type (also
  // application/json and text/plain, which would otherwise be parsed, and capped at the JSON limit).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.post('/projects/:project_id/storage/upload', {
    config: { auth: { permission: 'developer' } },
    schema: {
      tags, summary: 'Upload a file (raw bytes, Content-Type: application/octet-stream)', params: ProjectParams, querystring: PathQuery,
      description: `413 when larger than ATRIUM_MAX_UPLOAD_BYTES (default ${100 * 1024 * 1024} bytes). The file is replaced atomically.`,
      response: { 200: Type.Object({ path: Type.String(), size: Type.Integer() }) },
    },
  }, async (request) => {
    if (Number(request.headers['content-length']) > ctx.config.maxUploadBytes) throw service.uploadTooLarge(ctx.config.maxUploadBytes);
    // No body at all (no parser ran) is an empty file.
    const body = (request.body as Readable | undefined) ?? Readable.from([]);
    return service.uploadFile(ctx, request.params.project_id, request.query.path, body, service.participantIdOf(callerOf(request)));
  });

  app.get('/projects/:project_id/storage/download', {
    config: inRoom,
    schema: {
      tags, summary: 'Download a file (raw bytes), or one byte range of it; 404 when missing', params: ProjectParams, querystring: PathQuery,
      headers: RangeHeaders,
      description: 'With `Range: bytes=a-b`, `bytes=a-` or `bytes=-n`: 206 with those bytes and `Content-Range`. A range past the end: 416 '
        + 'with `Content-Range: bytes */<size>`. A malformed header, another unit or several ranges: the whole file (200).',
      response: {
        200: Type.Unsafe<Readable>({ type: 'string', format: 'binary', description: 'The file bytes' }),
        206: Type.Unsafe<Readable>({ type: 'string', format: 'binary', description: 'The bytes of the range; `Content-Range: bytes <first>-<last>/<size>`' }),
        416: Type.Unsafe({ $ref: 'ErrorBody', description: '`range_not_satisfiable`; `Content-Range: bytes */<size>`' }),
      },
    },
  }, async (request, reply) => {
    const blob = await service.downloadFile(ctx, request.params.project_id, request.query.path, request.headers.range);
    reply.type('application/octet-stream').header('accept-ranges', 'bytes');
    if (!blob.range) return reply.header('content-length', blob.size).send(blob.stream);
    const { start, end } = blob.range;
    return reply.code(206).header('content-range', `bytes ${start}-${end}/${blob.size}`).header('content-length', end - start + 1).send(blob.stream);
  });

  app.delete('/projects/:project_id/storage', {
    config: { auth: { permission: 'developer' } },
    schema: {
      tags, summary: 'Delete a file; 404 when missing', params: ProjectParams, querystring: PathQuery,
      response: { 200: Type.Object({ path: Type.String() }) },
    },
  }, async (request) => service.deleteFile(ctx, request.params.project_id, request.query.path, service.participantIdOf(callerOf(request))));

  app.get('/projects/:project_id/storage', {
    config: inRoom,
    schema: {
      tags, summary: 'List the files and folders directly inside a folder', params: ProjectParams, querystring: FolderQuery,
      response: { 200: Listing },
    },
  }, async (request) => service.listFolder(ctx, request.params.project_id, request.query.path ?? ''));
}

// Project storage: raw-byte upload (streamed, size-limited) and download.
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { Api } from '../../app.ts';
import type { AppContext } from '../../context.ts';
import { ProjectParams } from '../../platform/http/schemas.ts';
import { MAX_PATH_LENGTH } from './paths.ts';
import * as service from './service.ts';

const tags = ['Project storage'];
const PathQuery = Type.Object({ path: Type.String({ minLength: 1, maxLength: MAX_PATH_LENGTH, description: 'Relative file path, e.g. `docs/readme.md`' }) });

export default function storageRoutes(app: Api, ctx: AppContext): void {
  // Upload bodies are streamed to the blob store as they arrive, whatever their content type.
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  app.post('/projects/:project_id/storage/upload', {
    config: { auth: { permission: 'developer' } },
    schema: {
      tags, summary: 'Upload a file (raw bytes, Content-Type: application/octet-stream)', params: ProjectParams, querystring: PathQuery,
      description: `413 when larger than ATRIUM_MAX_UPLOAD_BYTES (default ${100 * 1024 * 1024} bytes). The file is replaced atomically.`,
      response: { 200: Type.Object({ path: Type.String(), size: Type.Integer() }) },
    },
  }, async (request) => service.uploadFile(ctx, request.params.project_id, request.query.path, request.body as Readable));

  app.get('/projects/:project_id/storage/download', {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'Download a file (raw bytes); 404 when missing', params: ProjectParams, querystring: PathQuery,
      response: { 200: Type.Unsafe<Readable>({ type: 'string', format: 'binary', description: 'The file bytes' }) },
    },
  }, async (request, reply) => {
    const blob = await service.downloadFile(ctx, request.params.project_id, request.query.path);
    return reply.type('application/octet-stream').header('content-length', blob.size).send(blob.stream);
  });
}

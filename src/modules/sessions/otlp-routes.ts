// OTLP/HTTP ingest at /otlp/v1/{traces,metrics,logs}, so that a standard exporter configured with
// the endpoint `{ATRIUM_PUBLIC_URL}/otlp` and a room server's API key sends here. Bodies are JSON or
// protobuf (chosen by Content-Type, answered in the same), optionally gzip-compressed.
//
// Semantics of the OTLP specification: 200 with `{}` when everything was stored, 200 with
// `partialSuccess` (never retried by exporters) when some items were rejected; 400 for a body that
// does not decode or validate; 413 beyond the size limit, checked again after decompression; 429
// with Retry-After when this instance already ingests as many exports as it takes at once, or as
// many of the project's as one project may. Every error is a google.rpc.Status in the request's
// encoding.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { apiError, badRequest, tooLarge, tooManyRequests, type ApiError } from '../../platform/http/errors.ts';
import type { Api } from '../../module.ts';
import { FairSlots } from '../../platform/limits/fair-slots.ts';
import {
  decodeProtobuf, encodeProtobufResponse, encodeStatus, EXPORT_RESPONSES, ExportLogsRequest, ExportMetricsRequest, ExportTraceRequest, REJECTED_FIELD,
  type Signal,
} from './otlp.ts';
import { accessOf } from '../../platform/http/auth.ts';
import { ROOM_SERVER_TAG } from './schema.ts';
import { ingestBySignal } from './telemetry.ts';

/** Largest export body, compressed and again decompressed (the specification suggests 20 MiB). */
export const OTLP_MAX_BYTES = 8 * 1024 * 1024;
/** Exports this instance ingests at once; more are answered 429 so exporters back off. */
const MAX_CONCURRENT_EXPORTS = 32;
/** Of those, most one project's take: one tenant's slow or many exports leave the rest to the others. */
const MAX_CONCURRENT_EXPORTS_PER_PROJECT = 8;
const PROTOBUF = 'application/x-protobuf';

const REQUESTS = { traces: ExportTraceRequest, metrics: ExportMetricsRequest, logs: ExportLogsRequest } as const;

/** gRPC status codes of google.rpc.Status, by HTTP status. */
const GRPC_CODE: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 409: 10, 413: 8, 414: 3, 415: 3, 429: 8, 500: 13, 503: 14 };

const wantsProtobuf = (request: FastifyRequest) => (request.headers['content-type'] ?? '').toLowerCase().startsWith(PROTOBUF);

/** Errors as OTLP clients read them: a google.rpc.Status in the request's encoding. */
function renderStatus(error: ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  const code = GRPC_CODE[error.status] ?? 2;
  const message = `${error.code}: ${error.message}`;
  reply.status(error.status);
  if (wantsProtobuf(request)) return reply.type(PROTOBUF).send(Buffer.from(encodeStatus(code, message)));
  return reply.type('application/json; charset=utf-8').serializer(JSON.stringify).send({ code, message });
}

const gunzipAsync = promisify(gunzip);

async function decompress(request: FastifyRequest, body: Buffer): Promise<Buffer> {
  const encoding = String(request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return body;
  if (encoding !== 'gzip') throw apiError('unsupported_media_type', `Content-Encoding ${encoding} is not supported; use gzip or none`);
  try {
    return await gunzipAsync(body, { maxOutputLength: OTLP_MAX_BYTES });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(`The export is larger than ${OTLP_MAX_BYTES} bytes once decompressed`);
    throw badRequest(`The body is not valid gzip: ${(error as Error).message}`);
  }
}

export async function otlpRoutes(app: Api, ctx: AppContext): Promise<void> {
  const slots = new FairSlots(MAX_CONCURRENT_EXPORTS, MAX_CONCURRENT_EXPORTS_PER_PROJECT);
  const held = new WeakMap<FastifyRequest, { projectId: string; deadline: NodeJS.Timeout }>();
  const release = (request: FastifyRequest) => {
    const slot = held.get(request);
    if (!slot) return;
    held.delete(request);
    clearTimeout(slot.deadline);
    slots.release(slot.projectId);
  };
  // After authentication (the root scope's hook), before the body is read.
  app.addHook('onRequest', (request, _reply, done) => {
    const projectId = request.access!.projectId;
    if (!slots.acquire(projectId)) return done(tooManyRequests(1));
    // A body still arriving at the deadline is given up: its connection is cut and its slot freed.
    const deadline = setTimeout(() => {
      release(request);
      request.raw.destroy();
    }, ctx.config.sessions.otlpBodyTimeoutMs);
    held.set(request, { projectId, deadline });
    return done();
  });
  // The body has arrived: the deadline no longer applies, the slot is kept until the answer.
  app.addHook('preValidation', (request, _reply, done) => {
    clearTimeout(held.get(request)?.deadline);
    done();
  });
  app.addHook('onResponse', (request, _reply, done) => {
    release(request);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    release(request);
    done();
  });

  for (const signal of ['traces', 'metrics', 'logs'] as const satisfies readonly Signal[]) {
    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: OTLP_MAX_BYTES }, async (request: FastifyRequest, body: Buffer) => {
        const text = (await decompress(request, body)).toString('utf8');
        try {
          return JSON.parse(text) as unknown;
        } catch (error) {
          throw apiError('invalid_json', (error as Error).message);
        }
      });
      scope.addContentTypeParser(PROTOBUF, { parseAs: 'buffer', bodyLimit: OTLP_MAX_BYTES }, async (request: FastifyRequest, body: Buffer) => decodeProtobuf(signal, await decompress(request, body)));

      scope.post(`/otlp/v1/${signal}`, {
        bodyLimit: OTLP_MAX_BYTES,
        config: { auth: { permission: 'room_server', credentials: ['api_key'], project: 'credential' }, renderError: renderStatus },
        schema: {
          tags: [ROOM_SERVER_TAG],
          summary: `OTLP/HTTP ${signal} export`,
          description: `Export${signal === 'traces' ? 'Trace' : signal === 'metrics' ? 'Metrics' : 'Logs'}ServiceRequest as \`application/json\` or \`${PROTOBUF}\`, optionally \`Content-Encoding: gzip\`, at most ${OTLP_MAX_BYTES / 1024 / 1024} MiB. The API key's project owns the data; the resource attributes \`atrium.session.id\` or \`atrium.room.name\` name the session. Items naming no session of the project, or beyond the session's bound, are reported in \`partialSuccess\`. Errors are a google.rpc.Status.`,
          body: REQUESTS[signal],
          response: { 200: EXPORT_RESPONSES[signal] },
        },
      }, async (request, reply) => {
        const result = await (ingestBySignal[signal] as (c: AppContext, p: string, r: unknown) => ReturnType<typeof ingestBySignal.traces>)(ctx, accessOf(request).projectId, request.body);
        const response = result.rejected > 0 ? { partialSuccess: { [REJECTED_FIELD[signal]]: String(result.rejected), errorMessage: result.message! } } : {};
        if (wantsProtobuf(request)) return reply.type(PROTOBUF).send(Buffer.from(encodeProtobufResponse(signal, response)));
        return response;
      });
    });
  }
}

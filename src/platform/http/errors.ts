// One error type with stable codes, and the one handler that turns every failure into
// `{"error": {"code", "message"}}`. Bad input is always a 4xx; only our own bugs are 5xx.
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, code: string, message: string, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

export const badRequest = (message: string, code = 'invalid_request') => new ApiError(400, code, message);
export const unauthorized = (message = 'A valid bearer credential is required') =>
  new ApiError(401, 'unauthorized', message, { 'www-authenticate': 'Bearer' });
export const forbidden = (message = 'Not allowed') => new ApiError(403, 'forbidden', message);
export const notFound = (what: string) => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (message: string) => new ApiError(409, 'conflict', message);
export const tooLarge = (message: string) => new ApiError(413, 'payload_too_large', message);

export const ErrorBody = Type.Object({
  error: Type.Object({ code: Type.String(), message: Type.String() }),
}, { $id: 'ErrorBody', description: 'Every non-2xx response has this body' });

/** Status codes of Fastify's own errors (body parsing, routing) that are the client's fault. */
const FASTIFY_CLIENT_ERRORS: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid_request'],
  FST_ERR_CTP_INVALID_TYPE: [400, 'invalid_request'],
};

function describeValidation(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const where = error.validationContext ?? 'request';
  const path = first.instancePath ? first.instancePath.replace(/^\//, '').replaceAll('/', '.') : '';
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'required') return `${where}.${params.missingProperty} is required`;
  if (first.keyword === 'additionalProperties') return `${where}${path ? `.${path}` : ''} has unknown property ${JSON.stringify(params.additionalProperty)}`;
  return `${where}${path ? `.${path}` : ''} ${first.message ?? 'is invalid'}`;
}

/** The SQLSTATE of a database error, which the query layer wraps (DrizzleQueryError.cause). */
function sqlStateOf(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

function sqlMessageOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return ((cause ?? error) as Error).message;
}

/**
 * Sends the error body as JSON with its own serializer: a route's response schema for that status
 * (an HTML page, say) must not reshape it.
 */
function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.status(status).type('application/json; charset=utf-8').serializer(JSON.stringify).send({ error: { code, message } });
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      if (error.headers) reply.headers(error.headers);
      return sendError(reply, error.status, error.code, error.message);
    }
    if (error.validation) {
      return sendError(reply, 400, 'invalid_request', describeValidation(error));
    }
    const known = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
    if (known) return sendError(reply, known[0], known[1], error.message);
    const sqlState = sqlStateOf(error);
    // Uniqueness races that a service's own pre-check could not see.
    if (sqlState === '23505') {
      return sendError(reply, 409, 'conflict', 'A resource with that name already exists');
    }
    // A referenced row vanished between the service's check and the write (a concurrent delete).
    if (sqlState === '23503') {
      return sendError(reply, 409, 'conflict', 'A resource this request refers to no longer exists');
    }
    // Data exceptions: values that pass the schema but that PostgreSQL cannot store, such as a NUL
    // character in text or JSON.
    if (sqlState?.startsWith('22')) {
      return sendError(reply, 400, 'invalid_request', `A value cannot be stored: ${sqlMessageOf(error)}`);
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(reply, error.statusCode, 'invalid_request', error.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 500, 'internal', 'Internal server error');
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`));
}

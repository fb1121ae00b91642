// One error type with stable codes, and the one handler that turns every failure into
// `{"error": {"code", "message"}}`. Bad input is always a 4xx; only our own bugs are 5xx.
import type { FastifyError, FastifyInstance } from 'fastify';
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

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      if (error.headers) reply.headers(error.headers);
      return reply.status(error.status).send({ error: { code: error.code, message: error.message } });
    }
    if (error.validation) {
      return reply.status(400).send({ error: { code: 'invalid_request', message: describeValidation(error) } });
    }
    const known = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
    if (known) return reply.status(known[0]).send({ error: { code: known[1], message: error.message } });
    // Uniqueness races that a service's own pre-check could not see.
    if ((error as { code?: string }).code === '23505') {
      return reply.status(409).send({ error: { code: 'conflict', message: 'A resource with that name already exists' } });
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.status(error.statusCode).send({ error: { code: 'invalid_request', message: error.message } });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send({ error: { code: 'internal', message: 'Internal server error' } });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: { code: 'not_found', message: `No route ${request.method} ${request.url.split('?')[0]}` } }));
}

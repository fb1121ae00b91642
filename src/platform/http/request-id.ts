// The request id: the caller's `X-Request-Id` when it sends a sane one (a proxy or a client that
// traces its own calls), else a new one. It is on every response (`X-Request-Id`), in every error
// body (`error.request_id`) and on every log line written while the request is served
// (`request_id`), so a client's report and the server's logs meet on it.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';
/** The field naming it on log lines. */
export const REQUEST_ID_LOG_LABEL = 'request_id';

// Short, and nothing that could forge another log field or header.
const SANE = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** Fastify's `genReqId`. */
export function requestId(request: IncomingMessage): string {
  const sent = request.headers[REQUEST_ID_HEADER];
  return typeof sent === 'string' && SANE.test(sent) ? sent : randomUUID();
}

/**
 * Names the id on the response before any handler runs, so that every answer carries it, errors
 * and early refusals included. A route relaying another server's `X-Request-Id` (the LLM proxy
 * passes the provider's on, which the providers' SDKs read) replaces it.
 */
export function installRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}

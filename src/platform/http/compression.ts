// Large JSON answers (a page of 1,000 rooms, a session's spans, /openapi.json) are sent compressed
// to clients that accept it. Only a serialised JSON body at or above the threshold is touched: the
// hot paths answer a few hundred bytes and pay one length comparison, and streams (downloads, the
// LLM proxy's server-sent events) are never buffered. Brotli at quality 3 compresses a page of 1,000
// rooms (330 KB) in less time than gzip's default level and smaller; gzip at level 4 for clients
// without brotli (docs/benchmarks.md has the figures).
import { brotliCompress, constants, gzip } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import type { FastifyInstance } from 'fastify';

/** Bytes of JSON from which an answer is compressed: below it the saving is a packet or two. */
export const COMPRESS_FROM_BYTES = 16 * 1024;

const encodings = new Negotiator({ supportedValues: ['br', 'gzip'] });
const BROTLI_QUALITY = 3;
const GZIP = { level: 4 };

export function installCompression(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (typeof payload !== 'string' || payload.length < COMPRESS_FROM_BYTES) return done(null, payload);
    const type = reply.getHeader('content-type');
    if (typeof type !== 'string' || !type.startsWith('application/json') || reply.hasHeader('content-encoding')) return done(null, payload);
    const vary = reply.getHeader('vary');
    reply.header('vary', vary ? `${String(vary)}, accept-encoding` : 'accept-encoding');
    const accepted = request.headers['accept-encoding'];
    const encoding = typeof accepted === 'string' ? encodings.negotiate(accepted) : null;
    if (!encoding) return done(null, payload);
    const compressed = (error: Error | null, body: Buffer) => {
      if (error) return done(null, payload);
      reply.header('content-encoding', encoding).header('content-length', body.length);
      done(null, body);
    };
    if (encoding === 'br') brotliCompress(payload, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: payload.length } }, compressed);
    else gzip(payload, GZIP, compressed);
  });
}

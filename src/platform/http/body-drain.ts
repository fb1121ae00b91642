// An answer that closes the connection before the request's body has arrived — a 413 for a body
// over the route's limit, which Fastify marks `Connection: close` — would reach a client still
// writing as EPIPE or ECONNRESET, not as an answer: an OpenTelemetry exporter, which sends its
// Content-Length and writes the whole body before it reads, then retries as if the network had
// failed. So such an answer waits until the body has arrived, read and discarded, up to a generous
// bound in bytes and in time; then it goes out, and the connection is kept if the body was read
// to its end.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Most bytes of a refused body read and thrown away before the connection is closed instead. */
const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
/** Longest a refused body is waited for: a client that writes slowly does not hold the answer longer. */
const DRAIN_MAX_MS = 10_000;

function closesConnection(reply: FastifyReply): boolean {
  return reply.statusCode === 413 || String(reply.getHeader('connection') ?? '').toLowerCase() === 'close';
}

/** Reads and discards what is left of the body; resolves at its end, past the bounds, or on error. */
function discardBody(raw: IncomingMessage): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const finish = () => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', finish);
      raw.off('close', finish);
      raw.off('error', finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DRAIN_MAX_BYTES) finish();
    };
    const timer = setTimeout(finish, DRAIN_MAX_MS);
    raw.on('data', onData);
    raw.once('end', finish);
    raw.once('close', finish);
    raw.once('error', finish);
    raw.resume();
  });
}

export function installBodyDrain(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    if (raw.complete || raw.destroyed || !closesConnection(reply)) {
      done(null, payload);
      return;
    }
    void discardBody(raw).then(() => {
      // Read to its end, the body no longer stands between this answer and the next request.
      if (raw.complete) reply.removeHeader('connection');
      done(null, payload);
    });
  });
}

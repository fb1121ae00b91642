// The baseline of bench/llm-proxy.ts: the least a Node proxy in front of a model does, with the
// stack Atrium's proxy uses (Fastify, an undici Pool kept alive to the upstream), and nothing else:
// no credential, no admission, no body parsing, no usage capture, no record written.
//
//   POST /openai/v1/*  → the same path under BARE_UPSTREAM (…/v1/*), the body's bytes unchanged;
//                        the upstream's status, content type, `openai-processing-ms` and body
//                        streamed back as they arrive
//   GET  /healthz
//
// Run as a child process: BARE_PORT=… BARE_UPSTREAM=http://127.0.0.1:…/v1 node bench/llm-proxy-bare.ts
import Fastify from 'fastify';
import { Pool, type Dispatcher } from 'undici';

const port = Number(process.env.BARE_PORT ?? 0);
const upstream = new URL(process.env.BARE_UPSTREAM!);
const prefix = upstream.pathname.replace(/\/+$/, '');
// Atrium's settings for its provider pools (src/modules/llm-proxy/upstream.ts).
const pool = new Pool(upstream.origin, { connections: 512, keepAliveTimeout: 60_000 });
const FORWARDED = ['content-type', 'openai-processing-ms', 'x-request-id'];

const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 });
app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.get('/healthz', async () => ({ ok: true }));
app.post('/openai/v1/*', async (request, reply) => {
  const response = await pool.request({
    method: 'POST',
    path: `${prefix}/${(request.params as { '*': string })['*']}`,
    headers: { 'content-type': 'application/json' },
    body: request.body as Buffer,
  });
  const headers: Record<string, string> = {};
  for (const name of FORWARDED) {
    const value = response.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return reply.status(response.statusCode).headers(headers).send(response.body satisfies Dispatcher.ResponseData['body']);
});
await app.listen({ port, host: '127.0.0.1' });

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => { app.close().finally(() => process.exit(0)); });

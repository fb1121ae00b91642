// The protocol endpoints: oidc-provider serves /oauth/* and the discovery documents from its own
// Koa app, reading its own request bodies. What it does not answer itself — a path or method its
// router does not serve, a failure its error handling lets escape, and its own server errors — is
// handed back to Fastify and answered by the one error handler: in the catalogue's shape, and
// logged when it is a real server error. The protocol's own errors keep their RFC 6749 shape.
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KoaContextWithOIDC, Provider } from 'oidc-provider';
import type { AppContext } from '../../../context.ts';
import { notFound, tooManyRequests } from '../../../platform/http/errors.ts';
import { REQUEST_ID_HEADER } from '../../../platform/http/request-id.ts';
import { RateCounters } from '../../../platform/limits/counters.ts';
import { RequestLimiter } from '../limits.ts';
import { ENDPOINTS } from '../provider.ts';
import type { Api } from '../../../module.ts';
import { SECURITY_HEADERS } from '../respond.ts';
import { deviceLinks } from './sources.ts';
import { userinfoRoute } from './userinfo.ts';

// oidc-provider adds the hash of its one inline script (form_post response mode) to script-src.
const PROVIDER_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'";

/** The provider serves both well-known names (RFC 8414 for an issuer without a path; OpenID Connect). */
const DISCOVERY = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];

const handedOver = new WeakMap<IncomingMessage, unknown>();

/** Leaves a request to Fastify: Koa sends nothing, and `forward` raises `error` in Fastify. */
function handOver(kctx: KoaContextWithOIDC, error: unknown): void {
  kctx.respond = false;
  handedOver.set(kctx.req, error);
}

/** Koa middleware in front of the provider's router; without it Koa answers these in text/plain. */
async function handOverUnanswered(kctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> {
  try {
    await next();
  } catch (error) {
    handOver(kctx, error);
    return;
  }
  // Nothing answered (no route matched, or one that let the request through, like a CORS route
  // without a preflight): Koa's own 404 without a body.
  if (kctx.status === 404 && kctx.body == null) handOver(kctx, notFound(`Route ${kctx.method} ${kctx.path}`));
}

const CLIENT_IP_HEADER = 'x-atrium-client-ip';
const PINNED_HEADERS = ['host', 'x-forwarded-host', 'x-forwarded-proto', 'forwarded', CLIENT_IP_HEADER] as const;

/**
 * The provider builds its URLs (discovery endpoints, redirects) from the request's host and
 * protocol. Those come from the client, or from whatever a cache in front of the service passes
 * on, so for the provider's turn they are replaced by ATRIUM_PUBLIC_URL's, and the client address
 * by the one Fastify found by the ATRIUM_TRUST_PROXY rule. Returns what puts the headers back.
 */
function pinnedOrigin(publicUrl: string): (request: FastifyRequest) => () => void {
  const url = new URL(publicUrl);
  const protocol = url.protocol.slice(0, -1);
  return (request) => {
    const headers = request.raw.headers;
    const saved = PINNED_HEADERS.map((name) => [name, headers[name]] as const);
    const ip = request.ip;
    headers.host = url.host;
    headers['x-forwarded-proto'] = protocol;
    headers[CLIENT_IP_HEADER] = ip;
    delete headers['x-forwarded-host'];
    delete headers.forwarded;
    return () => {
      for (const [name, value] of saved) {
        if (value === undefined) delete headers[name];
        else (headers as Record<string, string | string[]>)[name] = value;
      }
    };
  };
}

export async function mountProtocol(app: Api, ctx: AppContext, provider: Provider): Promise<void> {
  provider.use(handOverUnanswered);
  provider.use(deviceLinks(ENDPOINTS.code_verification));
  // The library has already rendered its "server_error" answer when it emits this; ours replaces it.
  provider.on('server_error', (kctx, error) => handOver(kctx, error));
  const handle = provider.callback();
  const pinned = pinnedOrigin(ctx.config.publicUrl);
  // The provider reads the host, the protocol and the client address from the headers pinned below.
  provider.proxy = true;
  provider.proxyIpHeader = CLIENT_IP_HEADER;

  const counters = new RateCounters(ctx.db);
  const { tokenPerIp, devicePerIp } = ctx.config.signin.limits;
  const limited = new Map<string, RequestLimiter>([
    [ENDPOINTS.token, new RequestLimiter(counters, 'token', tokenPerIp, 60_000)],
    [ENDPOINTS.code_verification, new RequestLimiter(counters, 'device', devicePerIp, 60_000)],
  ]);

  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const limiter = limited.get(request.url.split('?')[0]!.replace(/\/+$/, ''));
    if (limiter) {
      const verdict = await limiter.hit(request.ip);
      if (!verdict.allowed) throw tooManyRequests(verdict.retryAfter);
    }
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.raw.setHeader(name, value);
    reply.raw.setHeader('content-security-policy', PROVIDER_CSP);
    // The provider answers on the raw response, past the headers Fastify keeps for the reply.
    reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
    const restore = pinned(request);
    try {
      await handle(request.raw, reply.raw);
    } finally {
      restore();
    }
    if (handedOver.has(request.raw)) {
      // Whatever the provider began to answer (headers, cookies) goes with its answer.
      for (const name of reply.raw.getHeaderNames()) reply.raw.removeHeader(name);
      throw handedOver.get(request.raw);
    }
    // The provider has answered on the raw response.
    reply.hijack();
  };

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.route({ method: ['GET', 'POST', 'OPTIONS', 'DELETE', 'PUT'], url: '/oauth/*', handler: forward });
    for (const path of DISCOVERY) scope.get(path, forward);
    userinfoRoute(scope as unknown as Api, ctx);
  });
}

// CORS for browser apps. The endpoints a browser app calls with a user's token are exactly the
// routes that accept OAuth access tokens (their auth requirement names an `oauthScope`): those
// answer preflights and carry `Access-Control-Allow-Origin` for an allowed origin. An origin is
// allowed when the deployment lists it (ATRIUM_CORS_ORIGINS) or when an OAuth client does — its
// redirect URIs' origins (public clients) or its `allowed_origins` metadata. A preflight carries no
// token, so it asks whether any client allows the origin; the request itself is answered for the
// origin only when the token's own client allows it. The origin is echoed, never `*`, and no
// credentials header is sent: these endpoints take a bearer token, never a cookie.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthRequirement } from './auth.ts';

/** What the OAuth clients say about origins (provided by the module that owns them). */
export interface BrowserOrigins {
  /** Whether the client lets a browser app at `origin` use its tokens. */
  clientAllows(clientId: string, origin: string): Promise<boolean>;
  /** Whether some client does (a preflight carries no token to say which). */
  anyClientAllows(origin: string): Promise<boolean>;
}

/** How long a browser may cache a preflight answer (Chromium caps it at 2 h). */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200;
// A browser app may name its requests, and read their ids (docs/errors.md).
const ALLOWED_HEADERS = 'authorization, content-type, x-request-id';
const EXPOSED_HEADERS = 'www-authenticate, retry-after, x-request-id';

interface BrowserRoute { method: string; pattern: RegExp }

const browserCallable = (config: unknown): boolean => {
  const auth = (config as { auth?: AuthRequirement } | undefined)?.auth;
  return Boolean(auth?.oauthScope && auth.credentials?.includes('oauth'));
};

/** `/a/:b/c` → a pattern for request paths (a parameter is one segment). */
function pathPattern(url: string): RegExp {
  const source = url.split('/').map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
  return new RegExp(`^${source}/?$`);
}

export function installCors(app: FastifyInstance, options: { allowList: readonly string[]; origins: BrowserOrigins | undefined }): void {
  const listed = new Set(options.allowList);
  const routes: BrowserRoute[] = [];
  app.addHook('onRoute', (route) => {
    if (!browserCallable(route.config)) return;
    for (const method of [route.method].flat()) routes.push({ method, pattern: pathPattern(route.url) });
  });

  const allowedForAnyone = async (origin: string) => listed.has(origin) || (origin !== 'null' && (await options.origins?.anyClientAllows(origin)) === true);

  const answerPreflight = async (reply: FastifyReply, origin: string, wanted: string, methods: string[]) => {
    reply.header('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers').header('cache-control', 'no-store');
    if (methods.includes(wanted.toUpperCase()) && (await allowedForAnyone(origin))) {
      reply.header('access-control-allow-origin', origin)
        .header('access-control-allow-methods', [...new Set(methods)].join(', '))
        .header('access-control-allow-headers', ALLOWED_HEADERS)
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    // A refused origin gets the same empty 204 without the allow headers: the browser blocks it.
    reply.status(204).send();
  };

  // Both hooks run on every request and have nothing to wait for unless a browser sent it, so they
  // take `done` (an async hook would cost every request a promise and a microtask turn).
  // Preflight: answered here, before routing (no OPTIONS routes exist), for browser-callable paths only.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    const origin = request.headers.origin;
    const wanted = request.headers['access-control-request-method'];
    if (request.method !== 'OPTIONS' || !origin || typeof wanted !== 'string') return done();
    const path = request.url.split('?')[0]!;
    const methods = routes.filter((r) => r.pattern.test(path)).map((r) => r.method);
    if (methods.length === 0) return done();
    // Answered: the request goes no further, so `done` is called only on a failure.
    answerPreflight(reply, origin, wanted, methods).catch(done);
  });

  // The request itself, answered or failed: the origin is allowed for the token's client.
  app.addHook('onSend', (request, reply, payload, done) => {
    const origin = request.headers.origin;
    if (!origin || request.method === 'OPTIONS' || !browserCallable(request.routeOptions.config)) return done(null, payload);
    allowOrigin(request, reply, origin).then(() => done(null, payload), done);
  });

  const allowOrigin = async (request: FastifyRequest, reply: FastifyReply, origin: string) => {
    reply.header('vary', 'Origin');
    const principal = request.principal;
    let allowed = listed.has(origin);
    if (!allowed && origin !== 'null') {
      if (principal?.kind === 'oauth') allowed = principal.clientId !== undefined && (await options.origins?.clientAllows(principal.clientId, origin)) === true;
      // No token (or a rejected one): the app may read the 401 that tells it to sign in again.
      else if (!principal) allowed = await allowedForAnyone(origin);
    }
    if (allowed) reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSED_HEADERS);
  };
}

// The protocol endpoints: oidc-provider serves /oauth/* and the discovery documents from its own
// Koa app, reading its own request bodies.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Provider } from 'oidc-provider';
import type { AppContext } from '../../context.ts';
import type { Api } from '../../platform/http/module.ts';
import { SECURITY_HEADERS } from '../respond.ts';
import { userinfoRoute } from './userinfo.ts';

// oidc-provider adds the hash of its one inline script (form_post response mode) to script-src.
const PROVIDER_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'";

/** The provider serves both well-known names (RFC 8414 for an issuer without a path; OpenID Connect). */
const DISCOVERY = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];

export async function mountProtocol(app: Api, ctx: AppContext, provider: Provider): Promise<void> {
  provider.on('server_error', (_kctx, error) => ctx.log.error({ err: error }, 'oauth server error'));
  const handle = provider.callback();

  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.raw.setHeader(name, value);
    reply.raw.setHeader('content-security-policy', PROVIDER_CSP);
    await handle(request.raw, reply.raw);
  };

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.route({ method: ['GET', 'POST', 'OPTIONS', 'DELETE', 'PUT'], url: '/oauth/*', handler: forward });
    for (const path of DISCOVERY) scope.get(path, forward);
    userinfoRoute(scope as unknown as Api, ctx);
  });
}

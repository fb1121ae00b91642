// Assembles the Fastify application from the platform mechanisms and the modules' routes.
import Fastify, { LogController } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ValidateFunction } from 'ajv';
import type { AppContext } from './context.ts';
import { installBodyDrain } from './platform/http/body-drain.ts';
import { installCompression } from './platform/http/compression.ts';
import { installCors } from './platform/http/cors.ts';
import { DEFAULT_CREDENTIALS, installAuth, validateAuthRequirement, type AuthRequirement } from './platform/http/auth.ts';
import { installAuthority } from './platform/http/authority.ts';
import { installAudit } from './platform/http/audit.ts';
import { ErrorBody, MAX_PARAM_LENGTH, badRequest, frameworkErrorHandler, installErrorHandling } from './platform/http/errors.ts';
import { CONSOLE_PATH, serveConsole } from './platform/http/console.ts';
import { installMetrics } from './platform/http/metrics.ts';
import { installRequestId, REQUEST_ID_LOG_LABEL, requestId } from './platform/http/request-id.ts';
import { logRequests, prettyLogs } from './platform/logging.ts';
import type { Api, Module } from './module.ts';
import { illFormedText } from './platform/http/schemas.ts';
import { ajvFor } from './platform/http/validation.ts';
import type { ProxyTrust } from './platform/settings/kinds.ts';

/**
 * Prefixes served by plugins that do their own authentication (documented in docs/permissions.md).
 * /console is the web console's static files, public like any page (it calls the API with the
 * signed-in user's tokens). /oauth and the two discovery documents are oidc-provider's: it
 * authenticates clients and tokens by the OAuth rules itself (client secrets, PKCE, code and token
 * checks), see docs/oauth.md.
 */
export const PLUGIN_ROUTE_PREFIXES = ['/docs', '/console', '/oauth', '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];

/** Where the built console is (`npm run console:build`). */
const CONSOLE_DIST = new URL('../console/dist', import.meta.url).pathname;

export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * A route's path as the OpenAPI document writes it: `{name}` for a parameter, `{*}` for a trailing
 * wildcard (as @fastify/swagger does), and `:` for the router's escaped literal colon `::` (as in
 * `…/policy::grant`).
 */
export function documentedPath(url: string): string {
  return url.replace(/(?<!:):([A-Za-z0-9_]+)/g, '{$1}').replaceAll('::', ':').replace(/\/\*$/, '/{*}');
}

export interface BuiltApp {
  app: Api;
  /**
   * Every route registered, with its declared requirement and the module that declared it
   * (undefined for the platform's own, e.g. /docs), for docs and the route-table tests.
   */
  routes: { method: string; url: string; config: unknown; schema: unknown; module: string | undefined }[];
}

/** ATRIUM_TRUST_PROXY as Fastify takes it (its types have no hop count: a function trusting the nearest N). */
export function fastifyTrustProxy(trust: ProxyTrust): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/**
 * A route's validator compiled on its first request instead of at start-up: Fastify compiles every
 * route's schemas when the app is built, and the generated code of routes a server never serves
 * stays resident (docs/benchmarks.md "Memory of the embedded default"). Fastify reads `errors`
 * after a failed check and passes the parent (so a root value can be coerced) when `schemaEnv`
 * is set, as on any Ajv validator.
 */
function lazyValidator(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown, context?: object) => {
    compiled ??= compile();
    const ok = compiled(data, context as never);
    validate.errors = compiled.errors;
    return ok;
  }) as ValidateFunction;
  validate.schemaEnv = true as never;
  return validate;
}

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled on its route's first
 * response rather than all at start-up, for the same reason as `lazyValidator`.
 */
function lazySerializers(externalSchemas: unknown, options: unknown) {
  const build = SerializerSelector()(externalSchemas as never, options as never);
  return (route: Parameters<typeof build>[0]) => {
    let compiled: ((data: unknown) => string) | undefined;
    return (data: unknown) => (compiled ??= build(route))(data);
  };
}

export async function buildApp(ctx: AppContext, modules: readonly Module[]): Promise<BuiltApp> {
  const app = Fastify({
    loggerInstance: ctx.log,
    bodyLimit: JSON_BODY_LIMIT,
    trustProxy: fastifyTrustProxy(ctx.config.trustProxy),
    return503OnClosing: true,
    // Fastify's two lines per request (received, completed) are replaced by one (logRequests).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: REQUEST_ID_LOG_LABEL }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrorHandler,
    genReqId: requestId,
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const bodyAjv = ajvFor(false);
  const otherAjv = ajvFor(true);
  app.setValidatorCompiler(({ schema, httpPart }) => lazyValidator(() => (httpPart === 'body' ? bodyAjv : otherAjv).compile(schema)));

  const routes: BuiltApp['routes'] = [];
  // Modules are registered one at a time (each `register` is awaited), so this names the one
  // whose routes are being declared.
  let declaring: string | undefined;
  app.addHook('onRoute', (route) => {
    if (route.method === 'HEAD') return;
    const plugin = PLUGIN_ROUTE_PREFIXES.some((p) => route.url === p || route.url.startsWith(`${p}/`));
    if (!plugin) {
      const problem = validateAuthRequirement(route) ?? ctx.authority.check(route);
      if (problem) throw new Error(`Route declaration error: ${problem}`);
    }
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, config: route.config, schema: route.schema, module: declaring });
  });

  installRequestId(app);
  installErrorHandling(app);
  installBodyDrain(app);
  installCors(app, { allowList: ctx.config.corsOrigins, origins: modules.find((m) => m.browserOrigins)?.browserOrigins?.(ctx) });
  installAuth(app, ctx.auth);
  installAuthority(app, ctx.authority);
  installCompression(app);
  installAudit(app, ctx.db, ctx.audit);
  app.addHook('onClose', () => ctx.audit.flush());
  // Hooks that never wait are written with `done`: an async hook costs every request a promise
  // and a turn of the microtask queue.
  app.addHook('preValidation', (request, _reply, done) => {
    const bad = illFormedText(request.params, 'params') ?? illFormedText(request.query, 'query') ?? illFormedText(request.body, 'body');
    done(bad ? badRequest(`${bad} must be well-formed Unicode text without NUL characters`) : undefined);
  });
  installMetrics(app);
  logRequests(app, prettyLogs(ctx.config));
  app.addSchema(ErrorBody);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Atrium API', version: '0.1.0', description: 'Project administration and sign-in service. Errors have the body `{"error": {"code", "message", "request_id"}}`; every response names its request in `X-Request-Id`.' },
      servers: [{ url: ctx.config.publicUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Project API key, personal access token, or OAuth access token' } } },
    },
    transform: ({ schema, url, route }) => {
      const auth = (route.config as { auth?: AuthRequirement } | undefined)?.auth;
      if (!schema || !auth) return { schema, url };
      const security = auth.permission === 'public' ? [] : [{ bearer: [] }];
      const action = [
        auth.resource ? `; then ${ctx.authority.requires(auth.resource, auth.credentials ?? DEFAULT_CREDENTIALS)}` : '',
        auth.within ? `; and ${ctx.authority.requiresWithin(auth.within)}` : '',
      ].join('');
      const note = auth.permission === 'public' ? 'No credential.' : `Requires: ${auth.permission}${action}.`;
      return { schema: { ...schema, security, description: [schema.description, note].filter(Boolean).join(' ') } as typeof schema, url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  await app.register(async (scope) => serveConsole(scope, { root: CONSOLE_DIST, publicUrl: ctx.config.publicUrl }));
  app.get('/', {
    config: { auth: { permission: 'public' } },
    schema: { hide: true, summary: 'The web console', response: { 302: { type: 'null', description: 'Redirect to /console/' } } },
  }, (_request, reply) => {
    reply.redirect(`${CONSOLE_PATH}/`);
  });

  for (const mod of modules) {
    const { routes: declare } = mod;
    if (!declare) continue;
    declaring = mod.name;
    await app.register(async (scope) => declare(scope as unknown as Api, ctx));
    declaring = undefined;
  }
  await app.ready();
  return { app, routes };
}

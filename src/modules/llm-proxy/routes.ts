// The LLM proxy: OpenAI-compatible routes under /openai/v1 and Anthropic-compatible ones under
// /anthropic/v1, forwarded to the operator's upstreams. The project comes from the credential or
// the Service-Project-Id (Meshagent-Project-Id) header; errors come in the provider's own shape.
import type { FastifyRequest } from 'fastify';
import type { TSchema } from 'typebox';
import type { AppContext } from '../../context.ts';
import type { AuthRequirement } from '../../platform/http/auth.ts';
import { apiError, type ErrorRenderer } from '../../platform/http/errors.ts';
import type { Api } from '../../module.ts';
import { anthropicError, openaiError } from './errors.ts';
import * as schema from './schema.ts';
import { forward, keepRawBody } from './service.ts';
import { callRecorder } from './store.ts';
import { configuredUpstreams } from './upstream.ts';
import type { Provider } from './usage.ts';

const PROJECT_HEADERS = ['service-project-id', 'meshagent-project-id'];

/** What a call needs: the project role, and for an OAuth token the scope (a participant token's `api.llm` grant stands for both). */
export const PROXY_ROLE = 'llm_proxy_user';
export const PROXY_SCOPE = 'llm:invoke';

const auth = (provider: Provider): AuthRequirement => ({
  permission: PROXY_ROLE,
  credentials: ['api_key', 'user', 'oauth', 'participant'],
  oauthScope: PROXY_SCOPE,
  project: { headers: PROJECT_HEADERS },
  // Anthropic clients send their key as x-api-key.
  ...(provider === 'anthropic' ? { credentialHeaders: ['x-api-key'] } : {}),
});

interface Route {
  provider: Provider;
  method: 'GET' | 'POST';
  /** The provider's path: what follows /openai (or /anthropic). */
  endpoint: string;
  summary: string;
}

const ROUTES: Route[] = [
  { provider: 'openai', method: 'POST', endpoint: '/v1/chat/completions', summary: 'OpenAI chat completions' },
  { provider: 'openai', method: 'POST', endpoint: '/v1/responses', summary: 'OpenAI responses' },
  { provider: 'openai', method: 'POST', endpoint: '/v1/responses/compact', summary: 'OpenAI responses: compact' },
  { provider: 'openai', method: 'POST', endpoint: '/v1/responses/input_tokens', summary: 'OpenAI responses: count input tokens' },
  { provider: 'openai', method: 'POST', endpoint: '/v1/embeddings', summary: 'OpenAI embeddings' },
  { provider: 'openai', method: 'GET', endpoint: '/v1/models', summary: 'OpenAI models' },
  { provider: 'openai', method: 'GET', endpoint: '/v1/models/*', summary: 'An OpenAI model' },
  { provider: 'anthropic', method: 'POST', endpoint: '/v1/messages', summary: 'Anthropic messages' },
  { provider: 'anthropic', method: 'POST', endpoint: '/v1/messages/count_tokens', summary: 'Anthropic: count message tokens' },
  { provider: 'anthropic', method: 'GET', endpoint: '/v1/models', summary: 'Anthropic models' },
  { provider: 'anthropic', method: 'GET', endpoint: '/v1/models/*', summary: 'An Anthropic model' },
];

const RENDERERS: Record<Provider, ErrorRenderer> = { openai: openaiError, anthropic: anthropicError };
const BODIES: Record<Provider, TSchema> = { openai: schema.OpenAIBody, anthropic: schema.AnthropicBody };

/** The provider path a request asks for, a model id (the wildcard) re-encoded. */
function endpointOf(route: Route, request: FastifyRequest): string {
  if (!route.endpoint.endsWith('/*')) return route.endpoint;
  return `${route.endpoint.slice(0, -1)}${encodeURIComponent((request.params as Record<string, string>)['*']!)}`;
}

export function llmProxyRoutes(app: Api, ctx: AppContext): void {
  const upstreams = configuredUpstreams(ctx.config.llm);
  const recorder = callRecorder(ctx);
  app.addHook('onClose', async () => {
    await Promise.all([recorder.flush(), ...Object.values(upstreams).map((u) => u.pool.close())]);
  });
  // JSON only, kept as bytes too: the body goes upstream as the client wrote it.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: ctx.config.llm.maxBodyBytes }, (request, body, done) => {
    try {
      keepRawBody(request, body as Buffer);
      done(null, JSON.parse((body as Buffer).toString('utf8')));
    } catch (error) {
      done(apiError('invalid_json', (error as Error).message), undefined);
    }
  });

  for (const route of ROUTES) {
    const wildcard = route.endpoint.endsWith('/*');
    app.route({
      method: route.method,
      url: `/${route.provider}${route.endpoint}`,
      bodyLimit: ctx.config.llm.maxBodyBytes,
      config: { auth: auth(route.provider), renderError: RENDERERS[route.provider] },
      schema: {
        tags: ['LLM proxy'],
        summary: route.summary,
        description: `Forwarded to \`${route.provider === 'openai' ? 'ATRIUM_OPENAI_BASE_URL' : 'ATRIUM_ANTHROPIC_BASE_URL'}\`; errors in the provider's shape (docs/llm-proxy.md).`,
        ...(wildcard ? { params: schema.ModelParams } : {}),
        ...(route.method === 'POST' ? { body: BODIES[route.provider] } : {}),
        response: { 200: schema.Passthrough },
      },
      handler: (request, reply) => forward(ctx, upstreams[route.provider], recorder.record, { provider: route.provider, endpoint: endpointOf(route, request) }, request, reply),
    });
  }
}

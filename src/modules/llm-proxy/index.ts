// The LLM proxy: OpenAI- and Anthropic-compatible routes forwarded to the operator's upstreams,
// with one usage record and one event per call.
import type { Module } from '../../module.ts';
import { llmCallCompleted } from './events.ts';
import { llmProxyRoutes, PROXY_ROLE, PROXY_SCOPE } from './routes.ts';

export const llmProxyModule: Module = {
  name: 'llm-proxy',
  routes: llmProxyRoutes,
  events: [llmCallCompleted],
  // A participant token's `llm` admits the proxy only where its signer holds the role (and, minted
  // for an OAuth token, the scope): no token reaches the operator's upstreams for a caller that may not.
  tokenRoles: [{ grant: 'api', surface: 'llm', role: PROXY_ROLE, oauthScope: PROXY_SCOPE, description: 'uses the LLM proxy' }],
};

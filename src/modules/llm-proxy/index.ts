// The LLM proxy: OpenAI- and Anthropic-compatible routes forwarded to the operator's upstreams,
// with one usage record and one event per call.
import type { Module } from '../../module.ts';
import { llmCallCompleted } from './events.ts';
import { llmProxyRoutes } from './routes.ts';

export const llmProxyModule: Module = {
  name: 'llm-proxy',
  routes: llmProxyRoutes,
  events: [llmCallCompleted],
};

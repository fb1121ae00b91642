// The operator's upstream providers: one pooled, kept-alive connection set per provider, and
// everything about a request that does not change between requests (origin, path prefix, the
// operator's credential) worked out once at startup. Requests go with `HttpExchange`
// (src/platform/http/exchange.ts).
import { Pool } from 'undici';
import type { Config } from '../../config.ts';
import type { Provider } from './usage.ts';

export interface Upstream {
  readonly provider: Provider;
  readonly pool: Pool;
  /** The upstream path of a provider path (`/v1/…`), under the base URL's own path. */
  pathOf(endpoint: string): string;
  /** Headers that authenticate the operator to the provider. */
  readonly auth: Readonly<Record<string, string>>;
}

/** Most connections kept to one provider. */
const MAX_CONNECTIONS = 512;

function upstream(provider: Provider, baseUrl: string, auth: Record<string, string>, timeoutMs: number): Upstream {
  const url = new URL(baseUrl);
  const prefix = url.pathname.replace(/\/+$/, '');
  return {
    provider,
    pool: new Pool(url.origin, { connections: MAX_CONNECTIONS, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 60_000 }),
    // Each base URL means what it means to its SDK: OpenAI's includes the version, Anthropic's not.
    pathOf: provider === 'openai' ? (endpoint) => `${prefix}${endpoint.replace(/^\/v1/, '')}` : (endpoint) => `${prefix}${endpoint}`,
    auth,
  };
}

/** The configured providers; one without an API key is left out (its routes answer 404). */
export function configuredUpstreams(config: Config['llm']): Partial<Record<Provider, Upstream>> {
  return {
    ...(config.openaiApiKey ? { openai: upstream('openai', config.openaiBaseUrl, { authorization: `Bearer ${config.openaiApiKey}` }, config.timeoutMs) } : {}),
    ...(config.anthropicApiKey ? { anthropic: upstream('anthropic', config.anthropicBaseUrl, { 'x-api-key': config.anthropicApiKey }, config.timeoutMs) } : {}),
  };
}

// The operator's upstream providers: one pooled, kept-alive connection set per provider, and
// everything about a request that does not change between requests (origin, path prefix, the
// operator's credential) worked out once at startup; and one exchange with a provider.
import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
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

/** A provider's answer: status and headers once they arrive, the body as it comes. */
export interface UpstreamAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** Why a request is given up: its caller left, or stopped reading its answer. */
const GIVEN_UP = 'The client closed the connection';

/**
 * One request to a provider, dispatched with a handler of our own rather than through
 * `pool.request`. That API's per-request handler is an AsyncResource, and with a model's pace (50
 * calls waiting upstream) each call's objects then lived through two scavenges into the old
 * generation, 2.7–6.3 KB a call in small test programs, and the major collections that followed
 * added to the proxy's p99 (docs/performance-journal.md, "The proxy's calls kept out of the old
 * generation"). `answer` settles when the answer's headers arrive, or with the error that came
 * first; `abort()` gives up the request (and its answer's body) at any point.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  readonly answer: Promise<UpstreamAnswer>;
  #aborted = false;
  #ended = false;
  #controller: Dispatcher.DispatchController | undefined;
  #body: Readable | undefined;
  #resolve!: (answer: UpstreamAnswer) => void;
  #reject!: (error: Error) => void;

  constructor(pool: Dispatcher, options: Dispatcher.DispatchOptions) {
    this.answer = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    pool.dispatch(options, this);
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  abort(): void {
    if (this.#aborted || this.#ended) return;
    this.#aborted = true;
    this.#controller?.abort(new Error(GIVEN_UP));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#aborted) controller.abort(new Error(GIVEN_UP));
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    this.#body = new Readable({
      highWaterMark: 64 * 1024,
      read: () => controller.resume(),
      // A body given up before its end gives up the request, and its connection.
      destroy: (error, callback) => {
        this.abort();
        // An error in the turn that brought the headers would be emitted before the reader,
        // awaiting `answer`, could listen for it, and so crash the process: it waits a turn.
        if (error && this.#body!.listenerCount('error') === 0) setImmediate(callback, error);
        else callback(error);
      },
    });
    this.#resolve({ statusCode, headers, body: this.#body });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#body!.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#body!.push(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#ended = true;
    if (this.#body) this.#body.destroy(error);
    else this.#reject(error);
  }
}

// Reading usage out of an answer while it passes through: a tap that passes the bytes on (as they
// arrive, or event by event when one event must be dropped), finds the server-sent events in them
// and decodes only the few that carry each provider's usage fields, terminal event or error event.
import { Transform, type TransformCallback } from 'node:stream';
import { JsonScanner } from './json-scan.ts';
import { SseEventScanner, SseSplitter, sseEventName, sseFields } from './sse.ts';

export type Provider = 'openai' | 'anthropic';

export interface TokenUsage {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

export const NO_USAGE: TokenUsage = { input_tokens: 0, cached_input_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0 };

/**
 * The metered endpoints: those whose answers report usage, per each provider's API reference
 * (docs/llm-proxy.md lists them with their sources). Token counts and model lists consume nothing.
 */
const METERED: Record<Provider, ReadonlySet<string>> = {
  openai: new Set(['/v1/chat/completions', '/v1/responses', '/v1/responses/compact', '/v1/embeddings']),
  anthropic: new Set(['/v1/messages']),
};

export const isMetered = (provider: Provider, endpoint: string): boolean => METERED[provider].has(endpoint);

/** Where a plain answer's usage and model are, when it is too large to hold. */
const PLAIN_PATHS = [['usage'], ['model']];

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);
type Obj = Record<string, any>;

/**
 * OpenAI's usage (chat completions and embeddings: prompt/completion tokens; responses:
 * input/output tokens) in the normalised form: its input counts include cached tokens, which are
 * taken out so that `input_tokens` is what is billed at the full rate.
 */
function openaiUsage(usage: Obj): TokenUsage {
  const input = count(usage.prompt_tokens ?? usage.input_tokens);
  const details = (usage.prompt_tokens_details ?? usage.input_tokens_details ?? {}) as Obj;
  const cached = count(details.cached_tokens);
  const cacheWrite = count(details.cache_write_tokens);
  return {
    input_tokens: Math.max(0, input - cached - cacheWrite),
    cached_input_tokens: cached,
    cache_write_tokens: cacheWrite,
    output_tokens: count(usage.completion_tokens ?? usage.output_tokens),
    reasoning_tokens: count((usage.completion_tokens_details ?? usage.output_tokens_details ?? {}).reasoning_tokens),
  };
}

/** Anthropic's usage: `input_tokens` already leaves out cache reads and writes. */
function anthropicUsage(usage: Obj, previous: TokenUsage = NO_USAGE): TokenUsage {
  const pick = (field: string, fallback: number) => (usage[field] === undefined || usage[field] === null ? fallback : count(usage[field]));
  return {
    input_tokens: pick('input_tokens', previous.input_tokens),
    cached_input_tokens: pick('cache_read_input_tokens', previous.cached_input_tokens),
    cache_write_tokens: pick('cache_creation_input_tokens', previous.cache_write_tokens),
    output_tokens: pick('output_tokens', previous.output_tokens),
    reasoning_tokens: count(usage.output_tokens_details?.thinking_tokens ?? previous.reasoning_tokens),
  };
}

/** What a tap learned about an answer. */
export interface TapState {
  usage: TokenUsage | undefined;
  model: string | undefined;
  /** The stream's terminal event arrived (`[DONE]`, `response.completed`, `message_stop`…). */
  terminal: boolean;
  /** The provider reported an error inside a stream. */
  errored: boolean;
  /** Bytes have started to flow (time to first byte). */
  firstByteAt: number | undefined;
}

/**
 * OpenAI stream events worth decoding and parsing: the end, a usage or response object, or an
 * error. Tested on an event's bytes read as Latin-1, one character a byte, where an ASCII pattern
 * matches as it would in the UTF-8 text; a member may run on into the event's next data line.
 */
const OPENAI_EVENT_TO_READ = /\[DONE\]|"(?:usage|response|error)"(?:\s|data:)*:(?:\s|data:)*\{|"type"(?:\s|data:)*:(?:\s|data:)*"error"/;
/** Anthropic stream events with something to read (content deltas and pings have not). */
const ANTHROPIC_EVENTS_TO_READ = new Set(['message_start', 'message_delta', 'message_stop', 'error']);

/** A JSON object, or undefined (without the cost of a throw for what cannot be one, like a comment's empty data). */
function parse(text: string): Obj | undefined {
  if (!/^\s*\{/.test(text)) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === 'object' ? value as Obj : undefined;
  } catch {
    return undefined;
  }
}

/** Reads a plain (not streamed) answer's body into `state`: its usage and model, when it has them. */
function readPlainAnswer(state: TapState, provider: Provider, body: Obj | undefined): void {
  if (body && typeof body.model === 'string') state.model = body.model;
  if (body?.usage && typeof body.usage === 'object') state.usage = provider === 'openai' ? openaiUsage(body.usage) : anthropicUsage(body.usage);
  state.terminal = true;
}

/** What a plain answer read whole says (the tap's state once such an answer has passed through it). */
export function plainAnswerState(provider: Provider, endpoint: string, bytes: Buffer, firstByteAt: number | undefined): TapState {
  const state: TapState = { usage: undefined, model: undefined, terminal: false, errored: false, firstByteAt };
  readPlainAnswer(state, provider, isMetered(provider, endpoint) ? parse(bytes.toString('utf8')) : undefined);
  return state;
}

/**
 * A pass-through stream over an upstream answer. Bytes go on as they come; with `stripUsageChunk`
 * (an OpenAI chat stream whose `include_usage` Atrium added) they go on event by event, minus the
 * extra usage-only chunk the client did not ask for. Usage is read whatever the answer's size: a
 * plain answer, and a stream event too long to hold, are scanned as they pass.
 */
export class UsageTap extends Transform {
  readonly state: TapState = { usage: undefined, model: undefined, terminal: false, errored: false, firstByteAt: undefined };
  readonly #provider: Provider;
  readonly #streamed: boolean;
  readonly #stripUsageChunk: boolean;
  readonly #splitter = new SseSplitter();
  /** A plain answer's scanner (metered endpoints only). */
  readonly #plain: JsonScanner | undefined;
  /** The event too long to hold that is passing, in pieces. */
  #long: SseEventScanner | undefined;

  constructor(options: { provider: Provider; endpoint: string; streamed: boolean; stripUsageChunk: boolean }) {
    super();
    this.#provider = options.provider;
    this.#streamed = options.streamed;
    this.#stripUsageChunk = options.stripUsageChunk;
    this.#plain = !options.streamed && isMetered(options.provider, options.endpoint) ? new JsonScanner(PLAIN_PATHS) : undefined;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.state.firstByteAt ??= performance.now();
    if (!this.#streamed) {
      this.#plain?.push(chunk);
      done(null, chunk);
      return;
    }
    const events = this.#splitter.push(chunk);
    if (!this.#stripUsageChunk) {
      this.#read(events, this.#splitter.cut);
      done(null, chunk);
      return;
    }
    done(null, this.#kept(events, this.#splitter.cut));
  }

  override _flush(done: TransformCallback): void {
    if (!this.#streamed) {
      readPlainAnswer(this.state, this.#provider, this.#plain?.result());
      done();
      return;
    }
    const last = this.#splitter.end();
    if (!this.#stripUsageChunk) {
      if (last) this.#read([last], false);
      done();
      return;
    }
    // An event the last byte ended, or else the bytes no blank line ended, passed on as they are.
    const out = last ? this.#kept([last], false) : this.#splitter.rest();
    done(null, out !== undefined && out.length > 0 ? out : undefined);
  }

  /** Reads the events (the last a piece of a longer one when `cut`); the indexes of those to drop. */
  #read(events: Buffer[], cut: boolean): number | undefined {
    let dropped: number | undefined;
    for (let k = 0; k < events.length; k++) {
      const bytes = events[k]!;
      const piece = cut && k === events.length - 1;
      if (this.#long) {
        this.#long.push(bytes);
        if (!piece) this.#readLong();
      } else if (piece) {
        this.#long = new SseEventScanner();
        this.#long.push(bytes);
      } else if (this.#onEvent(bytes)) {
        dropped = k;
      }
    }
    return dropped;
  }

  /** Reads the events and gives the bytes of those to pass on: as given when all are (one event, most often). */
  #kept(events: Buffer[], cut: boolean): Buffer | undefined {
    const dropped = this.#read(events, cut);
    const kept = dropped === undefined ? events : events.filter((_event, k) => k !== dropped);
    return kept.length === 0 ? undefined : kept.length === 1 ? kept[0] : Buffer.concat(kept);
  }

  #readLong(): void {
    const { name, data } = this.#long!.result();
    this.#long = undefined;
    this.#interpret(name, data);
  }

  /** Reads one event, given as its bytes; true when it is the usage-only chunk to drop. */
  #onEvent(bytes: Buffer): boolean {
    if (this.#provider === 'openai') {
      // Most events of a long answer are content deltas with nothing to read: decode and parse
      // only those that may end the stream or carry usage, a response object or an error (and the
      // first, for the model).
      if (this.state.model !== undefined && !OPENAI_EVENT_TO_READ.test(bytes.toString('latin1'))) return false;
      const event = sseFields(bytes);
      if (event.data === '[DONE]') {
        this.state.terminal = true;
        return false;
      }
      const data = parse(event.data);
      return data ? this.#interpret(event.event, data) : false;
    }
    const name = sseEventName(bytes);
    if (name !== undefined && !ANTHROPIC_EVENTS_TO_READ.has(name)) return false;
    const event = sseFields(bytes);
    const data = parse(event.data);
    return data ? this.#interpret(event.event, data) : false;
  }

  /** What one event's data says (all of it, or the members a long event's scan kept); true to drop it. */
  #interpret(name: string | undefined, data: Obj): boolean {
    if (this.#provider === 'openai') {
      if (data.error) this.state.errored = true;
      // Responses stream: usage rides on the terminal event's response.
      const response = data.response as Obj | undefined;
      if (typeof data.type === 'string' && response) {
        if (typeof response.model === 'string') this.state.model = response.model;
        if (['response.completed', 'response.incomplete', 'response.failed'].includes(data.type)) {
          this.state.terminal = true;
          if (response.usage) this.state.usage = openaiUsage(response.usage);
        }
        if (data.type === 'response.failed') this.state.errored = true;
        return false;
      }
      if (data.type === 'error') this.state.errored = true;
      if (typeof data.model === 'string') this.state.model = data.model;
      if (data.usage && typeof data.usage === 'object') {
        this.state.usage = openaiUsage(data.usage);
        return this.#stripUsageChunk && Array.isArray(data.choices) && data.choices.length === 0;
      }
      return false;
    }
    const type = name ?? data.type;
    if (type === 'message_start' && data.message) {
      if (typeof data.message.model === 'string') this.state.model = data.message.model;
      if (data.message.usage) this.state.usage = anthropicUsage(data.message.usage);
    } else if (type === 'message_delta' && data.usage) {
      // Cumulative counts: the latest delta wins, fields it leaves out keep their value.
      this.state.usage = anthropicUsage(data.usage, this.state.usage);
    } else if (type === 'message_stop') {
      this.state.terminal = true;
    } else if (type === 'error') {
      this.state.errored = true;
    }
    return false;
  }
}

/**
 * Whether a participant token's `api.llm.models` allow a model: patterns `provider/model` with an
 * optional trailing `*`; no list allows every model.
 */
export function modelAllowed(patterns: unknown, provider: Provider, model: string | undefined): boolean {
  if (!Array.isArray(patterns)) return true;
  const name = `${provider}/${model ?? ''}`;
  return patterns.some((p) => typeof p === 'string' && (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : name === p));
}

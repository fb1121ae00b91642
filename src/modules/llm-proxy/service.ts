// Forwarding one call to the provider, as an object with one method per phase: `admit` (the
// participant's model, then billing's admission through ctx.admission), `send` (the caller's request
// upstream with the operator's credential in place of the caller's, and `stream_options.include_usage`
// added to OpenAI chat streams), `relayPlain` (a plain answer read whole, up to WHOLE_ANSWER_BYTES, and
// sent in one write) or `relayStream` (a stream, or a larger answer, passed on as it arrives through
// a tap that reads its usage), and `settle`: once the call is over — completed, cut, refused by the
// upstream or abandoned by the client — the one place its usage record is written, with the call's
// event, outside the response path. How it ended is decided by `classify` (outcome.ts).
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import type { AppContext } from '../../context.ts';
import { accessOf, callerOf, type Principal } from '../../platform/http/auth.ts';
import { apiError, forbidden, type ApiError } from '../../platform/http/errors.ts';
import { HttpExchange, type HttpAnswer } from '../../platform/http/exchange.ts';
import { apiScopeOf } from '../participant-tokens/service.ts';
import type { CallRecord } from './store.ts';
import type { Upstream } from './upstream.ts';
import { classify, type CallEnd, type Ending } from './outcome.ts';
import { isMetered, modelAllowed, NO_USAGE, plainAnswerState, UsageTap, type Provider, type TapState } from './usage.ts';

/** Request headers a client may send on to the provider; everything else (credentials above all) stays here. */
const FORWARDED_REQUEST_HEADERS = ['content-type', 'accept', 'anthropic-version', 'anthropic-beta', 'openai-beta', 'idempotency-key', 'user-agent'];
/** Response headers clients act on (rate limits, retries, request ids) come back; the rest stays upstream. */
const FORWARDED_RESPONSE_HEADERS = new Set(['content-type', 'cache-control', 'retry-after', 'retry-after-ms', 'x-request-id', 'request-id', 'openai-processing-ms', 'openai-version', 'x-should-retry']);
const FORWARDED_RESPONSE_PREFIXES = ['x-ratelimit-', 'anthropic-ratelimit-'];
const ANNOTATION_PREFIX = 'x-meshagent-annotation-';
const MAX_ANNOTATIONS = 20;
const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';
/** The status recorded for a call the client abandoned before any answer (nginx's "client closed request"). */
const CLIENT_CLOSED = 499;
/** Why a call's upstream request is given up: its client left, or stopped reading its answer. */
const CLIENT_LEFT = 'The client closed the connection';
/** How callers see each provider named in errors. */
const PROVIDER_NAMES: Record<Provider, string> = { openai: 'OpenAI', anthropic: 'Anthropic' };
/**
 * Plain (not streamed) answers up to this size are read whole, then sent with their length in one
 * write: a JSON answer is of no use to its client before its last byte, and sent as it came, its end
 * would cost a write of its own (docs/contributing/performance-journal.md). Larger ones are streamed as they come.
 */
const WHOLE_ANSWER_BYTES = 1024 * 1024;

const rawBodies = new WeakMap<FastifyRequest, Buffer>();

/** Keeps the bytes of a request body as they came, to forward them unchanged. */
export function keepRawBody(request: FastifyRequest, body: Buffer): void {
  rawBodies.set(request, body);
}

export interface ProxiedCall {
  provider: Provider;
  /** The provider's path, e.g. `/v1/chat/completions`, without the query. */
  endpoint: string;
}

function annotationsOf(request: FastifyRequest): Record<string, string> {
  const annotations: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!name.startsWith(ANNOTATION_PREFIX) || typeof value !== 'string') continue;
    if (Object.keys(annotations).length >= MAX_ANNOTATIONS) break;
    annotations[name.slice(ANNOTATION_PREFIX.length).slice(0, 100)] = value.slice(0, 1000);
  }
  return annotations;
}

function who(principal: Principal): Pick<CallRecord, 'credential' | 'user' | 'client' | 'participant'> {
  return {
    credential: { kind: principal.kind, id: principal.credentialId },
    user: principal.userId ?? null,
    client: principal.clientId ?? null,
    participant: principal.kind === 'participant' ? principal.name : null,
  };
}

/**
 * The body to send upstream: the client's bytes unchanged, unless an OpenAI chat stream does not
 * ask for usage, in which case `include_usage` is added (and the extra chunk stripped on the way
 * back).
 */
function upstreamBody(request: FastifyRequest, call: ProxiedCall): { body: Buffer | undefined; stripUsageChunk: boolean } {
  const raw = rawBodies.get(request);
  const parsed = request.body as Record<string, any> | undefined;
  if (call.provider === 'openai' && call.endpoint === '/v1/chat/completions' && parsed?.stream === true && parsed.stream_options?.include_usage !== true) {
    const body = { ...parsed, stream_options: { ...(parsed.stream_options ?? {}), include_usage: true } };
    return { body: Buffer.from(JSON.stringify(body)), stripUsageChunk: true };
  }
  return { body: raw, stripUsageChunk: false };
}

function upstreamHeaders(request: FastifyRequest, upstream: Upstream, body: Buffer | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  // The tap reads the answer, so it must not come compressed.
  headers['accept-encoding'] = 'identity';
  if (upstream.provider === 'anthropic') headers['anthropic-version'] ??= DEFAULT_ANTHROPIC_VERSION;
  if (body) headers['content-length'] = String(body.length);
  return { ...headers, ...upstream.auth };
}

function responseHeaders(headers: HttpAnswer['headers'], keepLength: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const keep = FORWARDED_RESPONSE_HEADERS.has(name) || FORWARDED_RESPONSE_PREFIXES.some((p) => name.startsWith(p)) || (keepLength && name === 'content-length');
    if (keep) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

interface Gathered {
  chunks: Buffer[];
  /** False when the body passed the limit first (the rest is still to be read, the body paused). */
  ended: boolean;
  firstByteAt: number | undefined;
}

/** Reads a body until it ends or passes `limit` bytes; rejects when it fails first. */
function gather(body: Readable, limit: number): Promise<Gathered> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let firstByteAt: number | undefined;
    const stop = () => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      firstByteAt ??= performance.now();
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes <= limit) return;
      body.pause();
      stop();
      // Until the caller listens again, a failure is kept on the body (`errored`), not thrown.
      body.on('error', () => {});
      resolve({ chunks, ended: false, firstByteAt });
    };
    const onEnd = () => {
      stop();
      resolve({ chunks, ended: true, firstByteAt });
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
  });
}

/** Writes a call's usage record (and its event); resolves once written. */
export type Recorder = (record: CallRecord) => Promise<void>;

/** The positive integer a body gives a field, if it does. */
const positiveInteger = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined);

/** The upstream's answer, once its head has come. */
interface Answer {
  response: HttpAnswer;
  streamed: boolean;
  upstreamRequestId: string | null;
}

/** What the relay saw of an answer, for `settle`. */
type Seen = Pick<CallRecord, 'status' | 'ttfb_ms' | 'upstream_request_id' | 'stream'> & { model: string | undefined };

/** One call through the proxy, in its phases: admit, send, relay (plain or stream), settle. */
export class ProxyCall {
  readonly requestId = randomUUID();
  readonly #ctx: AppContext;
  readonly #upstream: Upstream;
  readonly #recorder: Recorder;
  readonly #call: ProxiedCall;
  readonly #request: FastifyRequest;
  readonly #reply: FastifyReply;
  readonly #metered: boolean;
  readonly #body: Record<string, unknown> | undefined;
  /** The model the caller asked for. */
  readonly #model: string | undefined;
  readonly #startedAt = new Date();
  readonly #started = performance.now();
  #exchange: HttpExchange | undefined;
  /** Atrium added `include_usage` upstream: the usage-only chunk is kept from the client. */
  #stripUsageChunk = false;
  #settled = false;
  /** What to do when the connection to the client closes: give up the upstream request, then settle once the answer is under way. */
  #onClose = () => this.#exchange?.abort(CLIENT_LEFT);

  constructor(ctx: AppContext, upstream: Upstream, recorder: Recorder, call: ProxiedCall, request: FastifyRequest, reply: FastifyReply) {
    this.#ctx = ctx;
    this.#upstream = upstream;
    this.#recorder = recorder;
    this.#call = call;
    this.#request = request;
    this.#reply = reply;
    this.#metered = isMetered(call.provider, call.endpoint);
    this.#body = request.body as Record<string, unknown> | undefined;
    this.#model = typeof this.#body?.model === 'string' ? this.#body.model : undefined;
  }

  async run(): Promise<FastifyReply> {
    await this.admit();
    const answer = await this.send();
    return answer.streamed ? this.relayStream(answer, []) : this.relayPlain(answer);
  }

  /** The most output the caller allowed (`max_tokens`, `max_completion_tokens` or `max_output_tokens`), per choice. */
  get #maxOutputTokens(): number | undefined {
    return [this.#body?.max_tokens, this.#body?.max_completion_tokens, this.#body?.max_output_tokens].map(positiveInteger).find((v) => v !== undefined);
  }

  /** How many answers the call asks for (OpenAI chat's `n`); each may use the output allowed. */
  get #choices(): number {
    return positiveInteger(this.#body?.n) ?? 1;
  }

  /**
   * Admission, before anything goes upstream: a participant token's models, then (for a metered
   * endpoint) billing's, which reserves what the call can cost or refuses it in the provider's shape.
   */
  async admit(): Promise<void> {
    const principal = callerOf(this.#request);
    const { provider } = this.#call;
    if (principal.kind === 'participant' && !modelAllowed((apiScopeOf(principal.grants)?.llm as { models?: unknown } | undefined)?.models, provider, this.#model)) {
      throw forbidden(`The participant token does not allow the model ${provider}/${this.#model ?? ''}`);
    }
    if (!this.#metered) return;
    await this.#ctx.admission.admit({
      projectId: accessOf(this.#request).projectId, requestId: this.requestId, provider, model: this.#model,
      bodyBytes: rawBodies.get(this.#request)?.length ?? 0, maxOutputTokens: this.#maxOutputTokens, choices: this.#choices,
    });
  }

  /** Sends the request upstream and waits for the answer's head; a call that fails first is settled, and its error thrown. */
  async send(): Promise<Answer> {
    const { body, stripUsageChunk } = upstreamBody(this.#request, this.#call);
    const url = this.#request.url;
    const query = url.includes('?') ? url.slice(url.indexOf('?')) : '';
    // A client that leaves takes the upstream request with it.
    const exchange = this.#exchange = new HttpExchange(this.#upstream.pool, {
      method: this.#request.method as Dispatcher.HttpMethod,
      path: `${this.#upstream.pathOf(this.#call.endpoint)}${query}`,
      headers: upstreamHeaders(this.#request, this.#upstream, body),
      body: body ?? null,
    });
    this.#stripUsageChunk = stripUsageChunk;
    this.#reply.raw.once('close', () => this.#onClose());
    let response: HttpAnswer;
    try {
      response = await exchange.answer;
    } catch (error) {
      const timedOut = error instanceof undiciErrors.HeadersTimeoutError;
      throw this.#failed(error, { answered: false, failure: exchange.aborted ? 'client_left' : timedOut ? 'timeout' : 'unreachable' }, 'could not be reached', null);
    }
    const id = response.headers['x-request-id'] ?? response.headers['request-id'];
    return { response, streamed: String(response.headers['content-type'] ?? '').startsWith('text/event-stream'), upstreamRequestId: typeof id === 'string' ? id : null };
  }

  /** A plain answer: read whole when it is small and sent in one write, else passed on as it comes. */
  async relayPlain(answer: Answer): Promise<FastifyReply> {
    const { response } = answer;
    let gathered: Gathered;
    try {
      gathered = await gather(response.body, WHOLE_ANSWER_BYTES);
    } catch (error) {
      const end = { answered: true, status: response.statusCode, delivered: false, upstreamCut: !this.#exchange!.aborted, terminal: false, errored: false } as const;
      throw this.#failed(error, end, 'cut its answer short', answer.upstreamRequestId, error instanceof undiciErrors.BodyTimeoutError);
    }
    if (!gathered.ended) return this.relayStream(answer, gathered.chunks);
    const whole = Buffer.concat(gathered.chunks);
    const state = plainAnswerState(this.#call.provider, this.#call.endpoint, whole, gathered.firstByteAt);
    return this.#respond(answer, () => state, () => false, whole, false);
  }

  /** A stream, or a plain answer too large to hold (`head` is what was read of it): passed on as it comes, through the tap. */
  relayStream(answer: Answer, head: Buffer[]): FastifyReply {
    const { response, streamed } = answer;
    const strips = this.#stripUsageChunk && streamed;
    const tap = new UsageTap({ provider: this.#call.provider, endpoint: this.#call.endpoint, streamed, stripUsageChunk: strips });
    let upstreamFailed = false;
    // Wired by hand rather than with stream.pipeline, which makes an AbortController and its
    // DOMException on every call (~3 % of the proxy's CPU): an upstream error cuts the answer, and an
    // answer closed early (the client left) releases the upstream body.
    for (const chunk of head) tap.write(chunk);
    const out = response.body.pipe(tap);
    response.body.on('error', (error) => {
      upstreamFailed = true;
      tap.destroy(error);
    });
    tap.once('close', () => response.body.destroy());
    if (response.body.errored) {
      upstreamFailed = true;
      tap.destroy(response.body.errored);
    }
    return this.#respond(answer, () => tap.state, () => upstreamFailed, out, !strips);
  }

  /**
   * The one place a call's usage is recorded, once it is over: how it ended (`classify`), its usage
   * and timings, written with its event outside the response path.
   */
  settle(end: CallEnd, seen: Seen): void {
    if (this.#settled) return;
    this.#settled = true;
    const principal = callerOf(this.#request);
    const { outcome, usageSource } = classify(end);
    const record: CallRecord = {
      projectId: accessOf(this.#request).projectId,
      request_id: this.requestId,
      provider: this.#call.provider,
      endpoint: this.#call.endpoint,
      model: seen.model ?? this.#model ?? null,
      requested_model: this.#model ?? null,
      stream: seen.stream,
      status: seen.status,
      outcome,
      usage_source: usageSource,
      usage: end.usage ?? NO_USAGE,
      request_bytes: rawBodies.get(this.#request)?.length ?? 0,
      max_output_tokens: this.#maxOutputTokens ?? null,
      choices: this.#choices,
      latency_ms: Math.round(performance.now() - this.#started),
      ttfb_ms: seen.ttfb_ms,
      upstream_request_id: seen.upstream_request_id,
      ...who(principal),
      annotations: annotationsOf(this.#request),
      started_at: this.#startedAt.toISOString(),
    };
    void this.#recorder(record).catch((error: unknown) => this.#ctx.log.error({ err: error, requestId: this.requestId }, 'llm proxy: the usage record could not be written'));
  }

  /** Sends the answer, and settles the call when the connection to the client closes (the outcome is known then). */
  #respond(answer: Answer, state: () => TapState, upstreamCut: () => boolean, body: Buffer | Readable, keepLength: boolean): FastifyReply {
    const { response } = answer;
    const finish = () => {
      const delivered = this.#reply.raw.writableFinished;
      if (!delivered) this.#exchange!.abort(CLIENT_LEFT);
      const seen = state();
      this.settle(
        // Decided when the connection to the client closes: a cut upstream has failed by then, an abandoning client has not.
        { metered: this.#metered, usage: seen.usage, answered: true, status: response.statusCode, delivered, upstreamCut: upstreamCut(), terminal: seen.terminal, errored: seen.errored },
        {
          status: response.statusCode, stream: answer.streamed, model: seen.model, upstream_request_id: answer.upstreamRequestId,
          ttfb_ms: seen.firstByteAt === undefined ? null : Math.round(seen.firstByteAt - this.#started),
        },
      );
    };
    if (this.#reply.raw.closed) {
      if (!Buffer.isBuffer(body)) body.destroy();
      finish();
      return this.#reply;
    }
    this.#onClose = finish;
    return this.#reply.status(response.statusCode)
      .headers({ ...responseHeaders(response.headers, keepLength), 'atrium-request-id': this.requestId })
      .send(body);
  }

  /** Settles a call that failed before any of its answer reached the client; the error to answer with. */
  #failed(error: unknown, end: Ending, what: string, upstreamRequestId: string | null, bodyTimedOut = false): ApiError {
    const { provider } = this.#call;
    const clientLeft = this.#exchange!.aborted;
    const timedOut = bodyTimedOut || (!end.answered && end.failure === 'timeout');
    const failure = clientLeft
      ? apiError('upstream_unavailable', CLIENT_LEFT)
      : timedOut
        ? apiError('upstream_timeout', { seconds: Math.round(this.#ctx.config.llm.timeoutMs / 1000) })
        // Named by provider: the error's own text names the upstream's address, which is the operator's.
        : apiError('upstream_unavailable', `The ${PROVIDER_NAMES[provider]} upstream ${what}`);
    if (!clientLeft && !timedOut) this.#ctx.log.warn({ err: error, provider, requestId: this.requestId }, `llm proxy: the upstream ${what}`);
    this.settle({ metered: this.#metered, usage: undefined, ...end }, {
      status: clientLeft ? CLIENT_CLOSED : failure.status, stream: false, model: undefined, upstream_request_id: upstreamRequestId, ttfb_ms: null,
    });
    return failure;
  }
}

/** Sends a call upstream and the answer back; records the call once it is over. */
export async function forward(ctx: AppContext, upstream: Upstream | undefined, recorder: Recorder, call: ProxiedCall, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!upstream) throw apiError('llm_provider_unavailable', { provider: PROVIDER_NAMES[call.provider] });
  return new ProxyCall(ctx, upstream, recorder, call, request, reply).run();
}

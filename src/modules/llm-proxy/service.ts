// Forwarding one call to the provider: the caller's request goes upstream with the operator's
// credential in place of the caller's (and `stream_options.include_usage` added to OpenAI chat
// streams); a streamed answer comes back as it arrives, byte for byte, through a tap that reads its
// usage, and a plain one is read whole (up to WHOLE_ANSWER_BYTES) and sent in one write. Once the
// answer is over — completed, cut, or abandoned by the client — one usage record is written, with
// the call's event for LLM loggers, outside the response path.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import type { AppContext } from '../../context.ts';
import { accessOf, callerOf, type Principal } from '../../platform/http/auth.ts';
import { apiError, forbidden } from '../../platform/http/errors.ts';
import { HttpExchange, type HttpAnswer } from '../../platform/http/exchange.ts';
import { apiScopeOf } from '../participant-tokens/service.ts';
import type { CallRecord } from './store.ts';
import type { Upstream } from './upstream.ts';
import { modelAllowed, NO_USAGE, plainAnswerState, UsageTap, type Provider, type TapState } from './usage.ts';

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

/** Sends a call upstream and the answer back; records the call once the answer is over. */
export async function forward(ctx: AppContext, upstream: Upstream | undefined, recorder: Recorder, call: ProxiedCall, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!upstream) throw apiError('llm_provider_unavailable', { provider: call.provider === 'openai' ? 'OpenAI' : 'Anthropic' });
  const principal = callerOf(request);
  const model = typeof (request.body as { model?: unknown } | undefined)?.model === 'string' ? (request.body as { model: string }).model : undefined;
  if (principal.kind === 'participant' && !modelAllowed((apiScopeOf(principal.grants)?.llm as { models?: unknown } | undefined)?.models, call.provider, model)) {
    throw forbidden(`The participant token does not allow the model ${call.provider}/${model ?? ''}`);
  }
  const requestId = randomUUID();
  // Billing's admission: the balance must cover the call (402 otherwise, when billing is enforced).
  const parsed = request.body as Record<string, unknown> | undefined;
  const maxTokens = [parsed?.max_tokens, parsed?.max_completion_tokens, parsed?.max_output_tokens].find((v): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0);
  await ctx.admission.admit({ projectId: accessOf(request).projectId, requestId, provider: call.provider, model, bodyBytes: rawBodies.get(request)?.length ?? 0, maxTokens });
  const started = performance.now();
  const startedAt = new Date();
  const { body, stripUsageChunk } = upstreamBody(request, call);
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  const base: Omit<CallRecord, 'status' | 'outcome' | 'usage_source' | 'usage' | 'latency_ms' | 'ttfb_ms' | 'upstream_request_id' | 'model' | 'stream'> = {
    projectId: accessOf(request).projectId,
    request_id: requestId,
    provider: call.provider,
    endpoint: call.endpoint,
    ...who(principal),
    annotations: annotationsOf(request),
    started_at: startedAt.toISOString(),
  };
  const record = (fields: Pick<CallRecord, 'status' | 'outcome' | 'usage_source' | 'usage' | 'ttfb_ms' | 'upstream_request_id' | 'model' | 'stream'>) => {
    void recorder({ ...base, ...fields, latency_ms: Math.round(performance.now() - started) })
      .catch((error: unknown) => ctx.log.error({ err: error, requestId }, 'llm proxy: the usage record could not be written'));
  };

  // A client that leaves takes the upstream request with it.
  const exchange = new HttpExchange(upstream.pool, {
    method: request.method as Dispatcher.HttpMethod,
    path: `${upstream.pathOf(call.endpoint)}${query}`,
    headers: upstreamHeaders(request, upstream, body),
    body: body ?? null,
  });
  /** Records a call that failed before any of its answer reached the client; the error to answer with. */
  const failedBeforeAnswer = (error: unknown, outcome: 'upstream_error' | 'upstream_cut', timedOut: boolean, what: string, upstreamRequestId: string | null) => {
    const nothing = { usage_source: 'none', usage: NO_USAGE, ttfb_ms: null, upstream_request_id: upstreamRequestId, model: model ?? null, stream: false } as const;
    if (exchange.aborted) {
      record({ ...nothing, status: CLIENT_CLOSED, outcome: 'client_aborted' });
      return apiError('upstream_unavailable', CLIENT_LEFT);
    }
    const failure = timedOut
      ? apiError('upstream_timeout', { seconds: Math.round(ctx.config.llm.timeoutMs / 1000) })
      // Named by provider: the error's own text names the upstream's address, which is the operator's.
      : apiError('upstream_unavailable', `The ${PROVIDER_NAMES[call.provider]} upstream ${what}`);
    if (!timedOut) ctx.log.warn({ err: error, provider: call.provider, requestId }, `llm proxy: the upstream ${what}`);
    record({ ...nothing, status: failure.status, outcome });
    return failure;
  };
  let onClose = () => exchange.abort(CLIENT_LEFT);
  reply.raw.once('close', () => onClose());
  let response: HttpAnswer;
  try {
    response = await exchange.answer;
  } catch (error) {
    throw failedBeforeAnswer(error, 'upstream_error', error instanceof undiciErrors.HeadersTimeoutError, 'could not be reached', null);
  }

  const streamed = String(response.headers['content-type'] ?? '').startsWith('text/event-stream');
  const upstreamRequestIdHeader = response.headers['x-request-id'] ?? response.headers['request-id'];
  const upstreamRequestId = typeof upstreamRequestIdHeader === 'string' ? upstreamRequestIdHeader : null;
  /** Records the answer once the connection to the client closes (the outcome is known then). */
  const recordWhenClosed = (state: () => TapState, upstreamCut: () => boolean) => () => {
    const finished = reply.raw.writableFinished;
    if (!finished) exchange.abort(CLIENT_LEFT);
    const answer = state();
    // Decided when the connection to the client closes: a cut upstream has failed by then, an
    // abandoning client has not.
    const outcome = !finished
      ? (upstreamCut() ? 'upstream_cut' : 'client_aborted')
      : response.statusCode >= 400 || answer.errored ? 'upstream_error' : answer.terminal ? 'completed' : 'upstream_cut';
    record({
      status: response.statusCode,
      outcome,
      usage_source: answer.usage ? 'provider' : 'none',
      usage: answer.usage ?? NO_USAGE,
      ttfb_ms: answer.firstByteAt === undefined ? null : Math.round(answer.firstByteAt - started),
      upstream_request_id: upstreamRequestId,
      model: answer.model ?? model ?? null,
      stream: streamed,
    });
  };

  let head: Buffer[] = [];
  if (!streamed) {
    let gathered: Gathered;
    try {
      gathered = await gather(response.body, WHOLE_ANSWER_BYTES);
    } catch (error) {
      throw failedBeforeAnswer(error, 'upstream_cut', error instanceof undiciErrors.BodyTimeoutError, 'cut its answer short', upstreamRequestId);
    }
    if (gathered.ended) {
      const whole = Buffer.concat(gathered.chunks);
      const state = plainAnswerState(call.provider, call.endpoint, whole, gathered.firstByteAt);
      const finish = recordWhenClosed(() => state, () => false);
      if (reply.raw.closed) {
        finish();
        return reply;
      }
      onClose = finish;
      return reply.status(response.statusCode)
        .headers({ ...responseHeaders(response.headers, false), 'atrium-request-id': requestId })
        .send(whole);
    }
    head = gathered.chunks;
  }

  // A stream, or a plain answer too large to hold: passed on as it comes, through the tap.
  const strips = stripUsageChunk && streamed;
  const tap = new UsageTap({ provider: call.provider, endpoint: call.endpoint, streamed, stripUsageChunk: strips });
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
  const finish = recordWhenClosed(() => tap.state, () => upstreamFailed);
  if (reply.raw.closed) {
    out.destroy();
    finish();
    return reply;
  }
  onClose = finish;
  return reply.status(response.statusCode)
    .headers({ ...responseHeaders(response.headers, !strips), 'atrium-request-id': requestId })
    .send(out);
}

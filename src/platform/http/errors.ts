// The error catalogue: every error the API can answer with has a code here, with its HTTP status
// and message template, and docs/errors.md is generated from this table. Routes throw by code;
// one handler renders every failure — ours, the framework's, the database's — as
// `{"error": {"code", "message", "request_id"}}`, unless the route declares a renderer of its own (protocol
// endpoints with a native error shape). Bad input is always a 4xx; only our own bugs are 5xx.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

interface ErrorSpec {
  readonly status: number;
  /** Default message; `{name}` placeholders are filled from the thrower's parameters. */
  readonly message: string;
  /** When a client sees it (docs/errors.md). */
  readonly meaning: string;
}

export const ERROR_CATALOGUE = {
  invalid_request: { status: 400, message: '{detail}', meaning: 'The request breaks the endpoint\'s schema or rules; the message names the field and the rule.' },
  invalid_json: { status: 400, message: 'The body is not valid JSON: {detail}', meaning: 'A JSON body that does not parse, or an empty body with a JSON content type.' },
  invalid_url: { status: 400, message: '{detail}', meaning: 'A URL that is not absolute http(s), cannot be reached, or points at a private address the operator does not allow.' },
  invalid_path: { status: 400, message: '{detail}', meaning: 'A storage path that is absolute, contains `..` or control characters, or is too long.' },
  invalid_payload: { status: 400, message: '{detail}', meaning: 'A webhook payload that is not a JSON object or is too large.' },
  invalid_action: { status: 400, message: '{detail}', meaning: 'A webhook action that does not fit its events (a `call` webhook needs room events).' },
  unknown_event: { status: 400, message: '{detail}', meaning: 'A webhook subscribes to an event type that is not in the catalogue.' },
  weak_password: { status: 400, message: 'Passwords need at least {min} characters', meaning: 'A password shorter than the minimum.' },
  invalid_code: { status: 400, message: '{detail}', meaning: 'A second-factor code (authenticator app, recovery code) or passkey answer that is wrong, already used or expired.' },
  weak_secret: { status: 400, message: '{detail}', meaning: 'A webhook signing secret that is too short.' },
  unauthorized: { status: 401, message: 'A valid bearer credential is required', meaning: 'No credential, or one that is malformed, unknown, expired or revoked. Carries `WWW-Authenticate: Bearer`.' },
  invalid_token: { status: 401, message: '{detail}', meaning: 'A participant token that fails validation (signature, expiry, issuer).' },
  forbidden: { status: 403, message: '{detail}', meaning: 'The credential is valid but may not do this: a missing role, scope or credential kind.' },
  reauthentication_required: { status: 403, message: '{detail}', meaning: 'Adding, removing or renewing a second factor needs a sign-in of the last 10 minutes through the sign-in pages (the console asks for one); personal access tokens and API keys cannot do it.' },
  second_factor_required: { status: 403, message: '{detail}', meaning: 'The caller holds the admin role of the project but has no second factor, and the project (or the deployment, `ATRIUM_ADMINS_NEED_SECOND_FACTOR`) requires one of its admins. Until they add one, their admin role does not count. API keys are not members and are not affected.' },
  not_found: { status: 404, message: '{what} not found', meaning: 'No such resource or route — also for a resource of another project, so that ids never reveal what exists elsewhere.' },
  conflict: { status: 409, message: '{detail}', meaning: 'The request clashes with the current state in a way no more specific code names (a storage path where a folder is, or a folder where a file is).' },
  already_exists: { status: 409, message: '{detail}', meaning: 'The name (or id, email, address, domain) is taken by another resource of its kind; choose another, or address the existing one.' },
  concurrent_change: { status: 409, message: '{detail}', meaning: 'The resource, or one the request refers to, changed or was deleted while the request was being handled; retrying may succeed.' },
  last_admin: { status: 409, message: 'A project must keep at least one admin', meaning: 'The change would leave the project without an admin: make another member an admin first.' },
  limit_reached: { status: 409, message: '{detail}', meaning: 'The project already has as many of this kind of resource as it may (the message says how many); delete one first.' },
  feed_paused: { status: 409, message: '{detail}', meaning: 'The feed is paused: it takes no messages and its subscriptions cannot change until it is resumed.' },
  webhook_disabled: { status: 409, message: 'The webhook is disabled; re-enable it first (PUT with "enabled": true)', meaning: 'A delivery of a disabled webhook was asked to be sent; re-enable the webhook first.' },
  session_ended: { status: 409, message: '{detail}', meaning: 'The session has ended: nobody can join it.' },
  in_progress: { status: 409, message: '{detail}', meaning: 'Another operation on the same resource is running; try again when it has finished.' },
  payload_too_large: { status: 413, message: '{detail}', meaning: 'A body beyond the route\'s limit (1 MiB for JSON; ATRIUM_MAX_UPLOAD_BYTES for uploads).' },
  uri_too_long: { status: 414, message: 'A path parameter is longer than {max} characters', meaning: 'A path segment beyond the router\'s limit.' },
  range_not_satisfiable: { status: 416, message: 'The Range names no byte of the {size}-byte file', meaning: 'A download whose `Range` header names no byte of the file (it starts at or past the end, or the file is empty). `Content-Range: bytes */<size>` gives the file\'s size.' },
  unsupported_media_type: { status: 415, message: '{detail}', meaning: 'A body whose Content-Type the endpoint does not accept.' },
  insufficient_balance: { status: 402, message: 'The project\'s balance is used up: add credits or turn on auto-recharge', meaning: 'An LLM proxy call of a project whose balance, minus what its calls in flight reserved, is at or below zero, when `ATRIUM_BILLING_ENFORCED` is on. Answered in the provider\'s own error shape with `x-should-retry: false`.' },
  rate_limited: { status: 429, message: 'Too many requests; try again in {seconds} s', meaning: 'A rate limit was reached. `Retry-After` says how many seconds to wait.' },
  unpriced_model: { status: 400, message: 'The model {provider}/{model} has no price on this server: ask its operator to price it', meaning: 'With `ATRIUM_BILLING_ENFORCED`, an LLM proxy call for a model the price list does not price (by its name, an alias, its dated snapshot\'s base name or a prefix), where the operator declared no fallback `*` price. Nothing goes upstream. Answered in the provider\'s own error shape with `x-should-retry: false`.' },
  payments_unavailable: { status: 404, message: 'This server takes no payments: its operator has enabled no payment provider', meaning: 'A checkout or auto-recharge on a server whose `ATRIUM_PAYMENT_PROVIDER` is `none` (the default with `DATABASE_URL`).' },
  llm_provider_unavailable: { status: 404, message: 'This server does not proxy {provider}: its operator has configured no API key for it', meaning: 'An LLM proxy route of a provider the operator has not set up (`ATRIUM_OPENAI_API_KEY`, `ATRIUM_ANTHROPIC_API_KEY`). Answered in the provider\'s own error shape.' },
  upstream_unavailable: { status: 502, message: '{detail}', meaning: 'The LLM provider could not be reached, or failed before it answered.' },
  upstream_timeout: { status: 504, message: 'The LLM provider did not answer within {seconds} s', meaning: 'The LLM provider sent no answer within `ATRIUM_LLM_TIMEOUT_SECONDS`.' },
  internal: { status: 500, message: 'Internal server error', meaning: 'A bug in Atrium. The request left nothing half-written; the server log has the details.' },
  unavailable: { status: 503, message: '{detail}', meaning: 'A dependency (the database) does not answer, or the server is shutting down. Retry later.' },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
type CodeWithStatus<S extends number> = { [K in ErrorCode]: (typeof ERROR_CATALOGUE)[K]['status'] extends S ? K : never }[ErrorCode];

export type ErrorParams = Readonly<Record<string, string | number>>;

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, headers?: Record<string, string>) {
    super(message);
    this.status = ERROR_CATALOGUE[code].status;
    this.code = code;
    this.headers = headers;
  }
}

function fill(template: string, params: ErrorParams): string {
  return template.replace(/\{([a-z_]+)\}/g, (placeholder, name: string) => (params[name] === undefined ? placeholder : String(params[name])));
}

/**
 * The error for a code: its template filled from `params`, or `detail` when a string is given
 * (the template's `{detail}`).
 */
export function apiError(code: ErrorCode, params: ErrorParams | string = {}, headers?: Record<string, string>): ApiError {
  const values = typeof params === 'string' ? { detail: params } : params;
  return new ApiError(code, fill(ERROR_CATALOGUE[code].message, values), headers);
}

// Shorthands for the codes every module throws.
export const badRequest = (detail: string, code: CodeWithStatus<400> = 'invalid_request') => apiError(code, detail);
export const unauthorized = (detail?: string) =>
  new ApiError('unauthorized', detail ?? ERROR_CATALOGUE.unauthorized.message, { 'www-authenticate': 'Bearer' });
export const forbidden = (detail = 'Not allowed') => apiError('forbidden', detail);
export const notFound = (what: string) => apiError('not_found', { what });
export const conflict = (detail: string, code: CodeWithStatus<409> = 'conflict') => apiError(code, detail);
export const tooLarge = (detail: string, headers?: Record<string, string>) => apiError('payload_too_large', detail, headers);

/** The one 429: the wait in whole seconds, in the message and in `Retry-After`. */
export function tooManyRequests(retryAfterSeconds: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return apiError('rate_limited', { seconds }, { 'retry-after': String(seconds) });
}

export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    request_id: Type.String({ description: 'The request\'s id, as in its `X-Request-Id` header and the server\'s log lines' }),
  }),
}, { $id: 'ErrorBody', description: 'Every non-2xx response has this body; codes are listed in docs/errors.md' });

/**
 * Renders an error in a route's own shape (an OAuth or LLM-provider error body, an HTML page).
 * Declared per route as `config.renderError`; the default is the `ErrorBody` JSON.
 */
export type ErrorRenderer = (error: ApiError, request: FastifyRequest, reply: FastifyReply) => FastifyReply;

declare module 'fastify' {
  interface FastifyContextConfig {
    renderError?: ErrorRenderer;
  }
}

/** Fastify's own errors that are the client's fault, by their code. */
const FRAMEWORK_ERRORS: Record<string, (error: FastifyError) => ApiError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: (e) => apiError('invalid_json', e.message.replace(/^Body is not valid JSON but content-type is set to 'application\/json'$/, 'the body does not parse')),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => apiError('invalid_json', 'the body is empty'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => tooLarge('The request body is larger than this endpoint accepts'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (e) => apiError('unsupported_media_type', e.message),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => badRequest('Content-Length does not match the body'),
  FST_ERR_CTP_INVALID_TYPE: () => badRequest('The Content-Type header is not valid'),
  FST_ERR_BAD_URL: () => badRequest('The URL is not validly percent-encoded'),
  FST_ERR_MAX_PARAM_LENGTH: () => apiError('uri_too_long', { max: MAX_PARAM_LENGTH }),
  FST_ERR_ASYNC_CONSTRAINT: () => apiError('not_found', { what: 'Route' }),
};

const CODE_OF_STATUS: Record<number, ErrorCode> = {
  401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 413: 'payload_too_large', 414: 'uri_too_long', 415: 'unsupported_media_type', 429: 'rate_limited',
};

/** Longest path parameter the router accepts (Fastify's `maxParamLength`). */
export const MAX_PARAM_LENGTH = 500;

/** One schema violation as ajv reports it (`verbose`: with the schema that holds the keyword). */
export interface SchemaViolation {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string | undefined;
  parentSchema?: Record<string, unknown> | undefined;
}

/**
 * The schema keyword that says in words what a `pattern` asks for ("must not contain "/" or control
 * characters"): a refused value is told that, never the regular expression.
 */
export const PATTERN_MEANS = 'x-pattern-means';

const FORMATS: Record<string, string> = {
  email: 'an email address',
  uuid: 'a UUID',
  'date-time': 'a date and time in ISO 8601 (2025-01-31T12:00:00Z)',
  date: 'a date (2025-01-31)',
  uri: 'an absolute URL',
  url: 'an absolute URL',
  hostname: 'a host name',
};

/**
 * A violation in words, naming the field: `body.container.image is required`. `where` is the part
 * of the request (`body`, `query`) or of a value (`template`).
 */
export function describeViolation(violation: SchemaViolation, where: string): string {
  const segments = violation.instancePath.split('/').slice(1);
  const at = (parts: string[]) => [where, ...parts].join('.');
  const { keyword, params } = violation;
  if (keyword === 'required') return `${at(segments)}.${String(params.missingProperty)} is required`;
  if (keyword === 'additionalProperties') return `${at(segments)} has unknown property ${JSON.stringify(params.additionalProperty)}`;
  // A closed object (additionalProperties: never) reports the unknown property itself.
  if (keyword === 'not' && violation.schemaPath.endsWith('/additionalProperties/not')) {
    return `${at(segments.slice(0, -1))} has unknown property ${JSON.stringify(segments.at(-1))}`;
  }
  if (keyword === 'pattern') {
    const means = violation.parentSchema?.[PATTERN_MEANS];
    return `${at(segments)} ${typeof means === 'string' ? means : 'is not in the form this field takes'}`;
  }
  if (keyword === 'format') return `${at(segments)} must be ${FORMATS[String(params.format)] ?? `a valid ${String(params.format)}`}`;
  if (keyword === 'enum') return `${at(segments)} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  return `${at(segments)} ${violation.message ?? 'is invalid'}`;
}

/**
 * The first violation in words; a value that is none of a union's constants (`"visibility": "x"`)
 * is told the values it may take, not one "must be equal to constant" per branch.
 */
export function describeViolations(violations: readonly SchemaViolation[], where: string): string {
  const first = violations[0]!;
  const union = violations.find((v) => v.keyword === 'anyOf' && v.instancePath === first.instancePath);
  if (union && first.keyword === 'const') {
    const branches = violations.filter((v) => v.instancePath === first.instancePath && v.schemaPath.startsWith(`${union.schemaPath}/`));
    if (branches.every((v) => v.keyword === 'const')) {
      return describeViolation({ ...first, keyword: 'enum', params: { allowedValues: branches.map((v) => v.params.allowedValue) } }, where);
    }
  }
  return describeViolation(first, where);
}

function describeValidation(error: FastifyError): string {
  if (!error.validation?.length) return error.message;
  return describeViolations(error.validation as SchemaViolation[], error.validationContext ?? 'request');
}

/** The SQLSTATE of a database error, which the query layer wraps (DrizzleQueryError.cause). */
function sqlStateOf(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

function sqlMessageOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return ((cause ?? error) as Error).message;
}

/** Any thrown value as a catalogue error; undefined for our own bugs. */
export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return badRequest(describeValidation(fastifyError));
  const framework = fastifyError.code ? FRAMEWORK_ERRORS[fastifyError.code] : undefined;
  if (framework) return framework(fastifyError);
  // The client went away while its body was being read (an aborted upload): nobody hears the
  // answer, but it is not our bug either.
  if (fastifyError.code === 'ECONNRESET' || fastifyError.code === 'ERR_STREAM_PREMATURE_CLOSE') return badRequest('The request was aborted before its body was complete');
  const sqlState = sqlStateOf(error);
  // Uniqueness races that a service's own pre-check could not see.
  if (sqlState === '23505') return conflict('A resource with that name already exists', 'already_exists');
  // A referenced row vanished between the service's check and the write (a concurrent delete).
  if (sqlState === '23503') return conflict('A resource this request refers to no longer exists; retry', 'concurrent_change');
  // Data exceptions: values that pass the schema but that PostgreSQL cannot store.
  if (sqlState?.startsWith('22')) return badRequest(`A value cannot be stored: ${sqlMessageOf(error)}`);
  // Other client errors of plugins (cookies, forms…): their message, under the code of their status.
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ApiError(CODE_OF_STATUS[status] ?? 'invalid_request', fastifyError.message);
  }
  return undefined;
}

/**
 * Sends the error body as JSON with its own serializer: a route's response schema for that status
 * (an HTML page, say) must not reshape it.
 */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.status(error.status).type('application/json; charset=utf-8').serializer(JSON.stringify)
    .send({ error: { code: error.code, message: error.message, request_id: reply.request.id } });
}

function render(error: ApiError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const renderer = request.routeOptions.config?.renderError;
  return renderer ? renderer(error, request, reply) : sendError(reply, error);
}

export function internalError(request: FastifyRequest, error: unknown): ApiError {
  request.log.error({ err: error }, 'unhandled error');
  return apiError('internal');
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request, reply) => render(toApiError(error) ?? internalError(request, error), request, reply));
  app.setNotFoundHandler((request, reply) => sendError(reply, notFound(`Route ${request.method} ${request.url.split('?')[0]}`)));
}

/** Fastify's `frameworkErrors` option: errors raised before a route is found (bad URLs). */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  void sendError(reply, toApiError(error) ?? internalError(request, error));
}

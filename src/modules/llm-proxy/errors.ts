// Errors of the LLM proxy's routes in each provider's own shape, so the official SDKs raise their
// usual exceptions (AuthenticationError, RateLimitError…): OpenAI `{"error": {message, type, param,
// code}}` with the catalogue code as `code`; Anthropic `{"type": "error", "error": {type, message}}`.
import type { ErrorRenderer } from '../../platform/http/errors.ts';

const OPENAI_TYPES: Record<number, string> = { 401: 'authentication_error', 402: 'insufficient_quota', 403: 'permission_error', 429: 'rate_limit_error' };
const ANTHROPIC_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error',
};

export const openaiError: ErrorRenderer = (error, _request, reply) => {
  if (error.headers) reply.headers(error.headers);
  const type = OPENAI_TYPES[error.status] ?? (error.status >= 500 ? 'server_error' : 'invalid_request_error');
  return reply.status(error.status).type('application/json; charset=utf-8').serializer(JSON.stringify)
    .send({ error: { message: error.message, type, param: null, code: error.code } });
};

export const anthropicError: ErrorRenderer = (error, _request, reply) => {
  if (error.headers) reply.headers(error.headers);
  const type = ANTHROPIC_TYPES[error.status] ?? (error.status >= 500 ? 'api_error' : 'invalid_request_error');
  return reply.status(error.status).type('application/json; charset=utf-8').serializer(JSON.stringify)
    .send({ type: 'error', error: { type, message: error.message } });
};

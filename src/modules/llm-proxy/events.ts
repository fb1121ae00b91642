// The event of a completed LLM proxy call: what LLM loggers filter (with JMESPath) and copy into
// feeds, and what webhooks may subscribe to. Its fields are documented in docs/llm-proxy.md.
import { Type, type TSchema } from 'typebox';
import { defineEvent } from '../../platform/events/catalogue.ts';

const Usage = Type.Object({
  input_tokens: Type.Integer({ description: 'Input tokens at the full input rate (cache reads and writes not included)' }),
  cached_input_tokens: Type.Integer({ description: 'Input tokens read from the provider\'s prompt cache' }),
  cache_write_tokens: Type.Integer({ description: 'Input tokens written to the prompt cache (Anthropic)' }),
  output_tokens: Type.Integer({ description: 'Output tokens, reasoning included' }),
  reasoning_tokens: Type.Integer({ description: 'Of the output tokens, those spent reasoning' }),
});

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const LlmCall = Type.Object({
  request_id: Type.String({ description: 'Atrium\'s id of the call (also the `atrium-request-id` response header)' }),
  provider: Type.String({ description: '`openai` or `anthropic`' }),
  endpoint: Type.String({ description: 'The provider path, e.g. `/v1/chat/completions`' }),
  model: Nullable(Type.String({ description: 'The model the provider answered with (a snapshot name such as `gpt-4o-2024-08-06`), else the one asked for' })),
  requested_model: Nullable(Type.String({ description: 'The model the caller asked for' })),
  stream: Type.Boolean(),
  status: Type.Integer({ description: 'HTTP status the caller got' }),
  outcome: Type.String({ description: '`completed`, `client_aborted`, `upstream_cut` or `upstream_error`' }),
  usage_source: Type.String({ description: '`provider`: the provider reported usage; `missing`: a metered call the provider took on reported none (billed at its reservation); `none`: nothing to bill' }),
  usage: Usage,
  request_bytes: Type.Integer({ description: 'Size of the request body' }),
  max_output_tokens: Nullable(Type.Integer({ description: 'The most output the caller allowed per answer (`max_tokens`, `max_completion_tokens` or `max_output_tokens`)' })),
  choices: Type.Integer({ description: 'Answers asked for (OpenAI chat\'s `n`; 1 otherwise)' }),
  latency_ms: Type.Integer(),
  ttfb_ms: Nullable(Type.Integer({ description: 'Until the first byte of the answer' })),
  credential: Type.Object({ kind: Type.String(), id: Type.String() }),
  user: Nullable(Type.String({ description: 'The user acting, if any' })),
  client: Nullable(Type.String({ description: 'The OAuth client, if any' })),
  participant: Nullable(Type.String({ description: 'The participant name of a participant token' })),
  upstream_request_id: Nullable(Type.String()),
  annotations: Type.Record(Type.String(), Type.String(), { description: 'From the request\'s `X-Meshagent-Annotation-<name>` headers' }),
  started_at: Type.String({ format: 'date-time' }),
});

export const llmCallCompleted = defineEvent('llm.call.completed', LlmCall, { description: 'A call through the LLM proxy finished (whatever its outcome)' });

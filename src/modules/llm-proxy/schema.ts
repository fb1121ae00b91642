import { Type } from 'typebox';

// What the proxy reads of a request body; everything else goes upstream untouched.
const Model = Type.String({ minLength: 1, maxLength: 256, description: 'The provider\'s model name' });
const Stream = Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { description: 'Stream the answer as server-sent events' }));
const open = { additionalProperties: true, maxProperties: 500 } as const;

export const OpenAIBody = Type.Object({
  model: Model,
  stream: Stream,
  stream_options: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true, maxProperties: 50 }), Type.Null()])),
}, { ...open, description: 'An OpenAI request body (sent on as it is)', examples: [{ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }] });

export const AnthropicBody = Type.Object({ model: Model, stream: Stream }, {
  ...open, description: 'An Anthropic request body (sent on as it is)', examples: [{ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] }],
});

export const ModelParams = Type.Object({
  '*': Type.String({ maxLength: 256, pattern: '^(?!\\.{1,2}$)[A-Za-z0-9._:@+-]{1,256}$', 'x-pattern-means': 'must be a model id: letters, digits and ". _ : @ + -"', description: 'A model id' }),
});

export const Passthrough = Type.Unsafe<unknown>({ description: 'The provider\'s answer, passed through byte for byte (JSON, or server-sent events when streamed)' });

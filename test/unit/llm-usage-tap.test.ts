// The LLM proxy's usage tap on its own: bytes pass through unchanged (or minus the usage-only chunk
// Atrium asked for), usage, model, terminal and error events are read whatever the JSON spacing,
// and content deltas, which are skipped unparsed, change nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UsageTap, type Provider } from '../../src/modules/llm-proxy/usage.ts';

async function tap(provider: Provider, endpoint: string, chunks: string[], stripUsageChunk = false) {
  const usageTap = new UsageTap({ provider, endpoint, streamed: true, stripUsageChunk });
  const out: Buffer[] = [];
  usageTap.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => usageTap.on('end', resolve));
  for (const chunk of chunks) usageTap.write(Buffer.from(chunk));
  usageTap.end();
  await ended;
  return { state: usageTap.state, text: Buffer.concat(out).toString('utf8') };
}

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const chatChunk = (content: string, extra: Record<string, unknown> = {}) => ({ id: 'c', object: 'chat.completion.chunk', model: 'gpt-x', choices: [{ index: 0, delta: { content } }], usage: null, ...extra });

test('an OpenAI chat stream: usage from the last chunk (any spacing), the model from the first, bytes unchanged', async () => {
  const usageChunk = 'data: {"id":"c","choices":[],"usage": {"prompt_tokens": 12, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 2}}}\n\n';
  const chunks = [sse(chatChunk('Hel')), sse(chatChunk('lo', { model: 'ignored-later' })), usageChunk, sse('[DONE]')];
  const { state, text } = await tap('openai', '/v1/chat/completions', chunks);
  assert.equal(text, chunks.join(''));
  assert.equal(state.model, 'gpt-x');
  assert.deepEqual(state.usage, { input_tokens: 10, cached_input_tokens: 2, cache_write_tokens: 0, output_tokens: 5, reasoning_tokens: 0 });
  assert.equal(state.terminal, true);
  assert.equal(state.errored, false);
});

test('an OpenAI chat stream whose usage Atrium asked for: the usage-only chunk is read and dropped', async () => {
  const usageChunk = sse({ id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } });
  const { state, text } = await tap('openai', '/v1/chat/completions', [sse(chatChunk('Hi')), usageChunk, sse('[DONE]')], true);
  assert.equal(text, sse(chatChunk('Hi')) + sse('[DONE]'));
  assert.equal(state.usage?.output_tokens, 4);
});

test('an OpenAI error inside a stream is seen after content deltas, with or without spaces', async () => {
  for (const error of ['{"error":{"message":"boom"}}', '{"error": {"message": "boom"}}', '{"type": "error", "code": "server_error"}']) {
    const { state } = await tap('openai', '/v1/chat/completions', [sse(chatChunk('a')), sse(chatChunk('b')), `data: ${error}\n\n`]);
    assert.equal(state.errored, true, error);
    assert.equal(state.terminal, false, error);
  }
});

test('an OpenAI responses stream: the model from response.created, usage from response.completed', async () => {
  const response = (status: string, usage: unknown) => ({ id: 'r', object: 'response', status, model: 'gpt-r', usage });
  const { state } = await tap('openai', '/v1/responses', [
    sse({ type: 'response.created', response: response('in_progress', null) }, 'response.created'),
    sse({ type: 'response.output_text.delta', delta: 'Hi' }, 'response.output_text.delta'),
    sse({ type: 'response.completed', response: response('completed', { input_tokens: 7, output_tokens: 2 }) }, 'response.completed'),
  ]);
  assert.equal(state.model, 'gpt-r');
  assert.equal(state.terminal, true);
  assert.equal(state.usage?.input_tokens, 7);
  assert.equal(state.usage?.output_tokens, 2);
});

test('an Anthropic stream: usage from message_start and the last message_delta; deltas and pings change nothing', async () => {
  const { state, text } = await tap('anthropic', '/v1/messages', [
    sse({ type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 9, cache_read_input_tokens: 1, output_tokens: 1 } } }, 'message_start'),
    sse({ type: 'ping' }, 'ping'),
    // A content delta that looks like an error or usage: still only content.
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '"usage": {"output_tokens": 999}, "type": "error"' } }, 'content_block_delta'),
    sse({ type: 'message_delta', usage: { output_tokens: 6 } }, 'message_delta'),
    sse({ type: 'message_stop' }, 'message_stop'),
  ]);
  assert.match(text, /text_delta/);
  assert.equal(state.model, 'claude-x');
  assert.deepEqual(state.usage, { input_tokens: 9, cached_input_tokens: 1, cache_write_tokens: 0, output_tokens: 6, reasoning_tokens: 0 });
  assert.equal(state.terminal, true);
  assert.equal(state.errored, false);
});

test('an Anthropic error event marks the stream errored', async () => {
  const { state } = await tap('anthropic', '/v1/messages', [
    sse({ type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 1 } } }, 'message_start'),
    sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error'),
  ]);
  assert.equal(state.errored, true);
  assert.equal(state.terminal, false);
});

test('a stripped OpenAI stream cut anywhere, in any line ending, UTF-8 split too: the same bytes out and the same usage', async () => {
  for (const eol of ['\n', '\r\n', '\r']) {
    const event = (data: unknown) => sse(data).replaceAll('\n', eol);
    const kept = [event(chatChunk('Grüße 😀')), event(chatChunk('[DONE] is only text here'))];
    const usageChunk = event({ id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } });
    const done = event('[DONE]');
    const bytes = Buffer.from(kept.join('') + usageChunk + done);
    const expected = kept.join('') + done;
    for (let at = 0; at <= bytes.length; at++) {
      for (const strip of [true, false]) {
        const usageTap = new UsageTap({ provider: 'openai', endpoint: '/v1/chat/completions', streamed: true, stripUsageChunk: strip });
        const out: Buffer[] = [];
        usageTap.on('data', (chunk: Buffer) => out.push(chunk));
        const ended = new Promise((resolve) => usageTap.on('end', resolve));
        usageTap.write(bytes.subarray(0, at));
        usageTap.end(bytes.subarray(at));
        await ended;
        const where = `${JSON.stringify(eol)} cut at ${at}, ${strip ? 'stripped' : 'as is'}`;
        assert.equal(Buffer.concat(out).toString('utf8'), strip ? expected : bytes.toString('utf8'), where);
        assert.equal(usageTap.state.usage?.output_tokens, 4, where);
        assert.equal(usageTap.state.model, 'gpt-x', where);
        assert.equal(usageTap.state.terminal, true, where);
      }
    }
  }
});

test('a stream whose usage member is split over two data lines is still read', async () => {
  const { state } = await tap('openai', '/v1/chat/completions', [
    sse(chatChunk('a')),
    'data: {"id":"c","choices":[],"usage":\ndata:  {"prompt_tokens": 5,\ndata: "completion_tokens": 1}}\n\n',
  ]);
  assert.equal(state.usage?.input_tokens, 5);
  assert.equal(state.usage?.output_tokens, 1);
});

test('the bytes left at the end with no blank line are passed on when stripping, unread', async () => {
  const { state, text } = await tap('openai', '/v1/chat/completions', [sse(chatChunk('a')), 'data: {"id":"c","choices":[],"usage":{"prompt_tokens":1}}'], true);
  assert.equal(text, `${sse(chatChunk('a'))}data: {"id":"c","choices":[],"usage":{"prompt_tokens":1}}`);
  assert.equal(state.usage, undefined);
});

test('an event over a MiB is passed on in pieces as it comes, and the usage after it is still read and stripped', async () => {
  const huge = sse(chatChunk('x'.repeat(1.5 * 1024 * 1024)));
  const usageChunk = sse({ id: 'c', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } });
  const bytes = Buffer.from(sse(chatChunk('a')) + huge + usageChunk + sse('[DONE]'));
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 64 * 1024) chunks.push(bytes.subarray(at, at + 64 * 1024));
  const usageTap = new UsageTap({ provider: 'openai', endpoint: '/v1/chat/completions', streamed: true, stripUsageChunk: true });
  const out: Buffer[] = [];
  usageTap.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => usageTap.on('end', resolve));
  for (const chunk of chunks.slice(0, 20)) usageTap.write(chunk);
  await new Promise((resolve) => setImmediate(resolve));
  const outBeforeEnd = Buffer.concat(out).length;
  for (const chunk of chunks.slice(20)) usageTap.write(chunk);
  usageTap.end();
  await ended;
  assert.ok(outBeforeEnd > 1024 * 1024, `the huge event flowed on before it ended (${outBeforeEnd} bytes out after 20 chunks)`);
  assert.equal(Buffer.concat(out).toString('utf8'), sse(chatChunk('a')) + huge + sse('[DONE]'));
  assert.equal(usageTap.state.usage?.output_tokens, 4);
});

test('usage is read from a streamed event over a MiB (a Responses terminal event echoing its instructions), in any pieces, and from a plain answer over 16 MiB', async () => {
  const response = { id: 'r', object: 'response', status: 'completed', instructions: 'i'.repeat(1.2 * 1024 * 1024), model: 'gpt-4o-2024-08-06', output: [], usage: { input_tokens: 12, output_tokens: 5, input_tokens_details: { cached_tokens: 2 } } };
  const events = [sse({ type: 'response.created', response: { ...response, instructions: null, usage: null } }, 'response.created'), sse({ type: 'response.completed', response }, 'response.completed')];
  for (const size of [1000, 64 * 1024, 3 * 1024 * 1024]) {
    const bytes = Buffer.from(events.join(''));
    const chunks = [];
    for (let at = 0; at < bytes.length; at += size) chunks.push(bytes.subarray(at, at + size).toString('latin1'));
    const usageTap = new UsageTap({ provider: 'openai', endpoint: '/v1/responses', streamed: true, stripUsageChunk: false });
    const ended = new Promise((resolve) => usageTap.on('end', resolve));
    usageTap.resume();
    for (const chunk of chunks) usageTap.write(Buffer.from(chunk, 'latin1'));
    usageTap.end();
    await ended;
    assert.deepEqual([usageTap.state.terminal, usageTap.state.model, usageTap.state.usage?.input_tokens, usageTap.state.usage?.output_tokens], [true, 'gpt-4o-2024-08-06', 10, 5], `pieces of ${size}`);
  }

  const plain = Buffer.from(JSON.stringify({ id: 'c', model: 'gpt-4o-mini-2024-07-18', choices: [{ message: { content: 'x'.repeat(17 * 1024 * 1024) } }], usage: { prompt_tokens: 3, completion_tokens: 4 } }));
  const usageTap = new UsageTap({ provider: 'openai', endpoint: '/v1/chat/completions', streamed: false, stripUsageChunk: false });
  const ended = new Promise((resolve) => usageTap.on('end', resolve));
  usageTap.resume();
  for (let at = 0; at < plain.length; at += 64 * 1024) usageTap.write(plain.subarray(at, at + 64 * 1024));
  usageTap.end();
  await ended;
  assert.deepEqual([usageTap.state.model, usageTap.state.usage?.output_tokens], ['gpt-4o-mini-2024-07-18', 4]);
});

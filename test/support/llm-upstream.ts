// A fake LLM provider on loopback that speaks both wire formats — OpenAI (chat completions,
// responses, embeddings, models) and Anthropic (messages, count_tokens, models) — plain and
// streamed, so the proxy can be tested with the official SDKs and no network. The model name picks
// the behaviour:
//
//   fake-*            a normal answer with usage (tool calls when the request offers tools)
//   fake-429          429 in the provider's error shape, with retry-after and rate-limit headers
//   fake-midstream    a stream that reports an error event after the first delta
//   fake-cut          a stream whose connection is cut before its terminal event
//   fake-slow         a stream whose deltas come 200 ms apart (for client aborts)
//   fake-large        a plain chat completion of about 1.5 MB, sent in 64 KB writes
//   fake-huge         a plain chat completion of 17 MiB (past the 16 MiB the proxy once read usage
//                     from), and a Responses stream whose `response.completed` event is 1.2 MiB
//                     (past the 1 MiB the proxy once held of an event)
//   fake-no-usage     a chat completion (plain or streamed) that reports no usage
//   fake-cut-plain    a plain chat completion whose connection is cut halfway through its body
//   fake-wait-<ms>    a normal answer that starts after <ms> milliseconds ± 20 % (uniform), as a
//                     model thinks: the benchmark's callers at a model's pace, not in lockstep;
//                     `openai-processing-ms` says how long it waited
//
// `answeredModels` maps a model asked for to the name answers give, as providers answer with a
// dated snapshot (`gpt-4o` → `gpt-4o-2024-08-06`). `/v1/responses/compact` answers a compaction with
// its usage. Every request is recorded (method, path, headers, parsed body).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeUpstream {
  url: string;
  requests: UpstreamRequest[];
  /** Requests whose streams were closed by the other side before they ended. */
  aborted: number;
  close(): Promise<void>;
}

/** Usage every fake answer reports, in each provider's own field names. */
export const FAKE_USAGE = { input: 11, cached: 3, output: 7, reasoning: 2, cacheWrite: 5 };

const sse = (res: ServerResponse, event: string | undefined, data: unknown) => res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Cuts the connection once what was written so far has left. */
function cut(res: ServerResponse) {
  res.write('', () => res.socket?.destroy());
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_fake_1', ...headers });
  res.end(JSON.stringify(body));
}

const openaiUsage = { prompt_tokens: FAKE_USAGE.input, completion_tokens: FAKE_USAGE.output, total_tokens: FAKE_USAGE.input + FAKE_USAGE.output, prompt_tokens_details: { cached_tokens: FAKE_USAGE.cached }, completion_tokens_details: { reasoning_tokens: FAKE_USAGE.reasoning } };
const responsesUsage = { input_tokens: FAKE_USAGE.input, input_tokens_details: { cached_tokens: FAKE_USAGE.cached }, output_tokens: FAKE_USAGE.output, output_tokens_details: { reasoning_tokens: FAKE_USAGE.reasoning }, total_tokens: FAKE_USAGE.input + FAKE_USAGE.output };
const anthropicStartUsage = { input_tokens: FAKE_USAGE.input, cache_read_input_tokens: FAKE_USAGE.cached, cache_creation_input_tokens: FAKE_USAGE.cacheWrite, output_tokens: 1 };

async function chat(req: UpstreamRequest, res: ServerResponse, model: string) {
  const withTools = Array.isArray(req.body.tools) && req.body.tools.length > 0;
  const id = 'chatcmpl-fake';
  if (!req.body.stream && (model === 'fake-large' || model === 'fake-huge' || model === 'fake-cut-plain')) {
    const content = model === 'fake-large' ? 'x'.repeat(1_500_000) : model === 'fake-huge' ? 'x'.repeat(17 * 1024 * 1024) : 'Hello from the fake.';
    const body = Buffer.from(JSON.stringify({ id, object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }], usage: openaiUsage }));
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_fake_1' });
    if (model === 'fake-cut-plain') {
      res.write(body.subarray(0, body.length >> 1));
      await sleep(20);
      return res.destroy();
    }
    for (let at = 0; at < body.length; at += 65_536) res.write(body.subarray(at, at + 65_536));
    return res.end();
  }
  if (!req.body.stream && model === 'fake-no-usage') {
    return json(res, 200, { id, object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the fake.' }, finish_reason: 'stop', logprobs: null }] });
  }
  if (!req.body.stream) {
    const message = withTools
      ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: req.body.tools[0].function.name, arguments: '{"city":"Paris"}' } }] }
      : { role: 'assistant', content: 'Hello from the fake.' };
    return json(res, 200, { id, object: 'chat.completion', created: 1, model, choices: [{ index: 0, message, finish_reason: withTools ? 'tool_calls' : 'stop', logprobs: null }], usage: openaiUsage });
  }
  const includeUsage = req.body.stream_options?.include_usage === true && model !== 'fake-no-usage';
  res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': 'req_fake_stream' });
  const chunk = (delta: unknown, finish: string | null = null) => ({ id, object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, finish_reason: finish }], ...(includeUsage ? { usage: null } : {}) });
  res.write(': keep-alive comment\n\n');
  sse(res, undefined, chunk({ role: 'assistant', content: '' }));
  if (withTools) {
    sse(res, undefined, chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: req.body.tools[0].function.name, arguments: '' } }] }));
    sse(res, undefined, chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    sse(res, undefined, chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    sse(res, undefined, chunk({}, 'tool_calls'));
  } else {
    for (const word of ['Hello', ' from', ' the', ' fake.']) {
      if (model === 'fake-slow') await sleep(200);
      // Split one event across two writes, as TCP may.
      const text = `data: ${JSON.stringify(chunk({ content: word }))}\n\n`;
      res.write(text.slice(0, 10));
      res.write(text.slice(10));
      if (model === 'fake-midstream') {
        sse(res, undefined, { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } });
        return res.end();
      }
      if (model === 'fake-cut') return cut(res);
    }
    sse(res, undefined, chunk({}, 'stop'));
  }
  if (includeUsage) sse(res, undefined, { id, object: 'chat.completion.chunk', created: 1, model, choices: [], usage: openaiUsage });
  sse(res, undefined, '[DONE]');
  res.end();
}

function responses(req: UpstreamRequest, res: ServerResponse, model: string) {
  // The API echoes the request's instructions in every response object: for fake-huge, 1.2 MiB of them.
  const instructions = model === 'fake-huge' ? 'i'.repeat(1.2 * 1024 * 1024) : req.body.instructions ?? null;
  const response = (status: string, usage: unknown) => ({ id: 'resp_fake', object: 'response', created_at: 1, status, instructions, model, output: status === 'completed' ? [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi.', annotations: [] }] }] : [], usage });
  if (!req.body.stream) return json(res, 200, response('completed', responsesUsage));
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let n = 0;
  const event = (type: string, data: Record<string, unknown>) => sse(res, type, { type, sequence_number: n++, ...data });
  event('response.created', { response: { ...response('in_progress', null), instructions: null } });
  event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi.', logprobs: [] });
  event('response.completed', { response: response('completed', responsesUsage) });
  res.end();
}

async function messages(req: UpstreamRequest, res: ServerResponse, model: string) {
  const withTools = Array.isArray(req.body.tools) && req.body.tools.length > 0;
  const finalUsage = { input_tokens: FAKE_USAGE.input, cache_read_input_tokens: FAKE_USAGE.cached, cache_creation_input_tokens: FAKE_USAGE.cacheWrite, output_tokens: FAKE_USAGE.output };
  if (!req.body.stream) {
    const content = withTools ? [{ type: 'tool_use', id: 'toolu_1', name: req.body.tools[0].name, input: { city: 'Paris' } }] : [{ type: 'text', text: 'Hello from the fake.' }];
    return json(res, 200, { id: 'msg_fake', type: 'message', role: 'assistant', model, content, stop_reason: withTools ? 'tool_use' : 'end_turn', stop_sequence: null, usage: finalUsage }, { 'request-id': 'req_ant_fake' });
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_ant_stream' });
  sse(res, 'message_start', { type: 'message_start', message: { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: anthropicStartUsage } });
  sse(res, 'ping', { type: 'ping' });
  if (withTools) {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: req.body.tools[0].name, input: {} } });
    sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city": "Paris"}' } });
  } else {
    sse(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (const word of ['Hello', ' from', ' the', ' fake.']) {
      if (model === 'fake-slow') await sleep(200);
      sse(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } });
      if (model === 'fake-midstream') {
        sse(res, 'error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
        return res.end();
      }
      if (model === 'fake-cut') return cut(res);
    }
  }
  sse(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  // Two deltas: their usage is cumulative, so the last one counts.
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 3 } });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: withTools ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: FAKE_USAGE.output } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

export async function startFakeUpstream(options: { answeredModels?: Record<string, string> } = {}): Promise<FakeUpstream> {
  const requests: UpstreamRequest[] = [];
  const state = { aborted: 0 };
  const server: Server = createServer((incoming, res) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (c: Buffer) => chunks.push(c));
    incoming.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const req: UpstreamRequest = { method: incoming.method!, path: incoming.url!, headers: incoming.headers, body: text ? JSON.parse(text) : {} };
      requests.push(req);
      res.on('close', () => {
        if (!res.writableFinished) state.aborted += 1;
      });
      const anthropic = 'x-api-key' in incoming.headers;
      const asked = String(req.body.model ?? '');
      const model = options.answeredModels?.[asked] ?? asked;
      if (model === 'fake-429') {
        const headers = { 'retry-after': '7', 'x-ratelimit-remaining-requests': '0', 'anthropic-ratelimit-requests-remaining': '0' };
        return anthropic
          ? json(res, 429, { type: 'error', error: { type: 'rate_limit_error', message: 'Slow down' } }, headers)
          : json(res, 429, { error: { message: 'Slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } }, headers);
      }
      const path = req.path.split('?')[0]!;
      const thinking = /^fake-wait-(\d+)$/.exec(model);
      void (async () => {
        if (thinking) {
          const started = performance.now();
          await sleep(Number(thinking[1]) * (0.8 + 0.4 * Math.random()));
          // How long the "model" took, as OpenAI reports its processing time: the benchmark takes it
          // off each call, which leaves what the hops (and the proxy) added, without the jitter.
          res.setHeader('openai-processing-ms', (performance.now() - started).toFixed(3));
        }
        if (path === '/v1/chat/completions') return chat(req, res, model);
        if (path === '/v1/responses') return responses(req, res, model);
        if (path === '/v1/responses/compact') {
          return json(res, 200, { id: 'cmp_fake', object: 'response.compaction', created_at: 1, output: [{ type: 'compaction', id: 'cmp_item_1', encrypted_content: 'opaque' }], usage: responsesUsage });
        }
        if (path === '/v1/responses/input_tokens') return json(res, 200, { object: 'response.input_tokens', input_tokens: FAKE_USAGE.input });
        if (path === '/v1/embeddings') return json(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model, usage: { prompt_tokens: FAKE_USAGE.input, total_tokens: FAKE_USAGE.input } });
        if (path === '/v1/messages') return messages(req, res, model);
        if (path === '/v1/messages/count_tokens') return json(res, 200, { input_tokens: FAKE_USAGE.input });
        if (path === '/v1/models') {
          return anthropic
            ? json(res, 200, { data: [{ type: 'model', id: 'claude-fake', display_name: 'Claude Fake', created_at: '2026-01-01T00:00:00Z' }], has_more: false, first_id: 'claude-fake', last_id: 'claude-fake' })
            : json(res, 200, { object: 'list', data: [{ id: 'gpt-fake', object: 'model', created: 1, owned_by: 'fake' }] });
        }
        if (path.startsWith('/v1/models/')) {
          const id = decodeURIComponent(path.slice('/v1/models/'.length));
          return anthropic
            ? json(res, 200, { type: 'model', id, display_name: id, created_at: '2026-01-01T00:00:00Z' })
            : json(res, 200, { id, object: 'model', created: 1, owned_by: 'fake' });
        }
        return json(res, 404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get aborted() { return state.aborted; },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

// Members read out of JSON that arrives in pieces and may be of any size (src/modules/llm-proxy/
// json-scan.ts), and out of a server-sent event too long to hold (SseEventScanner in sse.ts): the
// same values JSON.parse finds, wherever the pieces are cut, whatever the strings hold (escaped
// quotes, braces, commas, the member names themselves), and nothing from deeper or other members.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonScanner } from '../../src/modules/llm-proxy/json-scan.ts';
import { SseEventScanner } from '../../src/modules/llm-proxy/sse.ts';

const PATHS = [['type'], ['usage'], ['model'], ['response', 'usage'], ['response', 'model']];

function scan(text: string, cuts: number[]): Record<string, unknown> {
  const bytes = Buffer.from(text);
  const scanner = new JsonScanner(PATHS);
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    scanner.push(bytes.subarray(at, cut));
    at = cut;
  }
  return scanner.result();
}

const tricky = {
  type: 'response.completed',
  sequence_number: 9,
  response: {
    id: 'resp_1',
    instructions: 'say "usage": {"input_tokens": 999}, then \\ and \\" and } , ] {',
    output: [{ type: 'message', content: [{ text: 'é😀 "model": "wrong", usage', usage: { input_tokens: 1 } }] }],
    tools: [{ usage: { output_tokens: 5 }, model: 'inner' }],
    model: 'gpt-4o-2024-08-06',
    usage: { input_tokens: 12, input_tokens_details: { cached_tokens: 2 }, output_tokens: 7 },
  },
};

test('the members asked for, wherever the text is cut (every byte, and in two), from strings that mimic them', () => {
  const text = JSON.stringify(tricky, null, 1);
  const expected = { type: tricky.type, response: { model: tricky.response.model, usage: tricky.response.usage } };
  assert.deepEqual(scan(text, []), expected);
  for (let at = 0; at <= Buffer.byteLength(text); at += 7) assert.deepEqual(scan(text, [at]), expected, `cut at ${at}`);
  assert.deepEqual(scan(text, [...Array(Buffer.byteLength(text)).keys()]), expected, 'a byte at a time');
});

test('a top-level usage and model after megabytes of choices, as a plain answer has them', () => {
  const body = { id: 'c', object: 'chat.completion', model: 'gpt-4o-mini-2024-07-18', choices: Array.from({ length: 2000 }, (_v, i) => ({ index: i, message: { content: 'x'.repeat(2000) } })), usage: { prompt_tokens: 3, completion_tokens: 4 } };
  const text = JSON.stringify(body);
  assert.ok(text.length > 4_000_000);
  const cuts = Array.from({ length: Math.floor(text.length / 65_536) }, (_v, i) => (i + 1) * 65_536);
  assert.deepEqual(scan(text, cuts), { model: body.model, usage: body.usage });
});

test('not JSON, or cut short: what was found before, never an exception', () => {
  assert.deepEqual(scan('<html>Bad gateway</html>', []), {});
  assert.deepEqual(scan('{"model": "m", "usage": {"input_tokens": 1', []), { model: 'm' });
  assert.deepEqual(scan('{"usage": [1, 2], "model": 5}', []), { usage: [1, 2], model: 5 }, 'values of any JSON type, as they are');
});

test('an event too long to hold: its name, and its data lines joined, read in pieces', () => {
  const data = JSON.stringify(tricky);
  const event = `event: response.completed\r\nid: 4\r\n: a comment\r\ndata: ${data.slice(0, 100)}\r\ndata:${data.slice(100)}\r\n\r\n`;
  const bytes = Buffer.from(event);
  for (const step of [1, 3, 64, bytes.length]) {
    const scanner = new SseEventScanner();
    for (let at = 0; at < bytes.length; at += step) scanner.push(bytes.subarray(at, at + step));
    const { name, data: found } = scanner.result();
    assert.equal(name, 'response.completed');
    assert.deepEqual(found, { type: tricky.type, response: { model: tricky.response.model, usage: tricky.response.usage } }, `pieces of ${step}`);
  }
});

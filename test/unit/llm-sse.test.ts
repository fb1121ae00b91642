// Server-sent events found in bytes (src/modules/llm-proxy/sse.ts): every line ending the SSE
// grammar allows, events cut anywhere between chunks, and nothing lost or added.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseSplitter, sseEventName, sseFields } from '../../src/modules/llm-proxy/sse.ts';

/** The events and the unended rest of `text` fed in the given chunks. */
function split(chunks: Buffer[]): { events: string[]; rest: string } {
  const splitter = new SseSplitter();
  const events = chunks.flatMap((chunk) => splitter.push(chunk)).map((event) => event.toString('utf8'));
  const last = splitter.end();
  if (last) events.push(last.toString('utf8'));
  return { events, rest: splitter.rest().toString('utf8') };
}

/** Every way to cut `bytes` in two, and one byte at a time. */
function cuts(bytes: Buffer): Buffer[][] {
  const all: Buffer[][] = [[bytes]];
  for (let at = 0; at <= bytes.length; at++) all.push([bytes.subarray(0, at), bytes.subarray(at)]);
  all.push([...bytes].map((byte) => Buffer.from([byte])));
  return all;
}

const CASES: { name: string; text: string; events: string[]; rest: string }[] = [
  { name: 'LF', text: 'data: a\n\nevent: e\ndata: b\n\ndata: c', events: ['data: a\n\n', 'event: e\ndata: b\n\n'], rest: 'data: c' },
  { name: 'CRLF', text: 'data: a\r\n\r\nevent: e\r\ndata: b\r\n\r\n', events: ['data: a\r\n\r\n', 'event: e\r\ndata: b\r\n\r\n'], rest: '' },
  { name: 'CR', text: 'data: a\r\rdata: b\r\r', events: ['data: a\r\r', 'data: b\r\r'], rest: '' },
  { name: 'mixed', text: 'data: a\n\r\ndata: b\r\ndata: c\r\n\ndata: d\r\n\r', events: ['data: a\n\r\n', 'data: b\r\ndata: c\r\n\n', 'data: d\r\n\r'], rest: '' },
  { name: 'a comment and a blank line first', text: '\n: keep-alive\n\ndata: é😀\n\n', events: ['\n', ': keep-alive\n\n', 'data: é😀\n\n'], rest: '' },
  { name: 'no blank line at all', text: 'data: a\ndata: b\r\n', events: [], rest: 'data: a\ndata: b\r\n' },
];

for (const { name, text, events, rest } of CASES) {
  test(`events in bytes, ${name}: the same wherever the chunks are cut`, () => {
    for (const chunks of cuts(Buffer.from(text))) {
      const where = chunks.map((chunk) => chunk.length).join('+');
      assert.deepEqual(split(chunks), { events, rest }, where);
    }
  });
}

test('an event within one chunk is a view of that chunk, not a copy', () => {
  const chunk = Buffer.from('data: a\n\ndata: b\n\n');
  const [first, second] = new SseSplitter().push(chunk);
  assert.equal(first!.buffer, chunk.buffer);
  assert.equal(second!.byteOffset, chunk.byteOffset + 9);
});

test('fields: the event name and the data lines joined, whatever the line endings; UTF-8 decoded', () => {
  assert.deepEqual(sseFields(Buffer.from('event: message_start\r\ndata: {"a":\rdata:1}\n: note\nid: 7\n\n')), { event: 'message_start', data: '{"a":\n1}' });
  assert.deepEqual(sseFields(Buffer.from('data: é😀\n\n')), { event: undefined, data: 'é😀' });
});

test('the event name alone: only an `event:` line counts, not the word inside data', () => {
  assert.equal(sseEventName(Buffer.from('event: ping\ndata: {}\n\n')), 'ping');
  assert.equal(sseEventName(Buffer.from('data: {}\r\nevent:  message_stop \r\n\r\n')), 'message_stop');
  assert.equal(sseEventName(Buffer.from('data: {"text":"event: error"}\n\n')), undefined);
});

test('an event longer than the limit comes in pieces as its bytes arrive; the events after it are whole', () => {
  const long = `data: ${'x'.repeat(100)}\n\n`;
  const text = Buffer.from(`${long}data: b\n\n`);
  for (const size of [1, 7, 10, 64, text.length]) {
    const splitter = new SseSplitter(16);
    const events: Buffer[] = [];
    for (let at = 0; at < text.length; at += size) events.push(...splitter.push(text.subarray(at, at + size)));
    assert.equal(Buffer.concat(events).toString(), text.toString(), `chunks of ${size}`);
    assert.equal(events.at(-1)!.toString(), 'data: b\n\n', `chunks of ${size}`);
    // Nothing held past the limit: each piece is at most the limit and the chunk that passed it
    // (an event that lies whole in one chunk is that chunk's view, held by no one).
    const most = size >= long.length ? long.length : 16 + size;
    for (const event of events) assert.ok(event.length <= most, `chunks of ${size}: ${event.length} bytes`);
    assert.equal(splitter.rest().length, 0);
  }
});

test('a piece cut at the limit that ends on a blank line\'s CR is not followed by an empty event', () => {
  const splitter = new SseSplitter(4);
  assert.deepEqual(splitter.push(Buffer.from('data: abc\r\r')).map(String), ['data: abc\r\r']);
  assert.deepEqual(splitter.push(Buffer.from('data: b\n\n')).map(String), ['data: b\n\n']);
});

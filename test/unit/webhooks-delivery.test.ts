// Pure parts of webhook delivery: the body encoding (Python json.dumps compatible), the SSRF address
// rules, Retry-After parsing and the jittered retry time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isBlockedAddress, retryAfterMs, urlProblem } from '../../src/platform/http/outbound.ts';
import { pythonJson } from '../../src/modules/webhooks/body.ts';
import { nextAttemptAt } from '../../src/modules/webhooks/delivery.ts';

test('bodies are byte-identical to Python json.dumps (vectors produced by CPython 3)', () => {
  const vectors: [unknown, string][] = [
    [{ event: 'room.started', data: { room_name: 'café ☃', n: 1 } }, '{"event": "room.started", "data": {"room_name": "caf\\u00e9 \\u2603", "n": 1}}'],
    [{ s: 'quote" back\\ nl\n tab\t cr\r bs\b ff\f nul\u0000 del\u007f emoji 😀' }, '{"s": "quote\\" back\\\\ nl\\n tab\\t cr\\r bs\\b ff\\f nul\\u0000 del\\u007f emoji \\ud83d\\ude00"}'],
    [{ nested: [1, [2, { a: [] }], {}], t: true, f: false, z: null }, '{"nested": [1, [2, {"a": []}], {}], "t": true, "f": false, "z": null}'],
    [{ floats: [1.5, 0.1, 1e-5, 1.5e-7, 0.0001, 123456.789, -2.5e-10, 1e21, 3.14159] }, '{"floats": [1.5, 0.1, 1e-05, 1.5e-07, 0.0001, 123456.789, -2.5e-10, 1e+21, 3.14159]}'],
    [{ ints: [0, -1, 9007199254740991, 10000000000000000] }, '{"ints": [0, -1, 9007199254740991, 10000000000000000]}'],
  ];
  for (const [value, python] of vectors) {
    assert.equal(pythonJson(value), python);
    // And it is still JSON that means the same thing.
    assert.deepEqual(JSON.parse(pythonJson(value)), value);
  }
  assert.equal(pythonJson({ a: undefined, b: 1 }), '{"b": 1}');
});

test('private, loopback, link-local and reserved addresses are blocked, public ones are not', () => {
  const blocked = [
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '2002:7f00:1::1', '2002:c0a8:101::', '2001:0:4136:e378::1',
    'not an ip',
  ];
  const open = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'];
  for (const a of blocked) assert.equal(isBlockedAddress(a), true, a);
  for (const a of open) assert.equal(isBlockedAddress(a), false, a);
});

test('URL checks without DNS: scheme, and literal addresses in every spelling', () => {
  const strict = { allowPrivate: false };
  assert.match(urlProblem(new URL('ftp://example.com/'), strict)!, /http or https/);
  for (const u of ['http://127.0.0.1:8080/x', 'http://[::1]/', 'http://0x7f000001/', 'http://2130706433/', 'http://127.1/', 'https://[::ffff:169.254.169.254]/', 'http://0/']) {
    assert.match(urlProblem(new URL(u), strict) ?? '', /private, loopback or reserved/, u);
  }
  assert.equal(urlProblem(new URL('https://hooks.example.com/a'), strict), undefined);
  assert.equal(urlProblem(new URL('http://127.0.0.1:8080/'), { allowPrivate: true }), undefined);
});

test('Retry-After: seconds or an HTTP date', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  assert.equal(retryAfterMs('120', now), 120_000);
  assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000);
  assert.equal(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now), 0);
  assert.equal(retryAfterMs('soon', now), undefined);
  assert.equal(retryAfterMs(undefined, now), undefined);
});

test('retry times: schedule ±20 % jitter, never before Retry-After, Retry-After capped at a day', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const at = (scheduled: number, retryAfter: number | undefined, r: number) => nextAttemptAt(now, scheduled, retryAfter, () => r).getTime() - now.getTime();
  assert.equal(at(5000, undefined, 0), 4000);
  assert.equal(at(5000, undefined, 0.5), 5000);
  assert.equal(at(5000, undefined, 0.999999), 6000);
  assert.equal(at(5000, 60_000, 0.5), 60_000);
  assert.equal(at(300_000, 60_000, 0.5), 300_000);
  assert.equal(at(5000, 10 * 86400_000, 0.5), 86400_000);
});

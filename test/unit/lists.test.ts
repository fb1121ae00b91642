// List mechanics: pages with their totals, and continuation tokens that cannot be read, forged or
// replayed against another list.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ApiError } from '../../src/platform/http/errors.ts';
import { SecretBox } from '../../src/platform/crypto/secrets.ts';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { CountOffsetQuery, LimitOffsetQuery, ListOf, PageTokenQuery, TokenPageOf, likeContains, openContinuation, pageOf, pageResult, sealContinuation } from '../../src/platform/http/lists.ts';

test('pageOf reads either paging style', () => {
  assert.deepEqual(pageOf({ limit: 10, offset: 5 }), { limit: 10, offset: 5, filter: undefined });
  assert.deepEqual(pageOf({ count: 7, filter: 'abc' }), { limit: 7, offset: 0, filter: 'abc' });
  assert.equal(pageOf({ filter: '' }).filter, undefined);
});

test('pageResult strips the window total and recounts only past the end', async () => {
  let recounts = 0;
  const countAll = async () => { recounts += 1; return 3; };
  assert.deepEqual(await pageResult([{ id: 'a', total: 3 }, { id: 'b', total: 3 }], { limit: 2, offset: 0 }, countAll), { items: [{ id: 'a' }, { id: 'b' }], total: 3 });
  assert.deepEqual(await pageResult([], { limit: 2, offset: 0 }, countAll), { items: [], total: 0 });
  assert.equal(recounts, 0);
  assert.deepEqual(await pageResult([], { limit: 2, offset: 10 }, countAll), { items: [], total: 3 });
  assert.equal(recounts, 1);
});

test('likeContains matches wildcards literally', () => {
  assert.equal(likeContains('50%_off\\'), '%50\\%\\_off\\\\%');
});

test('continuation tokens are opaque, tamper-proof and bound to their list', () => {
  const box = new SecretBox(randomBytes(32));
  const token = sealContinuation(box, 'policies:p1:rooms/r1', { after: 'user:42' });
  assert.ok(!token.includes('user:42'), 'the position is not readable');
  assert.deepEqual(openContinuation(box, 'policies:p1:rooms/r1', token), { after: 'user:42' });
  // One character changed (the last but one: every bit of it is the token's).
  const flipped = `${token.slice(0, -2)}${token.at(-2) === 'A' ? 'B' : 'A'}${token.slice(-1)}`;
  const refused = (fn: () => unknown) => assert.throws(fn, (e) => e instanceof ApiError && e.status === 400);
  refused(() => openContinuation(box, 'policies:p1:rooms/r1', flipped));
  refused(() => openContinuation(box, 'policies:p2:rooms/r1', token));
  refused(() => openContinuation(new SecretBox(randomBytes(32)), 'policies:p1:rooms/r1', token));
  refused(() => openContinuation(box, 'policies:p1:rooms/r1', 'garbage'));
});

test('the envelopes and query schemas validate what the paging styles send', () => {
  const Item = Type.Object({ id: Type.String() });
  assert.ok(Value.Check(ListOf('rooms', Item), { rooms: [{ id: 'a' }], total: 1 }));
  assert.ok(!Value.Check(ListOf('rooms', Item), { rooms: [{ id: 'a' }] }), 'total is required');
  assert.ok(Value.Check(TokenPageOf('bindings', Item), { bindings: [], continuation_token: null }));
  const tokenQuery = Type.Object(PageTokenQuery);
  assert.ok(Value.Check(tokenQuery, { page_size: 10, continuation_token: 'x' }));
  assert.ok(!Value.Check(tokenQuery, { page_size: 0 }));
  assert.ok(Value.Check(Type.Object(CountOffsetQuery), { count: 5, offset: 0, filter: 'a' }));
  assert.ok(!Value.Check(Type.Object(LimitOffsetQuery), { limit: 5000 }));
});

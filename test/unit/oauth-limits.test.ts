// The sign-in and request limits on their own, over counters kept in memory (the database counters
// and several instances are in test/integration/cluster-limits.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AttemptLimiter, judge, RequestLimiter } from '../../src/modules/oauth/limits.ts';
import { memoryCounters } from '../support/memory-counters.ts';

test('judge: after counting, the limit itself is allowed and one more is not; before counting, reaching it is enough', () => {
  const now = 1_000_000;
  assert.deepEqual(judge([{ count: 3, resetAt: now + 5000 }], [3], now, true), { allowed: true, retryAfter: 0 });
  assert.deepEqual(judge([{ count: 4, resetAt: now + 5000 }], [3], now, true), { allowed: false, retryAfter: 5 });
  assert.deepEqual(judge([{ count: 2, resetAt: now + 5000 }], [3], now, false), { allowed: true, retryAfter: 0 });
  assert.deepEqual(judge([{ count: 3, resetAt: now + 5000 }], [3], now, false), { allowed: false, retryAfter: 5 });
});

test('judge: the wait is until the last exhausted window ends, rounded up, at least a second; windows within their limit do not count', () => {
  const now = 1_000_000;
  const windows = [{ count: 9, resetAt: now + 2_100 }, { count: 1, resetAt: now + 60_000 }, { count: 9, resetAt: now + 7_300 }];
  assert.deepEqual(judge(windows, [5, 5, 5], now, true), { allowed: false, retryAfter: 8 });
  assert.deepEqual(judge([{ count: 9, resetAt: now + 10 }], [5], now, true), { allowed: false, retryAfter: 1 });
  assert.deepEqual(judge([{ count: 9, resetAt: now - 10 }], [5], now, true), { allowed: false, retryAfter: 1 });
  assert.deepEqual(judge([{ count: 1, resetAt: now + 60_000 }, { count: 6, resetAt: now + 1_000 }], [5, 5], now, true), { allowed: false, retryAfter: 1 });
});

test('attempt limits: per account (trimmed, any case) and per address; checking costs nothing, failures and mail do', async () => {
  let now = 1_000_000;
  const { counters, asked } = memoryCounters(() => now);
  const limiter = new AttemptLimiter(counters, { perAccount: 2, perIp: 3, windowMs: 60_000 }, () => now);

  assert.deepEqual(await limiter.check(' Ann@Example.test ', '10.0.0.1'), { allowed: true, retryAfter: 0 });
  assert.deepEqual(asked.at(-1), ['signin:a:ann@example.test', 'signin:i:10.0.0.1']);
  for (let i = 0; i < 5; i += 1) assert.equal((await limiter.check('ann@example.test', '10.0.0.1')).allowed, true, 'checks are free');

  await limiter.fail('ANN@example.test', '10.0.0.1');
  assert.equal((await limiter.check('ann@example.test', '10.0.0.2')).allowed, true);
  await limiter.fail('ann@example.test', '10.0.0.2');
  const locked = await limiter.check('ann@example.test', '10.0.0.3');
  assert.deepEqual(locked, { allowed: false, retryAfter: 60 }, 'the account is locked from any address');
  assert.equal((await limiter.check('bob@example.test', '10.0.0.1')).allowed, true, 'another account from the first address');

  // Mail-sending requests count as they go: the address allows 3.
  assert.equal((await limiter.attempt('c1@example.test', '10.0.0.9')).allowed, true);
  assert.equal((await limiter.attempt('c2@example.test', '10.0.0.9')).allowed, true);
  assert.equal((await limiter.attempt('c3@example.test', '10.0.0.9')).allowed, true);
  assert.deepEqual(await limiter.attempt('c4@example.test', '10.0.0.9'), { allowed: false, retryAfter: 60 });
  assert.equal((await limiter.check('c5@example.test', '10.0.0.9')).allowed, false, 'the address is spent for guesses too');

  now += 60_000;
  assert.equal((await limiter.check('ann@example.test', '10.0.0.3')).allowed, true, 'a locked window simply ends');
  assert.equal((await limiter.attempt('c4@example.test', '10.0.0.9')).allowed, true);
});

test('request limits: one window per client address', async () => {
  let now = 5_000_000;
  const { counters, asked } = memoryCounters(() => now);
  const limiter = new RequestLimiter(counters, 'token', 2, 30_000, () => now);
  assert.equal((await limiter.hit('10.1.1.1')).allowed, true);
  assert.deepEqual(asked.at(-1), ['token:i:10.1.1.1']);
  assert.equal((await limiter.hit('10.1.1.1')).allowed, true);
  now += 10_000;
  assert.deepEqual(await limiter.hit('10.1.1.1'), { allowed: false, retryAfter: 20 });
  assert.equal((await limiter.hit('10.1.1.2')).allowed, true, 'another address has its own budget');
  now += 20_000;
  assert.equal((await limiter.hit('10.1.1.1')).allowed, true);
});

test('a request that names no account (a passkey challenge) spends the address\'s budget alone', async () => {
  let now = 1_000_000;
  const { counters, asked } = memoryCounters(() => now);
  const limiter = new AttemptLimiter(counters, { perAccount: 1, perIp: 2, windowMs: 60_000 }, () => now);
  assert.deepEqual(await limiter.attemptFromIp('10.0.0.1'), { allowed: true, retryAfter: 0 });
  assert.deepEqual(asked.at(-1), ['signin:i:10.0.0.1']);
  assert.equal((await limiter.attemptFromIp('10.0.0.1')).allowed, true, 'the limit itself is allowed');
  now += 1_500;
  assert.deepEqual(await limiter.attemptFromIp('10.0.0.1'), { allowed: false, retryAfter: 59 });
  assert.equal((await limiter.check('ann@example.test', '10.0.0.1')).allowed, false, 'the same budget as the forms\'');
  assert.equal((await limiter.attemptFromIp('10.0.0.2')).allowed, true, 'another address');
  now += 60_000;
  assert.equal((await limiter.attemptFromIp('10.0.0.1')).allowed, true, 'a new window');
});

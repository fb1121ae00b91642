// Rate limits counted in the database: instances on one PostgreSQL share one budget (two instances
// here; PGlite runs the same checks on its one instance), for the token endpoint, the device-code
// page (both spent from leases) and sign-in attempts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RateCounters } from '../../src/platform/limits/counters.ts';
import { AttemptLimiter, RequestLimiter } from '../../src/modules/oauth/limits.ts';
import { isolatedDatabase, forEachEngine, startTestService, type TestService } from '../support/service.ts';

forEachEngine('cluster-wide rate limits', (engine) => {
  let instances: TestService[] = [];
  let drop: () => Promise<void> = async () => {};
  before(async () => {
    const database = await isolatedDatabase(engine);
    drop = database.drop;
    const env = { ...database.env, ATRIUM_TOKEN_LIMIT_PER_IP: '5', ATRIUM_DEVICE_LIMIT_PER_IP: '4' };
    instances.push(await startTestService(engine, env));
    if (engine === 'postgres') instances.push(await startTestService(engine, env));
  });
  after(async () => {
    for (const instance of instances) await instance.stop();
    instances = [];
    await drop();
  });
  const nth = (i: number) => instances[i % instances.length]!;

  test('the token endpoint: one budget per client address over all instances, then 429 with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await fetch(`${nth(i).url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=nobody&client_secret=x' });
      statuses.push(res.status);
      if (res.status === 429) {
        assert.ok(Number(res.headers.get('retry-after')) >= 1);
        assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'rate_limited');
      } else {
        await res.arrayBuffer();
      }
    }
    assert.deepEqual(statuses.map((s) => s === 429), [false, false, false, false, false, true, true], String(statuses));
    // Other endpoints of the provider are not counted.
    assert.equal((await fetch(`${nth(0).url}/.well-known/openid-configuration`)).status, 200);
  });

  test('the device-code page has its own budget', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${nth(i).url}/oauth/device`);
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    assert.deepEqual(statuses.map((s) => s === 429), [false, false, false, false, true, true], String(statuses));
  });

  test('request budgets spent from leases: all instances together, concurrently, never pass the limit', async () => {
    const limit = 96; // blocks of up to 6 hits
    const limiters = instances.map((s) => new RequestLimiter(new RateCounters(s.ctx.db), 'test', limit, 60_000));
    const ip = `203.0.113.${Date.now() % 250}`;
    const verdicts = await Promise.all(Array.from({ length: 300 }, (_, i) => limiters[i % limiters.length]!.hit(ip)));
    const allowed = verdicts.filter((v) => v.allowed).length;
    assert.ok(allowed <= limit, `${allowed} allowed`);
    assert.ok(allowed >= limit - limiters.length * 6, `${allowed} allowed: at most a block per instance is lost`);
    assert.ok(verdicts.filter((v) => !v.allowed).every((v) => v.retryAfter >= 1 && v.retryAfter <= 60));
    const counted = (await new RateCounters(nth(0).ctx.db).peek([`test:i:${ip}`]))[0]!.count;
    assert.ok(counted >= allowed, `the database counted ${counted}, every allowed hit reserved first`);
  });

  test('sign-in attempts: failures on one instance count on the other', async () => {
    const limits = { perAccount: 3, perIp: 100, windowMs: 60_000 };
    const limiters = instances.map((s) => new AttemptLimiter(new RateCounters(s.ctx.db), limits));
    const on = (i: number) => limiters[i % limiters.length]!;
    const email = `Someone-${Date.now()}@Example.test`;
    for (let i = 0; i < 3; i++) {
      assert.equal((await on(i).check(email, '198.51.100.1')).allowed, true);
      await on(i).fail(email, '198.51.100.1');
    }
    for (const limiter of limiters) {
      const verdict = await limiter.check(email.toLowerCase(), '198.51.100.2');
      assert.equal(verdict.allowed, false);
      assert.ok(verdict.retryAfter > 0 && verdict.retryAfter <= 60);
    }
    // Mail requests spend the same budget, atomically.
    assert.equal((await on(1).attempt(email, '198.51.100.3')).allowed, false);
  });

  test('concurrent hits on all instances lose no count', async () => {
    const counters = instances.map((s) => new RateCounters(s.ctx.db));
    const key = `test:concurrent:${Date.now()}`;
    await Promise.all(Array.from({ length: 40 }, (_, i) => counters[i % counters.length]!.hit([key], 60_000)));
    assert.equal((await counters[0]!.peek([key]))[0]!.count, 40);
  });

  test('hits on one key that wait together are counted together, each in its own place', async () => {
    const counters = new RateCounters(nth(0).ctx.db);
    const key = `test:together:${Date.now()}`;
    const windows = await Promise.all(Array.from({ length: 50 }, () => counters.hit([key, `${key}:b`, key], 60_000)));
    assert.deepEqual(windows.map(([w]) => w!.count).sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1), 'places 1 to 50, none twice');
    assert.ok(windows.every(([a, b, c]) => a!.count === b!.count && a!.count === c!.count), 'a hit has the same place in each of its windows');
    assert.equal((await counters.peek([key]))[0]!.count, 50);
  });

  test('a window ends (injected clock), the count starts again, and ended windows are pruned', async () => {
    let now = Date.parse('2030-01-01T00:00:00Z');
    const counters = new RateCounters(nth(0).ctx.db, () => now);
    const key = `test:window:${Date.now()}`;
    assert.equal((await counters.hit([key], 60_000))[0]!.count, 1);
    assert.equal((await counters.hit([key], 60_000))[0]!.count, 2);
    now += 59_000;
    assert.equal((await counters.peek([key]))[0]!.count, 2);
    now += 1_000;
    assert.equal((await counters.peek([key]))[0]!.count, 0);
    const fresh = (await counters.hit([key], 60_000))[0]!;
    assert.deepEqual(fresh, { count: 1, resetAt: now + 60_000 });
    assert.ok((await counters.prune(new Date(now + 61_000), 1000)) >= 1);
    assert.equal((await counters.peek([key]))[0]!.count, 0);
  });
});

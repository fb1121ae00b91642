// Schedules declared in code are checked when declared (boot fails, naming the schedule), and the
// catch-up rule for the next due time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeclaredSchedules, nextDueAfter, parseCron, type Schedule } from '../../src/platform/jobs/scheduler.ts';

const schedule = (name: string, cron: string): Schedule => ({ name, cron, run: async () => {} });

test('invalid schedules are refused when declared, naming the schedule', () => {
  for (const [bad, message] of [
    [[schedule('prune', '61 * * * *')], /schedule "prune": .*minute/],
    [[schedule('prune', '0 * * * * *')], /schedule "prune": .*5 parts/],
    [[schedule('prune', 'every minute')], /schedule "prune"/],
    [[schedule('prune', '0 0 30 2 *')], /schedule "prune": cron "0 0 30 2 \*" never matches/],
    [[schedule('prune', '* * * * *'), schedule('prune', '0 * * * *')], /"prune" is declared twice/],
    [[schedule('Prune', '* * * * *')], /schedule name "Prune"/],
    [[schedule('a@b', '* * * * *')], /schedule name "a@b"/],
    [[schedule('', '* * * * *')], /schedule name ""/],
  ] as const) {
    assert.throws(() => new DeclaredSchedules(bad), message);
  }
  const ok = new DeclaredSchedules([schedule('oauth.purge', '*/5 * * * *'), schedule('retention_prune-1', '0 3 * * 1')]);
  assert.deepEqual(ok.handlers().map((h) => h.topic), ['schedule:oauth.purge', 'schedule:retention_prune-1']);
});

test('the next due time is the first match after both the fired due time and now', () => {
  const everyFive = parseCron('*/5 * * * *');
  const d = (iso: string) => new Date(iso);
  // On time: the following match.
  assert.deepEqual(nextDueAfter(everyFive, d('2031-01-01T00:05:00Z'), d('2031-01-01T00:05:00.300Z')), d('2031-01-01T00:10:00Z'));
  // Late, even exactly on a later match: every missed match collapses into the run that fired.
  assert.deepEqual(nextDueAfter(everyFive, d('2031-01-01T00:05:00Z'), d('2031-01-01T03:10:00Z')), d('2031-01-01T03:15:00Z'));
  // A clock behind the due time (another instance's): never earlier than the following match.
  assert.deepEqual(nextDueAfter(everyFive, d('2031-01-01T00:05:00Z'), d('2031-01-01T00:04:59Z')), d('2031-01-01T00:10:00Z'));
  // UTC, whatever the process's time zone.
  assert.deepEqual(nextDueAfter(parseCron('0 3 * * *'), d('2031-06-01T03:00:00Z'), d('2031-06-01T03:00:01Z')), d('2031-06-02T03:00:00Z'));
});

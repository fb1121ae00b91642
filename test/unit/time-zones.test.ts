// Cron schedules are read in UTC (the platform's) or in the zone a scheduled task names, never in the
// machine's: this file runs in a zone five and a half hours from UTC, where reading a schedule in
// local time moves every due time. (The rest of the suite runs where the machine's zone is, usually
// UTC, where that mistake cannot show.)
process.env.TZ = 'Asia/Kolkata';

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firstRun, parseSchedule } from '../../src/modules/scheduled-tasks/schedule.ts';
import { DeclaredSchedules, nextDueAfter, parseCron, type Schedule } from '../../src/platform/jobs/scheduler.ts';

const d = (iso: string) => new Date(iso);

test('the process runs in another zone than UTC', () => {
  assert.equal(d('2031-06-01T00:00:00Z').getTimezoneOffset(), -330);
  assert.equal(d('2031-06-01T00:00:00Z').getHours(), 5);
});

test("the platform's schedules are UTC", () => {
  const nightly = parseCron('0 3 * * *');
  assert.deepEqual(nightly.nextRun(d('2031-06-01T00:00:00Z')), d('2031-06-01T03:00:00Z'));
  assert.deepEqual(nextDueAfter(nightly, d('2031-06-01T03:00:00Z'), d('2031-06-01T03:00:01Z')), d('2031-06-02T03:00:00Z'));
  // Days of the week are UTC days: Monday 00:30 UTC is still Sunday evening nowhere that matters here.
  assert.deepEqual(parseCron('30 0 * * 1').nextRun(d('2031-06-01T00:00:00Z')), d('2031-06-02T00:30:00Z'));
  const declared: Schedule = { name: 'nightly', cron: '0 3 * * *', run: async () => {} };
  assert.deepEqual(new DeclaredSchedules([declared]).handlers().map((h) => h.topic), ['schedule:nightly']);
});

test("a scheduled task's cron is read in its time zone, UTC when it names none", () => {
  const now = d('2031-06-01T00:00:00Z');
  const utc = parseSchedule('0 9 * * *', 'UTC', 60_000, now);
  assert.deepEqual(firstRun(utc, now), d('2031-06-01T09:00:00Z'));
  // Berlin is UTC+2 in June, New York UTC-4.
  assert.deepEqual(firstRun(parseSchedule('0 9 * * *', 'Europe/Berlin', 60_000, now), now), d('2031-06-01T07:00:00Z'));
  assert.deepEqual(firstRun(parseSchedule('0 9 * * *', 'America/New_York', 60_000, now), now), d('2031-06-01T13:00:00Z'));
  // An interval is a length of time, the same in every zone.
  assert.deepEqual(firstRun(parseSchedule('15 minutes', 'UTC', 60_000, now), now), d('2031-06-01T00:15:00Z'));
});

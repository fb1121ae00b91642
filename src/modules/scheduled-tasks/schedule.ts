// The two kinds of schedule a task may have, and when it runs next.
//
// - A 5-field cron expression (croner), evaluated in the task's IANA time zone (UTC unless named),
//   so that "30 2 * * *" in Europe/Berlin follows daylight saving time: on the day clocks skip
//   02:30 it runs at the first valid time after the gap, and on the day 02:30 happens twice it runs
//   once, at the first.
// - An interval such as "15 minutes" (seconds, minutes, hours or days), anchored at the time the
//   schedule was set: runs fall at anchor + k × interval.
//
// Catch-up: when due times were missed (every instance down), the task fires once, for the earliest
// missed due time, and then continues from the first due time after now, never once per missed
// occurrence.
import { Cron } from 'croner';
import { nextDueAfter } from '../../platform/jobs/scheduler.ts';

export type Schedule = { kind: 'cron'; cron: Cron } | { kind: 'interval'; seconds: number };

const INTERVAL = /^\s*(\d{1,9})\s+(second|seconds|minute|minutes|hour|hours|day|days)\s*$/i;
const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400 };
/** Runs looked at for a cron expression's shortest gap: its first cluster of runs shows the densest spacing. */
const PERIOD_SAMPLE = 24;

/** Why a schedule is refused, for a 400 that names the problem. */
export class ScheduleError extends Error {}

/** Whether `zone` is an IANA time zone this runtime knows. */
function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Parses a schedule; throws a ScheduleError naming the problem when it is neither a valid cron
 * expression nor an interval, never matches, or runs more often than every `minPeriodMs`.
 */
export function parseSchedule(text: string, timeZone: string, minPeriodMs: number, now: Date): Schedule {
  if (!knownTimeZone(timeZone)) throw new ScheduleError(`time_zone "${timeZone}" is not an IANA time zone (e.g. "UTC", "Europe/Berlin")`);
  const interval = INTERVAL.exec(text);
  if (interval) {
    const unit = interval[2]!.toLowerCase().replace(/s$/, '');
    const seconds = Number(interval[1]) * UNIT_SECONDS[unit]!;
    if (seconds <= 0) throw new ScheduleError(`schedule "${text}" is an interval of zero`);
    if (seconds * 1000 < minPeriodMs) throw new ScheduleError(`schedule "${text}" runs every ${seconds} s; the minimum period is ${minPeriodMs / 1000} s`);
    return { kind: 'interval', seconds };
  }
  let cron: Cron;
  try {
    cron = new Cron(text.trim(), { mode: '5-part', timezone: timeZone });
  } catch (error) {
    throw new ScheduleError(`schedule "${text}" is neither a 5-field cron expression nor an interval like "15 minutes": ${(error as Error).message}`);
  }
  const runs = cron.nextRuns(PERIOD_SAMPLE, now);
  if (runs.length === 0) throw new ScheduleError(`schedule "${text}" never matches`);
  for (let i = 1; i < runs.length; i += 1) {
    const gap = runs[i]!.getTime() - runs[i - 1]!.getTime();
    if (gap < minPeriodMs) throw new ScheduleError(`schedule "${text}" runs as often as every ${gap / 1000} s; the minimum period is ${minPeriodMs / 1000} s`);
  }
  return { kind: 'cron', cron };
}

/** The first due time of a schedule set at `anchor`. */
export function firstRun(schedule: Schedule, anchor: Date): Date | undefined {
  if (schedule.kind === 'interval') return new Date(anchor.getTime() + schedule.seconds * 1000);
  return schedule.cron.nextRun(anchor) ?? undefined;
}

/** The due time after `dueAt` fired at `now`: the first after both (the catch-up rule). */
export function nextRun(schedule: Schedule, anchor: Date, dueAt: Date, now: Date): Date | undefined {
  if (schedule.kind === 'cron') {
    try {
      return nextDueAfter(schedule.cron, dueAt, now);
    } catch {
      return undefined;
    }
  }
  const period = schedule.seconds * 1000;
  const after = Math.max(dueAt.getTime(), now.getTime());
  const steps = Math.floor((after - anchor.getTime()) / period) + 1;
  return new Date(anchor.getTime() + steps * period);
}

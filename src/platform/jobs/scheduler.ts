// Periodic work on cron schedules, each due time run by exactly one instance.
//
// A schedule is declared in code (`Module.schedules`) and kept as a row of `schedules`: name, cron
// (5 fields, UTC) and next_due_at. Every instance ticks on its poll interval. A tick locks the rows
// that are due with FOR UPDATE SKIP LOCKED (a row another instance is firing is skipped, not waited
// for), enqueues one outbox job per row for its due time (topic `schedule:<name>`, key
// `<name>@<due time>`, payload `{due_at}`) and moves next_due_at past now, in one transaction: once
// that commits the row is no longer due, so no instance can enqueue that due time again. The run is
// then an ordinary job: whichever worker claims it runs the schedule, at least once, retried with
// backoff when it throws, never twice at the same time (the outbox's leases).
//
// Catch-up: due times missed while no instance was running (or while ticks came late) fire once,
// not once per missed occurrence. The run carries the earliest missed due time; the next due time is
// the first match after now.
//
// Boot: each instance writes the rows of the schedules it declares. A new schedule starts at its
// first match after now; one whose cron changed in code takes the new pattern and its first match
// after now; an unchanged one keeps its next due time, so one missed during downtime is caught up.
// Rows of schedules no longer declared stay but never fire (nobody claims them), so instances of
// two versions can run side by side during a deploy.
//
// Clock: due times are judged by the database's clock, shared by all instances, unless a test
// injects one (as with the job worker).
//
// Nothing in the tick is specific to these rows: another table whose rows fall due on a cron (the
// per-room scheduled tasks to come) is another `Timetable`, fired by the same loop with the same
// rule for the next due time.
import { Cron } from 'croner';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Db } from '../db/engine.ts';
import { clockSql, enqueue } from './outbox.ts';
import { rowsOf } from '../db/rows.ts';
import type { Clock, JobContext, JobHandler } from './worker.ts';

export interface Schedule {
  /** Unique name, e.g. `oauth.purge`: lowercase letters, digits, `.`, `_` and `-`. */
  readonly name: string;
  /** A 5-field cron expression, evaluated in UTC. */
  readonly cron: string;
  /** One run for one due time; throwing retries it like any job. */
  run(context: JobContext, dueAt: Date): Promise<void>;
}

/** The outbox topic a schedule's runs are queued under. */
export const scheduleTopic = (name: string) => `schedule:${name}`;

/** Parses a 5-field cron expression, in UTC; throws when it is invalid or never matches. */
export function parseCron(pattern: string): Cron {
  const cron = new Cron(pattern, { mode: '5-part', timezone: 'UTC' });
  if (!cron.nextRun()) throw new Error(`cron "${pattern}" never matches`);
  return cron;
}

function nextMatch(cron: Cron, after: Date): Date {
  const next = cron.nextRun(after);
  if (!next) throw new Error(`cron "${cron.getPattern()}" has no match after ${after.toISOString()}`);
  return next;
}

/**
 * The due time after one that just fired: the first match after both it and now, so occurrences
 * missed meanwhile collapse into the run that fired (the catch-up rule).
 */
export function nextDueAfter(cron: Cron, firedDueAt: Date, now: Date): Date {
  return nextMatch(cron, firedDueAt > now ? firedDueAt : now);
}

/**
 * Rows that fall due on a clock. The scheduler calls `fireDue` in a transaction of its own; it locks
 * due rows with FOR UPDATE SKIP LOCKED, writes what firing means (outbox jobs, run records) and
 * moves each row to its next due time, so that each due time fires once across instances.
 */
export interface Timetable {
  /** Brings the rows up to date before the first tick; retried on each tick until it succeeds. */
  prepare?(db: Db, now: Date | undefined): Promise<void>;
  /** Fires up to `limit` rows due at `now` (the database's clock when undefined); returns how many. */
  fireDue(tx: Db, now: Date | undefined, limit: number): Promise<number>;
}

export interface SchedulerOptions {
  timetables: readonly Timetable[];
  /** Interval between ticks: how late after its due time a run may be enqueued. */
  pollMs: number;
  /** Most rows fired per transaction. */
  batchSize: number;
  /** Judges due times instead of the database's clock (tests). */
  clock?: Clock | undefined;
  log: FastifyBaseLogger;
}

export class Scheduler {
  readonly #db: Db;
  readonly #options: SchedulerOptions;
  readonly #unprepared: Set<Timetable>;
  #loop: Promise<void> | undefined;
  #stopping = false;
  #wake: (() => void) | undefined;

  constructor(database: Database, options: SchedulerOptions) {
    this.#db = database.background;
    this.#options = options;
    this.#unprepared = new Set(options.timetables.filter((t) => t.prepare));
  }

  start(): void {
    if (this.#loop || this.#options.timetables.length === 0) return;
    this.#loop = this.#run();
  }

  /** Stops ticking; resolves once a tick in progress has committed or rolled back. */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#wake?.();
    await this.#loop;
  }

  /**
   * Fires everything due by the clock now, batch after batch; for tests that move an injected clock,
   * and for tools. Not for use together with `start()`.
   */
  async tick(): Promise<number> {
    let fired = 0;
    for (const timetable of this.#options.timetables) fired += await this.#fire(timetable);
    return fired;
  }

  async #fire(timetable: Timetable): Promise<number> {
    const now = this.#options.clock?.now();
    if (this.#unprepared.has(timetable)) {
      await timetable.prepare!(this.#db, now);
      this.#unprepared.delete(timetable);
    }
    const { batchSize } = this.#options;
    let fired = 0;
    for (;;) {
      const count = await this.#db.transaction((tx) => timetable.fireDue(tx, now, batchSize));
      fired += count;
      if (count < batchSize) return fired;
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      for (const timetable of this.#options.timetables) {
        if (this.#stopping) break;
        try {
          await this.#fire(timetable);
        } catch (error) {
          this.#options.log.error({ err: error }, 'scheduler: tick failed');
        }
      }
      await this.#sleep(this.#options.pollMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,99}$/;

/** The database's clock, for computing due times when no clock is injected. */
async function databaseNow(db: Db): Promise<Date> {
  const [row] = rowsOf<{ ms: number }>(await db.execute(sql`select (extract(epoch from now()) * 1000)::float8 as ms`));
  return new Date(Number(row!.ms));
}

/** The schedules declared in code: one row each in `schedules`, and the job handlers that run them. */
export class DeclaredSchedules implements Timetable {
  readonly #schedules = new Map<string, Schedule>();
  /** Parsed patterns, by pattern: the declared ones, and any other a row holds (written by another version). */
  readonly #crons = new Map<string, Cron>();

  /** Throws, naming the schedule, on a bad or repeated name and on a cron that is invalid or never matches. */
  constructor(schedules: readonly Schedule[]) {
    for (const schedule of schedules) {
      if (!NAME.test(schedule.name)) throw new Error(`schedule name "${schedule.name}": use lowercase letters, digits, ".", "_" and "-"`);
      if (this.#schedules.has(schedule.name)) throw new Error(`schedule "${schedule.name}" is declared twice`);
      try {
        this.#cron(schedule.cron);
      } catch (error) {
        throw new Error(`schedule "${schedule.name}": ${(error as Error).message}`);
      }
      this.#schedules.set(schedule.name, schedule);
    }
  }

  get size(): number {
    return this.#schedules.size;
  }

  /** One job handler per schedule: runs it for the due time its job carries. */
  handlers(): JobHandler[] {
    return [...this.#schedules.values()].map((schedule) => ({
      topic: scheduleTopic(schedule.name),
      async run(job, context) {
        await schedule.run(context, new Date(String(job.payload.due_at)));
        return {};
      },
    }));
  }

  async prepare(db: Db, now: Date | undefined): Promise<void> {
    const at = now ?? (await databaseNow(db));
    const input = JSON.stringify([...this.#schedules.values()].map((s) => ({ name: s.name, cron: s.cron, next_due_at: nextMatch(this.#cron(s.cron), at).toISOString() })));
    await db.execute(sql`
      insert into schedules (name, cron, next_due_at)
      select name, cron, next_due_at from jsonb_to_recordset(${input}::jsonb) as x(name text, cron text, next_due_at timestamptz)
      on conflict (name) do update set cron = excluded.cron, next_due_at = excluded.next_due_at
      where schedules.cron <> excluded.cron`);
  }

  async fireDue(tx: Db, now: Date | undefined, limit: number): Promise<number> {
    const rows = rowsOf<{ name: string; cron: string; due_ms: number; now_ms: number }>(await tx.execute(sql`
      select name, cron, (extract(epoch from next_due_at) * 1000)::float8 as due_ms, (extract(epoch from ${clockSql(now)}) * 1000)::float8 as now_ms
      from schedules
      where next_due_at <= ${clockSql(now)} and name in (select jsonb_array_elements_text(${JSON.stringify([...this.#schedules.keys()])}::jsonb))
      order by next_due_at
      limit ${limit}
      for update skip locked`));
    if (rows.length === 0) return 0;
    const fired = rows.map((row) => {
      const dueAt = new Date(Number(row.due_ms));
      const at = new Date(Number(row.now_ms));
      // The row's pattern, not ours: during a deploy every instance then computes the same next due time.
      return { name: row.name, dueAt, at, next: nextDueAfter(this.#cron(row.cron), dueAt, at) };
    });
    await enqueue(tx, fired.map((f) => ({
      topic: scheduleTopic(f.name),
      key: `${f.name}@${f.dueAt.toISOString()}`,
      payload: { due_at: f.dueAt.toISOString() },
      runAt: f.at,
    })));
    await tx.execute(sql`
      update schedules s set next_due_at = x.next_due_at
      from jsonb_to_recordset(${JSON.stringify(fired.map((f) => ({ name: f.name, next_due_at: f.next.toISOString() })))}::jsonb) as x(name text, next_due_at timestamptz)
      where s.name = x.name`);
    return fired.length;
  }

  #cron(pattern: string): Cron {
    let cron = this.#crons.get(pattern);
    if (!cron) {
      cron = parseCron(pattern);
      this.#crons.set(pattern, cron);
    }
    return cron;
  }
}

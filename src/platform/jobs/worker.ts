// The worker loop of the outbox: claim due jobs (FOR UPDATE SKIP LOCKED, with a lease), run each
// topic's handler outside any transaction, then settle the outcomes in one transaction together
// with whatever the handlers record, only for jobs whose lease is still ours.
//
// Guarantees: at-least-once. A worker that dies mid-job leaves a leased row whose run_at is the
// lease end, so the job runs again after the lease expires; while a worker is alive its leases are
// renewed, so a slow job is never run twice at the same time. Several instances on one PostgreSQL
// share the queue without waiting for each other.
//
// Wake-ups: a NOTIFY from `enqueue` (on commit, on every instance) or the poll interval; jobs
// retried in the future are found by the poll. Due times and leases are judged by the database's
// clock, which every instance shares (app servers' clocks may drift apart); tests inject a clock
// instead and move it rather than sleeping.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { Counter } from 'prom-client';
import type { Database, Db } from '../db/engine.ts';
import { registry } from '../http/metrics.ts';
import { claimJobs, JOBS_CHANNEL, renewLeases, settleJobs, vacuumJobs, type ClaimedJob, type JobSettlement } from './outbox.ts';

export interface Clock {
  now(): Date;
}

/** The local clock, for handlers' own timestamps (the worker itself uses the database's). */
export const systemClock: Clock = { now: () => new Date() };

/** What a handler reports. Nothing set: the job is done and removed. */
export interface JobResult {
  /** Run again at this time (the handler's own retry policy). */
  retryAt?: Date | undefined;
  /** Give up: the row is kept with status `dead` and this error. */
  dead?: string | undefined;
  /** Noted on the row with a retry. */
  error?: string | undefined;
  /**
   * Writes that record the outcome (e.g. an attempt log), committed in the same transaction as the
   * job's new state, and skipped when the lease was lost meanwhile.
   */
  record?: ((tx: Db) => Promise<void>) | undefined;
  /**
   * Like `record`, for writes that are cheaper together: the items of every job of a settlement
   * that name the same `writer` are written by one call, in the settlement transaction.
   */
  recordTogether?: TogetherRecord | undefined;
}

/** Writes many jobs' items in a few statements (e.g. one multi-row insert) instead of a few each. */
export interface RecordWriter<T> {
  write(tx: Db, items: readonly T[]): Promise<void>;
}

export interface TogetherRecord<T = unknown> {
  writer: RecordWriter<T>;
  item: T;
}

/** A job's share of a merged record (keeps the item's type checked against its writer). */
export const recordTogether = <T>(writer: RecordWriter<T>, item: T): TogetherRecord => ({ writer, item }) as TogetherRecord;

export interface JobContext {
  /** Aborts when the worker stops; the job is then released to run again at once. */
  signal: AbortSignal;
  /** The database handle for background work (its own pool on PostgreSQL). */
  db: Db;
}

export interface JobHandler {
  readonly topic: string;
  /** Claims after which a job whose run keeps throwing is marked dead (default 20). */
  readonly maxAttempts?: number;
  /**
   * Does the work, e.g. network I/O; never inside a transaction. Throwing retries the job with
   * exponential backoff.
   */
  run(job: ClaimedJob, context: JobContext): Promise<JobResult>;
  /**
   * Optional: called with each claimed batch of this topic before its jobs run, so a handler can
   * load what they need in one query instead of one per job. A failure here is logged and the jobs
   * still run.
   */
  prefetch?(jobs: readonly ClaimedJob[], context: JobContext): Promise<void>;
  /** Optional: releases what the handler holds (connection pools), after the worker stopped. */
  close?(): void | Promise<void>;
}

export interface JobWorkerOptions {
  handlers: readonly JobHandler[];
  /** Most jobs running (or waiting to be settled) at once. */
  concurrency: number;
  /** Most jobs claimed per query. */
  batchSize: number;
  /** Idle poll interval; also how late a retry may start. */
  pollMs: number;
  /** Lease of a claimed job; renewed every third of it while the job runs. */
  leaseMs: number;
  /** Judges due times and leases instead of the database's clock (tests). */
  clock?: Clock | undefined;
  log: FastifyBaseLogger;
  /** How long `stop()` lets running jobs finish before aborting them (default 5 s). */
  stopGraceMs?: number;
  /**
   * After a wake-up, wait this long before claiming, so jobs committed meanwhile share one claim,
   * one prefetch and one settlement instead of paying for them one by one (default 5 ms).
   */
  coalesceMs?: number;
}

const finished = new Counter({
  name: 'atrium_jobs_settled_total',
  help: 'Jobs settled by this instance, by topic and outcome (done, retry, dead, release, lost)',
  labelNames: ['topic', 'outcome'] as const,
  registers: [registry],
});

interface Settled {
  job: ClaimedJob;
  settlement: JobSettlement;
  record?: ((tx: Db) => Promise<void>) | undefined;
  together?: TogetherRecord | undefined;
}

const MAX_BACKOFF_MS = 3600_000;
/**
 * PGlite runs no autovacuum, so every finished job would leave dead rows and index entries that
 * each later claim scans past; the worker vacuums the queue table itself after this many settled jobs.
 */
const PGLITE_VACUUM_EVERY = 5000;

export class JobWorker {
  readonly #database: Database;
  readonly #handlers: Map<string, JobHandler>;
  readonly #options: JobWorkerOptions;
  readonly #clock: Clock | undefined;
  readonly #log: FastifyBaseLogger;
  readonly #abort = new AbortController();
  /** Claimed jobs not yet settled, by id. */
  readonly #inflight = new Map<string, ClaimedJob>();
  #queue: Settled[] = [];
  #flushing: Promise<void> | undefined;
  #started = false;
  #stopping = false;
  #wakeRequested = true;
  #signal: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #renewTimer: NodeJS.Timeout | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #idleWaiters: (() => void)[] = [];
  #settledSinceVacuum = 0;
  #lastClaimFull = false;
  readonly #context: JobContext;

  constructor(database: Database, options: JobWorkerOptions) {
    this.#database = database;
    this.#context = { signal: this.#abort.signal, db: database.background };
    this.#options = options;
    this.#handlers = new Map(options.handlers.map((h) => [h.topic, h]));
    this.#clock = options.clock;
    this.#log = options.log;
  }

  get topics(): string[] {
    return [...this.#handlers.keys()];
  }

  start(): void {
    if (this.#started || this.#handlers.size === 0) return;
    this.#started = true;
    this.#database.listen(JOBS_CHANNEL, (topic) => {
      if (this.#handlers.has(topic)) this.wake();
    }).then((unlisten) => {
      if (this.#stopping) void unlisten();
      else this.#unlisten = unlisten;
    }, (error: unknown) => this.#log.warn({ err: error }, 'jobs: LISTEN failed; relying on polling'));
    const renewEvery = Math.max(Math.floor(this.#options.leaseMs / 3), 50);
    this.#renewTimer = setInterval(() => void this.#renew(), renewEvery);
    this.#loop = this.#run();
  }

  /** Asks the loop to look for due jobs now (e.g. after enqueueing in this process). */
  wake(): void {
    this.#wakeRequested = true;
    this.#signal?.();
  }

  /** Stops claiming, lets running jobs finish for a grace period, then aborts and releases them. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#signal?.();
    await this.#loop;
    const grace = setTimeout(() => this.#abort.abort(), this.#options.stopGraceMs ?? 5000);
    await this.#idle();
    clearTimeout(grace);
    clearInterval(this.#renewTimer);
    await this.#unlisten?.().catch(() => {});
    await Promise.all([...this.#handlers.values()].map((h) => h.close?.()));
  }

  /**
   * Runs every job that is due by the clock, batch after batch, until none is left; for tests that
   * move an injected clock, and for tools. Not for use together with `start()`.
   */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const jobs = await this.#claim(this.#options.batchSize);
      if (jobs.length === 0) return total;
      total += jobs.length;
      this.#dispatchAll(jobs);
      await this.#idle();
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      const free = this.#options.concurrency - this.#inflight.size;
      if (this.#wakeRequested && free > 0) {
        const coalesceMs = this.#options.coalesceMs ?? 5;
        if (!this.#lastClaimFull && coalesceMs > 0) await new Promise((resolve) => setTimeout(resolve, coalesceMs));
        this.#wakeRequested = false;
        const limit = Math.min(this.#options.batchSize, this.#options.concurrency - this.#inflight.size);
        let claimed: number;
        try {
          claimed = await this.#claimAndDispatch(limit);
        } catch (error) {
          if (this.#stopping) break;
          this.#log.error({ err: error }, 'jobs: claiming failed');
          await this.#sleep(this.#options.pollMs);
          this.#wakeRequested = true;
          continue;
        }
        // A full batch suggests more are due: claim again at once.
        this.#lastClaimFull = claimed === limit;
        if (this.#lastClaimFull) this.#wakeRequested = true;
        continue;
      }
      await this.#sleep(this.#options.pollMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wakeRequested = true;
        done();
      }, ms);
      const done = () => {
        clearTimeout(timer);
        this.#signal = undefined;
        resolve();
      };
      this.#signal = done;
    });
  }

  /**
   * Claims a batch and starts it; how many were claimed. The batch is not held here: a suspended
   * async function keeps its locals alive, so `#run` sleeping with the batch in hand kept every
   * job (and its payload) until the next claim, long enough for V8 to move them all into the old
   * generation (docs/contributing/performance-journal.md, "Jobs no longer held while the worker sleeps").
   */
  async #claimAndDispatch(limit: number): Promise<number> {
    const jobs = await this.#claim(limit);
    this.#dispatchAll(jobs);
    return jobs.length;
  }

  async #claim(limit: number): Promise<ClaimedJob[]> {
    return claimJobs(this.#database.background, {
      topics: this.topics,
      limit,
      now: this.#clock?.now(),
      leaseMs: this.#options.leaseMs,
      leaseToken: randomUUID(),
    });
  }

  #now(): Date {
    return this.#clock?.now() ?? new Date();
  }

  /** Starts a claimed batch: each topic's prefetch first (if any), then every job. */
  #dispatchAll(jobs: ClaimedJob[]): void {
    const byTopic = new Map<string, ClaimedJob[]>();
    for (const job of jobs) {
      this.#inflight.set(job.id, job);
      const list = byTopic.get(job.topic);
      if (list) list.push(job);
      else byTopic.set(job.topic, [job]);
    }
    for (const [topic, list] of byTopic) {
      const handler = this.#handlers.get(topic)!;
      const ready = handler.prefetch
        ? handler.prefetch(list, this.#context).catch((error: unknown) => this.#log.warn({ err: error, topic }, 'jobs: prefetch failed; jobs load one by one'))
        : Promise.resolve();
      for (const job of list) {
        void ready.then(() => this.#execute(job)).then((settled) => {
          this.#queue.push(settled);
          this.#flushing ??= this.#flush();
        });
      }
    }
  }

  async #execute(job: ClaimedJob): Promise<Settled> {
    const handler = this.#handlers.get(job.topic)!;
    const base = { id: job.id, leaseToken: job.leaseToken };
    try {
      const result = await handler.run(job, this.#context);
      const records = { record: result.record, together: result.recordTogether };
      if (result.dead !== undefined) return { job, settlement: { ...base, kind: 'dead', runAt: this.#now(), error: result.dead }, ...records };
      if (result.retryAt) return { job, settlement: { ...base, kind: 'retry', runAt: result.retryAt, error: result.error ?? null }, ...records };
      return { job, settlement: { ...base, kind: 'done' }, ...records };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (this.#abort.signal.aborted) return { job, settlement: { ...base, kind: 'release', runAt: this.#now(), error: null } };
      this.#log.error({ err: error, topic: job.topic, jobId: job.id, attempts: job.attempts }, 'jobs: handler failed');
      if (job.attempts >= (handler.maxAttempts ?? 20)) return { job, settlement: { ...base, kind: 'dead', runAt: this.#now(), error: message } };
      return { job, settlement: { ...base, kind: 'retry', runAt: new Date(this.#now().getTime() + backoffMs(job.attempts)), error: message } };
    }
  }

  /** Settles queued outcomes in batches, one transaction each (group commit). */
  async #flush(): Promise<void> {
    // Jobs of one claimed batch finish within milliseconds of each other: waiting as long as a
    // claim coalesces lets them share one settlement transaction instead of one each.
    const coalesceMs = this.#options.coalesceMs ?? 5;
    if (coalesceMs > 0 && this.#inflight.size > this.#queue.length) await new Promise((resolve) => setTimeout(resolve, coalesceMs));
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, 500);
      try {
        await this.#settle(batch);
      } catch (error) {
        // One bad record must not sink the others: settle one by one, and give up on a job whose
        // record keeps failing by releasing it with backoff.
        this.#log.warn({ err: error, size: batch.length }, 'jobs: batch settlement failed; settling one by one');
        for (const item of batch) {
          try {
            await this.#settle([item]);
          } catch (itemError) {
            this.#log.error({ err: itemError, topic: item.job.topic, jobId: item.job.id }, 'jobs: settling failed');
            const retry: Settled = {
              job: item.job,
              settlement: { id: item.job.id, leaseToken: item.job.leaseToken, kind: 'retry', runAt: new Date(this.#now().getTime() + backoffMs(item.job.attempts)), error: String((itemError as Error).message ?? itemError) },
            };
            await this.#settle([retry]).catch((e: unknown) => this.#log.error({ err: e }, 'jobs: could not release a job; its lease will expire'));
          }
        }
      }
      for (const item of batch) this.#inflight.delete(item.job.id);
      if (this.#wakeRequested) this.#signal?.();
      if (this.#inflight.size === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
      this.#settledSinceVacuum += batch.length;
      if (this.#database.engine === 'pglite' && this.#settledSinceVacuum >= PGLITE_VACUUM_EVERY) {
        this.#settledSinceVacuum = 0;
        await vacuumJobs(this.#database.background).catch((error: unknown) => this.#log.warn({ err: error }, 'jobs: vacuum failed'));
      }
    }
    this.#flushing = undefined;
  }

  async #settle(batch: Settled[]): Promise<void> {
    let owned = new Set<string>();
    await this.#database.background.transaction(async (tx) => {
      owned = await settleJobs(tx, batch.map((b) => b.settlement));
      const together = new Map<RecordWriter<unknown>, unknown[]>();
      for (const item of batch) {
        if (!item.together || !owned.has(item.job.id)) continue;
        const items = together.get(item.together.writer);
        if (items) items.push(item.together.item);
        else together.set(item.together.writer, [item.together.item]);
      }
      // Issued together, the records travel pipelined on the transaction's connection.
      await Promise.all([
        ...batch.map((item) => (item.record && owned.has(item.job.id) ? item.record(tx) : undefined)),
        ...[...together].map(([writer, items]) => writer.write(tx, items)),
      ]);
    });
    for (const item of batch) finished.inc({ topic: item.job.topic, outcome: owned.has(item.job.id) ? item.settlement.kind : 'lost' });
  }

  async #renew(): Promise<void> {
    if (this.#inflight.size === 0) return;
    try {
      await renewLeases(this.#database.background, [...this.#inflight.values()], this.#clock?.now(), this.#options.leaseMs);
    } catch (error) {
      this.#log.warn({ err: error }, 'jobs: lease renewal failed');
    }
  }

  #idle(): Promise<void> {
    if (this.#inflight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }
}

/** Exponential backoff with ±20 % jitter for handlers that throw: 1 s, 2 s, 4 s… up to an hour. */
export function backoffMs(attempts: number): number {
  const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

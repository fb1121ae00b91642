// Periodic platform work (pruning, purges, auto-recharge checks…): one schedule per named job.
import type { JobContext } from './worker.ts';

export interface Schedule {
  /** Unique name, e.g. `oauth.purge`; also the outbox topic its runs are queued under. */
  readonly name: string;
  /** A 5-field cron expression, evaluated in UTC. */
  readonly cron: string;
  /** One run for one due time; throwing retries it like any job. */
  run(context: JobContext, dueAt: Date): Promise<void>;
}

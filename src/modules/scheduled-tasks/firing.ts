// Firing and delivering scheduled tasks.
//
// Firing is a Timetable of the platform scheduler: every instance ticks; a tick locks the due tasks
// with FOR UPDATE SKIP LOCKED, writes one run per task for its due time (unique on
// (task_id, scheduled_time)), enqueues the run's delivery job and moves the task to its next due
// time, all in one transaction. Once that commits the task is no longer due, and a second write of
// the same due time could not insert a run anyway: each due time fires exactly once, whatever the
// number of instances. A due time missed while every instance was down fires once (the earliest
// missed), then the task carries on from the first due time after now.
//
// Delivering is an outbox job per run: it sends the run's queued message to the room server
// (signed, docs/room-servers.md) and records the outcome on the run, pending → submitting →
// submitted, or retrying (with the error) → … → failed. The message id stays the same across
// attempts, so a room server that received a message twice (a crash between its answer and our
// record) can tell. A claimed batch is marked `submitting` in one statement before it is sent.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../platform/db/engine.ts';
import { ROOM_SERVER_PATHS, RoomServerClient } from '../../platform/http/room-server.ts';
import { enqueue } from '../../platform/jobs/outbox.ts';
import type { Timetable } from '../../platform/jobs/scheduler.ts';
import type { JobOf, RunnerOf } from '../../platform/jobs/types.ts';
import { systemClock, type Clock, type JobContext } from '../../platform/jobs/worker.ts';
import { deliverRunJob } from './jobs.ts';
import { nextRun, parseSchedule, type Schedule } from './schedule.ts';
import * as store from './store.ts';

export function scheduledTaskTimetable(): Timetable {
  // Schedules were validated when written; parse each (schedule, zone) once. The minimum period is
  // not checked again: a task written under a lower minimum keeps running.
  const parsed = new LRUCache<string, Schedule>({ max: 10_000 });
  const scheduleOf = (task: store.DueTask) => {
    const key = `${task.timeZone}\n${task.schedule}`;
    let schedule = parsed.get(key);
    if (!schedule) parsed.set(key, (schedule = parseSchedule(task.schedule, task.timeZone, 0, task.now)));
    return schedule;
  };
  return {
    async fireDue(tx: Db, now: Date | undefined, limit: number): Promise<number> {
      const due = await store.lockDueTasks(tx, now, limit);
      if (due.length === 0) return 0;
      const fired = due.map((task): store.FiredRun => {
        const next = task.once ? undefined : nextRun(scheduleOf(task), task.anchorAt, task.dueAt, task.now);
        return {
          task_id: task.id,
          project_id: task.projectId,
          room_id: task.roomId,
          room_name: task.roomName,
          queued_message_id: randomUUID(),
          queue_name: task.queueName,
          payload: task.payload,
          storage_write_path: task.storageWritePath,
          scheduled_time: task.dueAt.toISOString(),
          next_run_at: next?.toISOString() ?? null,
        };
      });
      const runs = await store.recordFiredRuns(tx, fired);
      await enqueue(tx, runs.map((run) => deliverRunJob.of({ key: run.id, payload: { project_id: run.projectId, run_id: run.id }, runAt: due[0]!.now })));
      return due.length;
    },
  };
}

/** The room server client is the service's; `clock` times retries (tests move it instead of waiting). */
export function deliveryHandler(
  ctx: AppContext,
  roomServer = new RoomServerClient({ baseUrl: ctx.config.roomServer.url, issuer: ctx.config.publicUrl, keys: ctx.keys }),
  clock: Clock = systemClock,
): RunnerOf<typeof deliverRunJob> {
  const leaseMs = ctx.config.jobs.leaseMs;
  // Runs marked `submitting` for a claimed batch, by job id; `undefined`: nothing left to deliver.
  const started = new Map<string, store.RunRow | undefined>();

  async function prefetch(jobs: readonly JobOf<typeof deliverRunJob>[], { db }: JobContext): Promise<void> {
    const runs = new Map((await store.startAttempts(db, jobs.map((j) => j.key), leaseMs)).map((r) => [String(r.id), r]));
    for (const job of jobs) started.set(job.id, runs.get(job.key));
  }

  return {
    prefetch,
    async run(job, context) {
      if (!started.has(job.id)) await prefetch([job], context);
      const run = started.get(job.id);
      started.delete(job.id);
      if (!run) return {};
      const body = {
        id: run.queuedMessageId,
        project_id: run.projectId,
        room_id: run.roomId,
        room_name: run.roomName,
        queue: run.queueName,
        payload: run.payload,
        ...(run.storageWritePath ? { storage_write_path: run.storageWritePath } : {}),
        task_id: run.taskId,
        run_id: String(run.id),
        scheduled_time: run.scheduledTime.toISOString(),
      };
      const outcome = await roomServer.send(ROOM_SERVER_PATHS.queueMessage, body, run.attemptCount, context.signal, clock.now());
      if (outcome.ok) return { record: (tx) => store.recordOutcome(tx, run.projectId, run.id, 'submitted', null) };
      if (outcome.retryAt) return { retryAt: outcome.retryAt, error: outcome.error, record: (tx) => store.recordOutcome(tx, run.projectId, run.id, 'retrying', outcome.error) };
      return { record: (tx) => store.recordOutcome(tx, run.projectId, run.id, 'failed', outcome.error) };
    },
    close: () => roomServer.close(),
  };
}

/** Rows deleted per statement when pruning. */
const PRUNE_BATCH = 5000;

/** The retention schedule's run: deletes finished runs due longer ago than the retention period. */
export async function pruneRuns(ctx: AppContext, { db }: JobContext, now: Date): Promise<void> {
  const before = new Date(now.getTime() - ctx.config.scheduledTasks.runRetentionMs);
  while ((await store.pruneRuns(db, before, PRUNE_BATCH)) === PRUNE_BATCH);
}

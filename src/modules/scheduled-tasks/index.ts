// Scheduled tasks of rooms: fired by the scheduler (a timetable of their own), delivered to the room
// server through the outbox, their runs kept for a retention period.
import type { Module } from '../../module.ts';
import { handles } from '../../platform/jobs/types.ts';
import { deliveryHandler, pruneRuns, scheduledTaskTimetable } from './firing.ts';
import { deliverRunJob } from './jobs.ts';
import { scheduledTaskRoutes } from './routes.ts';

export const scheduledTasksModule: Module = {
  name: 'scheduled-tasks',
  routes: scheduledTaskRoutes,
  timetables: () => [scheduledTaskTimetable()],
  jobs: [handles(deliverRunJob, deliveryHandler)],
  schedules: (ctx) => [{ name: 'scheduled-tasks.prune-runs', cron: '41 * * * *', run: (context, dueAt) => pruneRuns(ctx, context, dueAt) }],
};

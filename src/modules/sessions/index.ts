// Room sessions as room servers report them (with participants and OTLP telemetry), what owners
// read and terminate, and the events their start and end emit.
import type { Module } from '../../module.ts';
import { handles } from '../../platform/jobs/types.ts';
import { roomEnded, roomStarted } from './events.ts';
import { terminateJob, terminateTimeoutJob } from './jobs.ts';
import { sessionRoutes } from './routes.ts';
import { pruneTelemetry } from './telemetry.ts';
import { terminateHandler, terminateTimeoutHandler } from './termination.ts';

export const sessionsModule: Module = {
  name: 'sessions',
  routes: sessionRoutes,
  events: [roomStarted, roomEnded],
  jobs: [handles(terminateJob, terminateHandler), handles(terminateTimeoutJob, terminateTimeoutHandler)],
  schedules: (ctx) => [{ name: 'sessions.prune-telemetry', cron: '23 * * * *', run: (context, dueAt) => pruneTelemetry(ctx, context, dueAt) }],
};

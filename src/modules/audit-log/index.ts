// The audit log: reading a project's entries (the platform writes them with every change), and its
// retention: entries older than ATRIUM_AUDIT_RETENTION_DAYS go, hourly.
import type { Module } from '../../module.ts';
import { auditRecorded } from '../../platform/audit/view.ts';
import { RETENTION_MAX_BATCHES } from '../../platform/jobs/retention.ts';
import { auditLogRoutes } from './routes.ts';

export const auditLogModule: Module = {
  name: 'audit-log',
  routes: auditLogRoutes,
  events: [auditRecorded],
  schedules: (ctx) => [{
    name: 'audit-log.retention',
    cron: '47 * * * *',
    run: async ({ db }, dueAt) => {
      const before = new Date(dueAt.getTime() - ctx.config.retention.auditRetentionMs);
      await ctx.audit.prune(before, { batchSize: ctx.config.retention.batchSize, maxBatches: RETENTION_MAX_BATCHES }, db);
    },
  }],
};

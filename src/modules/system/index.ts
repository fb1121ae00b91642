// Operational endpoints: liveness, readiness, metrics, the OpenAPI document and public keys.
import type { Module } from '../../module.ts';
import { retireSupersededKeys } from '../../platform/crypto/signing-keys.ts';
import { platformRetentionSchedule, RETENTION_MAX_BATCHES } from '../../platform/jobs/retention.ts';
import { systemRoutes } from './routes.ts';

export const systemModule: Module = {
  name: 'system',
  routes: systemRoutes,
  // The platform's own tables (dead jobs, events, rate-limit windows, development mail), hourly.
  schedules: (ctx) => [
    platformRetentionSchedule(() => ({ ...ctx.config.retention, maxBatches: RETENTION_MAX_BATCHES })),
    // Signing keys superseded for longer than any token lives leave the JWKS.
    { name: 'keys.retire', cron: '29 * * * *', run: async ({ db }, dueAt) => void (await retireSupersededKeys(db, ctx.config.keys.retireAfterMs, dueAt)) },
  ],
};

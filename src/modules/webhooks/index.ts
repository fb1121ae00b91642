// Webhooks: registrations, the delivery engine (an outbox handler), and the event fan-out that
// turns every subscribed event into deliveries.
import type { Module } from '../../module.ts';
import { prunedRows, pruneInBatches, RETENTION_MAX_BATCHES } from '../../platform/jobs/retention.ts';
import { pruneFinished } from './deliveries.ts';
import { handles } from '../../platform/jobs/types.ts';
import { webhookDeliveryHandler } from './delivery.ts';
import { deliverJob } from './jobs.ts';
import { webhookConsumer } from './fanout.ts';
import { webhookRoutes } from './routes.ts';
import { webhooksTable } from './store.ts';

export const webhooksModule: Module = {
  name: 'webhooks',
  routes: webhookRoutes,
  jobs: [handles(deliverJob, webhookDeliveryHandler)],
  eventConsumers: () => [webhookConsumer],
  // Signing secrets, and the one a rotation keeps verifying for a while.
  sealed: [{ table: webhooksTable, columns: [webhooksTable.secretEncrypted, webhooksTable.previousSecretEncrypted] }],
  // Finished deliveries (and their attempts) older than ATRIUM_RETENTION_DAYS, hourly.
  schedules: (ctx) => [{
    name: 'webhooks.prune-deliveries',
    cron: '11 * * * *',
    run: async ({ db, signal }, dueAt) => {
      const { retentionMs, batchSize } = ctx.config.retention;
      const before = new Date(dueAt.getTime() - retentionMs);
      await pruneInBatches('webhook_deliveries', { batchSize, maxBatches: RETENTION_MAX_BATCHES }, async (limit) => {
        const { deliveries, attempts } = await pruneFinished(db, before, limit);
        if (attempts > 0) prunedRows.inc({ table: 'webhook_attempts' }, attempts);
        return deliveries;
      }, signal);
    },
  }],
};

// Webhooks: registrations, the delivery engine (an outbox handler), and the event fan-out that
// turns every subscribed event into deliveries.
import { fixtureSuffix, type Module } from '../../module.ts';
import { prunedRows, pruneInBatches, RETENTION_MAX_BATCHES } from '../../platform/jobs/retention.ts';
import { pruneFinished } from './deliveries.ts';
import { handles } from '../../platform/jobs/types.ts';
import { webhookDeliveryHandler } from './delivery.ts';
import { deliverJob } from './jobs.ts';
import { webhookConsumer } from './fanout.ts';
import { webhookRoutes } from './routes.ts';

export const webhooksModule: Module = {
  name: 'webhooks',
  routes: webhookRoutes,
  jobs: [handles(deliverJob, webhookDeliveryHandler)],
  eventConsumers: () => [webhookConsumer],
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
  fixtures: [{
    provides: ['webhook_id', 'delivery_id'],
    async create(client) {
      const project = `/accounts/projects/${client.projectId}`;
      const webhook = await client.request<{ id: string }>('POST', `${project}/webhooks`, {
        json: { name: `hook-${fixtureSuffix()}`, url: 'https://receiver.example.com/atrium', events: ['storage.file.updated'] },
      });
      // One event gives the webhook a delivery.
      await client.request('POST', `/projects/${client.projectId}/storage/upload?path=${encodeURIComponent(`fixtures/hook-${fixtureSuffix()}.txt`)}`, { bytes: 'event' });
      const { deliveries } = await client.request<{ deliveries: { id: string }[] }>('GET', `${project}/webhooks/${webhook.id}/deliveries`);
      return { webhook_id: webhook.id, delivery_id: deliveries[0]!.id };
    },
  }],
};

// Webhooks: registrations, the delivery engine (an outbox handler), and the event fan-out that
// turns every subscribed event into deliveries.
import type { Module } from '../../platform/http/module.ts';
import { webhookDeliveryHandler } from './delivery.ts';
import { webhookFanout } from './fanout.ts';
import { webhookRoutes } from './routes.ts';

export const webhooksModule: Module = {
  name: 'webhooks',
  routes: webhookRoutes,
  jobs: (ctx) => [webhookDeliveryHandler(ctx)],
  eventConsumers: () => [webhookFanout],
};

// Webhook management: create, list, update, delete, rotate the signing secret, delivery history and
// redelivery. Developers and admins of the project may use them.
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { filterQuery, pageOf } from '../../platform/http/lists.ts';
import { EmptyBody, Ok, OK, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const ById = Type.Object({ project_id: Uuid, webhook_id: Uuid });
const ByDelivery = Type.Object({ project_id: Uuid, webhook_id: Uuid, delivery_id: Uuid });
const tags = ['Webhooks'];
const auth = { permission: 'developer' as const };

export function webhookRoutes(app: Api, ctx: AppContext): void {
  app.post('/accounts/projects/:project_id/webhooks', {
    config: { auth },
    schema: {
      tags, summary: 'Register a webhook', params: ProjectParams, body: schema.WebhookCreate, response: { 201: schema.Webhook },
      description: 'The URL must be absolute http(s) and, unless the operator allows it, not on a private, loopback or link-local address. With `secret: true` a signing secret is generated and returned once, in this response.',
    },
  }, async (request, reply) => reply.status(201).send(await service.createWebhook(ctx, request.params.project_id, request.body)));

  app.get('/accounts/projects/:project_id/webhooks', {
    config: { auth },
    schema: { tags, summary: 'List webhooks', params: ProjectParams, querystring: Type.Object(filterQuery('name or URL')), response: { 200: schema.WebhookList } },
  }, async (request) => service.listWebhooks(ctx, request.params.project_id, request.query.filter));

  app.put('/accounts/projects/:project_id/webhooks/:webhook_id', {
    config: { auth },
    schema: {
      tags, summary: 'Update a webhook (fields left out keep their value)', params: ById, body: schema.WebhookUpdate, response: { 200: schema.Webhook },
      description: '`enabled: true` re-enables a webhook Atrium disabled (410 Gone, or failing for days). A new `secret` replaces the old one at once; use rotate-secret for an overlap.',
    },
  }, async (request) => service.updateWebhook(ctx, request.params.project_id, request.params.webhook_id, request.body));

  app.delete('/accounts/projects/:project_id/webhooks/:webhook_id', {
    config: { auth },
    schema: { tags, summary: 'Delete a webhook and its delivery history', params: ById, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteWebhook(ctx, request.params.project_id, request.params.webhook_id);
    return OK;
  });

  app.post('/accounts/projects/:project_id/webhooks/:webhook_id/rotate-secret', {
    config: { auth },
    schema: {
      tags, summary: 'Rotate the signing secret', params: ById, body: Type.Union([schema.RotateSecret, Type.Null()], { description: 'Options, or no body' }), response: { 200: schema.Webhook },
      description: 'The new secret (returned once) signs `Service-Signature` from now on; during the overlap the old one also signs, in `Service-Signature-Previous`.',
    },
  }, async (request) => service.rotateSecret(ctx, request.params.project_id, request.params.webhook_id, request.body ?? {}));

  app.get('/accounts/projects/:project_id/webhooks/:webhook_id/deliveries', {
    config: { auth },
    schema: {
      tags, summary: 'Delivery history, newest first, with the latest attempts of each', params: ById,
      querystring: schema.DeliveryListQuery, response: { 200: schema.DeliveryList },
    },
  }, async (request) => {
    return service.listDeliveries(ctx, request.params.project_id, request.params.webhook_id, { ...pageOf(request.query), status: request.query.status });
  });

  app.post('/accounts/projects/:project_id/webhooks/:webhook_id/deliveries/:delivery_id/redeliver', {
    config: { auth },
    schema: {
      tags, summary: 'Send a delivery again now', params: ByDelivery, body: EmptyBody, response: { 202: schema.Delivery },
      description: 'Queues a manual attempt; if it fails, the retry schedule continues from the delivery\'s attempt count. 409 while an attempt is in progress or the webhook is disabled.',
    },
  }, async (request, reply) => reply.status(202).send(await service.redeliver(ctx, request.params.project_id, request.params.webhook_id, request.params.delivery_id)));

  app.post('/accounts/projects/:project_id/webhooks/:webhook_id/test', {
    config: { auth },
    schema: {
      tags, summary: 'Send a signed webhook.test delivery to this webhook now', params: ById, body: EmptyBody, response: { 202: schema.Delivery },
      description: 'The delivery goes through the same queue, signing and retries as any other and shows in the webhook\'s delivery history. 409 when the webhook is disabled; 400 for a `call` webhook.',
    },
  }, async (request, reply) => reply.status(202).send(await service.sendTestEvent(ctx, request.params.project_id, request.params.webhook_id)));
}

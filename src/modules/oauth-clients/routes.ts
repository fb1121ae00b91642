// Project OAuth clients: create (secret shown once), list, fetch, update (metadata merges), delete.
import { pageOf } from '../../platform/http/lists.ts';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['OAuth clients'];
const clients = '/accounts/projects/:project_id/oauth/clients';

export function oauthClientRoutes(app: Api, ctx: AppContext): void {
  app.post(clients, {
    config: { auth: { permission: 'oauth_client_creator' } },
    schema: {
      tags, summary: 'Register an OAuth client; the response carries its secret, once', params: ProjectParams, body: schema.OAuthClientCreate,
      response: { 201: schema.OAuthClient },
      description: 'Confidential by default (a secret is generated and returned only here); `public: true` makes a PKCE-only client without a secret.',
    },
  }, async (request, reply) => reply.status(201).send(await service.createClient(ctx, request.params.project_id, request.body)));

  app.get(clients, {
    config: { auth: { permission: 'oauth_client_inventory' } },
    schema: {
      tags, summary: 'List OAuth clients (never their secrets)', params: ProjectParams, querystring: schema.OAuthClientListQuery,
      response: { 200: schema.OAuthClientList }, description: '`filter` matches the name or the client id.',
    },
  }, async (request) => service.listClients(ctx, request.params.project_id, pageOf(request.query)));

  app.get(`${clients}/:client_id`, {
    config: { auth: { permission: 'oauth_client_inventory' } },
    schema: { tags, summary: 'Fetch an OAuth client (its secret reads as "")', params: schema.ClientParams, response: { 200: schema.OAuthClient } },
  }, async (request) => service.getClient(ctx, request.params.project_id, request.params.client_id));

  app.put(`${clients}/:client_id`, {
    config: { auth: { permission: 'oauth_client_manager' } },
    schema: {
      tags, summary: 'Update an OAuth client', params: schema.ClientParams, body: schema.OAuthClientUpdate, response: { 200: Ok },
      description: 'Only the fields sent change. `metadata` entries merge into the stored ones; `null` removes an entry, and removing `logo_url` restores the default logo.',
    },
  }, async (request) => {
    await service.updateClient(ctx, request.params.project_id, request.params.client_id, request.body);
    return OK;
  });

  app.delete(`${clients}/:client_id`, {
    config: { auth: { permission: 'oauth_client_manager' } },
    schema: { tags, summary: 'Delete an OAuth client', params: schema.ClientParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteClient(ctx, request.params.project_id, request.params.client_id);
    return OK;
  });
}

// Shares: create (the token is shown once), list, update, delete; and connect with a share token.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { EmptyBody, Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import { bearerToken } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Shares'];
const shares = '/accounts/projects/:project_id/shares';

export function shareRoutes(app: Api, ctx: AppContext): void {
  app.post(shares, {
    config: { auth: { permission: 'share_creator' } },
    schema: {
      tags, summary: 'Share a room: the response carries the share token, once', params: ProjectParams, body: schema.ShareCreate,
      response: { 201: schema.CreatedShare },
      description: 'The grants may not exceed what the caller may use in the room itself (403).',
    },
  }, async (request, reply) => reply.status(201).send(await service.createShare(ctx, ctx.authority.actorOf(request), request.body.settings)));

  app.get(shares, {
    config: { auth: { permission: 'share_inventory' } },
    schema: { tags, summary: 'List shares (never their tokens)', params: ProjectParams, querystring: schema.ShareListQuery, response: { 200: schema.ShareList } },
  }, async (request) => service.listShares(ctx, request.params.project_id, pageOf(request.query)));

  app.put(`${shares}/:share_id`, {
    config: { auth: { permission: 'share_manager' } },
    schema: {
      tags, summary: "Replace a share's settings (its token stays)", params: schema.ShareParams, body: schema.ShareUpdate, response: { 200: schema.Share },
      description: 'The grants may not exceed what the caller may use in the room itself (403).',
    },
  }, async (request) => service.updateShare(ctx, ctx.authority.actorOf(request), request.params.share_id, request.body.settings));

  app.delete(`${shares}/:share_id`, {
    config: { auth: { permission: 'share_manager' } },
    schema: { tags, summary: 'Delete a share: its token stops working at once', params: schema.ShareParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteShare(ctx, request.params.project_id, request.params.share_id);
    return OK;
  });

  // No project credential: the share token is the credential, checked by the service.
  app.post('/shares/:share_id/connect', {
    config: { auth: { permission: 'public' } },
    schema: {
      tags, summary: "Connect to a share's room with its token", params: schema.ConnectParams, body: EmptyBody,
      response: { 200: schema.ShareConnection },
      description: 'Send the share token as `Authorization: Bearer <token>`. An unknown share, a wrong token, an expired or deleted share all answer 401.',
    },
  }, async (request) => service.connectShare(ctx, request.params.share_id, bearerToken(request)));
}

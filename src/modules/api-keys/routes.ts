// Project API keys: create (value shown once), list (never values), revoke.
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { filterQuery } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import { callerOf } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['API keys'];

export function apiKeyRoutes(app: Api, ctx: AppContext): void {
  app.post('/accounts/projects/:project_id/api-keys', {
    config: { auth: { permission: 'admin' } },
    schema: { tags, summary: 'Create an API key; the response carries its value, once', params: ProjectParams, body: schema.ApiKeyCreate, response: { 201: schema.ApiKeyCreated } },
  }, async (request, reply) => {
    ctx.authority.assertRolesWithin(ctx.authority.actorOf(request), request.body.roles);
    const created = await service.createApiKey(ctx.db, ctx.secrets, request.params.project_id, { ...request.body, createdBy: callerOf(request).userId });
    return reply.status(201).send(created);
  });

  app.get('/accounts/projects/:project_id/api-keys', {
    config: { auth: { permission: 'admin' } },
    schema: { tags, summary: 'List API keys (never their values)', params: ProjectParams, querystring: Type.Object(filterQuery('name or description')), response: { 200: schema.ApiKeyList } },
  }, async (request) => ({ keys: await service.listApiKeys(ctx, request.params.project_id, request.query.filter) }));

  app.delete('/accounts/projects/:project_id/api-keys/:id', {
    config: { auth: { permission: 'admin' } },
    schema: { tags, summary: 'Revoke an API key', params: Type.Object({ project_id: Uuid, id: Uuid }), response: { 200: Ok } },
  }, async (request) => {
    await service.revokeApiKey(ctx, request.params.project_id, request.params.id);
    return OK;
  });
}

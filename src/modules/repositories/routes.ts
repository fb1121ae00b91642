// Image repositories: create, list, fetch, update, delete, and registry tokens for one repository.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import type { AuthRequirement } from '../../platform/http/auth.ts';
import type { Role } from '../../platform/http/roles.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';
import type { RepositoryRow } from './store.ts';

const tags = ['Repositories'];
const repositories = '/accounts/projects/:project_id/repositories';
/** A route's project role, and its action on the repository its path names (`repository.<action>`). */
const on = (permission: Role, action: string): { auth: AuthRequirement } => ({ auth: { permission, resource: { type: service.REPOSITORY_RESOURCE, param: 'repository_id', action } } });

export function repositoryRoutes(app: Api, ctx: AppContext): void {
  app.post(repositories, {
    config: { auth: { permission: 'repository_creator' } },
    schema: { tags, summary: 'Create an image repository', params: ProjectParams, body: schema.RepositoryInput, response: { 201: schema.Repository } },
  }, async (request, reply) => reply.status(201).send(service.repositoryView(await service.createRepository(ctx, request.params.project_id, request.body))));

  app.get(repositories, {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'List image repositories', params: ProjectParams, querystring: schema.RepositoryListQuery,
      response: { 200: schema.RepositoryList }, description: 'The repositories the caller may see (`repository.see`): every one with `repository_inventory`, else those a role on their policy reaches. `filter` matches the name.',
    },
  }, async (request) => service.listRepositories(ctx, ctx.authority.actorOf(request), pageOf(request.query)));

  app.get(`${repositories}/:repository_id`, {
    config: on('member', 'see'),
    schema: { tags, summary: 'Fetch an image repository', params: schema.RepositoryParams, response: { 200: schema.Repository } },
  }, async (request) => service.repositoryView(await ctx.authority.resourceOf<RepositoryRow>(request)));

  app.put(`${repositories}/:repository_id`, {
    config: on('repository_manager', 'update'),
    schema: {
      tags, summary: 'Update an image repository (the id stays)', params: schema.RepositoryParams, body: schema.RepositoryInput,
      response: { 200: schema.Repository }, description: 'Replaces name, description and annotations.',
    },
  }, async (request) => service.repositoryView(await service.updateRepository(ctx, request.params.project_id, request.params.repository_id, request.body)));

  app.delete(`${repositories}/:repository_id`, {
    config: on('repository_manager', 'delete'),
    schema: { tags, summary: 'Delete an image repository', params: schema.RepositoryParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteRepository(ctx, request.params.project_id, request.params.repository_id);
    return OK;
  });

  app.post(`${repositories}/:repository_id/token`, {
    config: on('member', 'pull'),
    schema: {
      tags, summary: 'A registry token for this one repository', params: schema.RepositoryParams, body: schema.TokenRequest,
      response: { 200: schema.RepositoryToken },
      description: 'A Docker registry token-authentication JWT (issuer: the public URL; audience: `ATRIUM_REGISTRY_SERVICE`; `access`: this repository with the actions asked for). '
        + 'Every action asked for is one the caller may take on the repository (`repository.pull`, `repository.push`), or the request is refused (403); see docs/repositories.md.',
    },
  }, async (request) => service.issueRepositoryToken(ctx, ctx.authority.actorOf(request), await ctx.authority.resourceOf<RepositoryRow>(request), request.body ?? {}));
}

// Projects, their settings, status, the caller's role, and project users.
import { pageOf } from '../../platform/http/lists.ts';
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { JsonObject, Ok, OK, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import { callerOf, accessOf } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const MemberParams = Type.Object({ project_id: Uuid, user_id: Uuid });
const tags = ['Projects'];

export function projectRoutes(app: Api, ctx: AppContext): void {
  app.post('/accounts/projects', {
    config: { auth: { permission: 'authenticated', credentials: ['user'] } },
    schema: { tags, summary: 'Create a project; the caller becomes its admin', body: schema.ProjectCreate, response: { 201: schema.Project } },
  }, async (request, reply) => {
    const project = await service.createProject(ctx.db, callerOf(request).userId!, request.body.name, request.body.settings ?? {});
    return reply.status(201).send(service.projectView(project));
  });

  app.get('/accounts/projects', {
    config: { auth: { permission: 'authenticated', credentials: ['api_key', 'user'] } },
    schema: { tags, summary: 'List the projects the caller can access', response: { 200: schema.ProjectList } },
  }, async (request) => ({ projects: (await service.listProjects(ctx, callerOf(request))).map(service.projectView) }));

  app.get('/accounts/roles', {
    config: { auth: { permission: 'authenticated', credentials: ['api_key', 'user'] } },
    schema: { tags, summary: 'Every project role, what it allows and the part of the project it is about (for role pickers)', response: { 200: schema.RoleCatalogue } },
  }, () => ({ roles: service.roleCatalogue() }));

  app.get('/accounts/projects/:project_id', {
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'Fetch a project', params: ProjectParams, response: { 200: schema.Project } },
  }, async (request) => service.projectView(await service.getProject(ctx.db, request.params.project_id)));

  app.put('/accounts/projects/:project_id/settings', {
    config: { auth: { permission: 'admin' } },
    schema: { tags, summary: 'Replace the project settings', params: ProjectParams, body: JsonObject('The new settings document'), response: { 200: schema.Project } },
  }, async (request) => {
    return service.projectView(await service.replaceSettings(ctx.db, request.params.project_id, request.body));
  });

  app.put('/accounts/projects/:project_id/sign-in-policy', {
    config: { auth: { permission: 'admin' } },
    schema: {
      tags, summary: 'Require (or stop requiring) a second factor of the project\'s admins',
      description: 'While on, a member with the admin role who has no second factor cannot act as an admin (`second_factor_required`). A user turning it on must have a second factor already.',
      params: ProjectParams, body: schema.SigninPolicy, response: { 200: schema.Project },
    },
  }, async (request) => service.projectView(await service.setSigninPolicy(ctx, request.principal!, request.params.project_id, request.body.admins_need_second_factor)));

  app.get('/accounts/projects/:project_id/status', {
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'Whether the project is enabled', params: ProjectParams, response: { 200: schema.ProjectStatus } },
  }, async (request) => ({ enabled: (await service.getProject(ctx.db, request.params.project_id)).enabled }));

  app.get('/accounts/projects/:project_id/role', {
    config: { auth: { permission: 'member', credentials: ['api_key', 'user', 'oauth'], oauthScope: 'profile:read' } },
    schema: { tags, summary: "The caller's role in the project", params: ProjectParams, response: { 200: schema.ProjectRoleInfo } },
  }, async (request) => service.roleInfo(accessOf(request).roles));

  app.post('/accounts/projects/:project_id/users', {
    config: { auth: { permission: 'admin' } },
    schema: {
      tags: ['Project users'],
      summary: 'Add a user to the project by user_id or email (roles, or the legacy flags); an email without an account is invited',
      params: ProjectParams, body: schema.MemberAdd, response: { 200: schema.MemberAddResult },
    },
  }, async (request) => ({ ok: true, ...(await service.addMember(ctx, request.params.project_id, request.body, request.principal?.userId)) }));

  app.get('/accounts/projects/:project_id/users', {
    config: { auth: { permission: 'developer' } },
    schema: { tags: ['Project users'], summary: 'List project users', params: ProjectParams, querystring: schema.MemberListQuery, response: { 200: schema.MemberList } },
  }, async (request) => {
    return service.listMembers(ctx.db, request.params.project_id, pageOf(request.query));
  });

  app.put('/accounts/projects/:project_id/users/:user_id', {
    config: { auth: { permission: 'admin' } },
    schema: { tags: ['Project users'], summary: "Change a project user's roles", params: MemberParams, body: schema.MemberUpdate, response: { 200: Ok } },
  }, async (request) => {
    await service.updateMember(ctx, request.params.project_id, request.params.user_id, request.body);
    return OK;
  });

  app.delete('/accounts/projects/:project_id/users/:user_id', {
    config: { auth: { permission: 'admin' } },
    schema: { tags: ['Project users'], summary: 'Remove a user from the project', params: MemberParams, response: { 200: Ok } },
  }, async (request) => {
    await service.removeMember(ctx, request.params.project_id, request.params.user_id);
    return OK;
  });
}

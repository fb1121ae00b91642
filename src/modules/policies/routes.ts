// Resource policies at their own paths (/policies/resources/{type}/{id}: POST grants, DELETE revokes,
// GET lists) and at the SDKs' (/iam/{type}/{id}/policy, policy:grant, policy:revoke), over one store;
// and what the caller may do on one resource (/rights/{type}/{id}), which the console's buttons read.
// The routes ask for `member`; the resource step then decides the type's `read_policy`,
// `change_policy` or `see` (src/platform/http/authority.ts).
import type { FastifyRequest } from 'fastify';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { accessOf, callerOf, type AuthRequirement } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Resource policies'];
const spec = '/accounts/projects/:project_id/policies/resources/:resource_type/:resource_id';
const iam = '/accounts/projects/:project_id/iam/:resource_type/:resource_id/policy';
const on = (action: string): { auth: AuthRequirement } => ({ auth: { permission: 'member', resource: { type: { param: 'resource_type' }, param: 'resource_id', action } } });
const needs = (what: string) => ` Needs the resource type's ${what} role in the project (docs/permissions.md, "Resource actions").`;

export function policyRoutes(app: Api, ctx: AppContext): void {
  /** The type and the resource the route's step decided on. */
  const target = async (request: FastifyRequest) => ({ type: ctx.authority.typeOf(request), resource: await ctx.authority.resourceOf(request) });

  const grant = {
    config: on('change_policy'),
    schema: {
      tags, summary: 'Grant roles on a resource to a subject', params: schema.PolicyParams, body: schema.GrantBody, response: { 200: schema.RoleGrant },
      description: `Adds the roles to the subject's direct binding and answers with all its roles on the resource.${needs('manage')}`,
    },
  };
  const revoke = {
    config: on('change_policy'),
    schema: {
      tags, summary: "Revoke a subject's roles on a resource", params: schema.PolicyParams, body: schema.RevokeBody, response: { 200: schema.RoleGrant },
      description: `Removes the roles named (all of them when \`roles\` is absent) and answers with what is left.${needs('manage')}`,
    },
  };
  const list = {
    config: on('read_policy'),
    schema: {
      tags, summary: 'List the direct bindings of a resource', params: schema.PolicyParams, querystring: schema.PolicyQuery, response: { 200: schema.Policy },
      description: `Ordered by subject; pass \`continuation_token\` from one page to get the next.${needs('read')}`,
    },
  };

  app.post(spec, grant, async (request) => {
    const { type, resource } = await target(request);
    return service.grant(ctx, callerOf(request), accessOf(request), type, resource, request.body);
  });
  app.delete(spec, revoke, async (request) => {
    const { type, resource } = await target(request);
    return service.revoke(ctx, callerOf(request), accessOf(request), type, resource, request.body);
  });
  app.get(spec, list, async (request) => {
    const { type, resource } = await target(request);
    return service.listGrants(ctx, accessOf(request), type, resource, request.query);
  });

  app.get(iam, list, async (request) => {
    const { type, resource } = await target(request);
    return service.listGrants(ctx, accessOf(request), type, resource, request.query);
  });
  // `::` is a literal colon in the router's path syntax: these are …/policy:grant and …/policy:revoke.
  app.post(`${iam}::grant`, grant, async (request) => {
    const { type, resource } = await target(request);
    return service.grant(ctx, callerOf(request), accessOf(request), type, resource, request.body);
  });
  app.post(`${iam}::revoke`, revoke, async (request) => {
    const { type, resource } = await target(request);
    return service.revoke(ctx, callerOf(request), accessOf(request), type, resource, request.body);
  });

  app.get('/accounts/projects/:project_id/rights/:resource_type/:resource_id', {
    config: on('see'),
    schema: {
      tags: ['Rights'], summary: 'What the caller may do on one resource', params: schema.PolicyParams, response: { 200: schema.Rights },
      description: 'The actions of the resource type (docs/permissions.md, "Resource actions") that the caller may take on this resource, by its project roles, '
        + 'its roles on the resource\'s policy, the resource\'s own settings or its credential\'s grants: the same answer every route gives. 404 for a resource the caller cannot see.',
    },
  }, async (request) => {
    const { type, resource } = await target(request);
    const rights = await ctx.authority.rights(ctx.authority.actorOf(request), type, resource);
    return { resource: { type: type.type, id: resource.id, name: resource.name }, rights };
  });
}

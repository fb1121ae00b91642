// Resource policies at their own paths (/policies/resources/{type}/{id}: POST grants, DELETE revokes,
// GET lists) and at the SDKs' (/iam/{type}/{id}/policy, policy:grant, policy:revoke), over one store.
// The project role each needs depends on the resource type (its readRole / manageRole), so the
// routes ask for `member` and the service checks the rest.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { accessOf, callerOf } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Resource policies'];
const spec = '/accounts/projects/:project_id/policies/resources/:resource_type/:resource_id';
const iam = '/accounts/projects/:project_id/iam/:resource_type/:resource_id/policy';
const member = { auth: { permission: 'member' as const } };
const needs = (what: string) => ` Needs the resource type's ${what} role in the project (docs/permissions.md, "Resource policies").`;

export function policyRoutes(app: Api, ctx: AppContext): void {
  const grant = {
    config: member,
    schema: {
      tags, summary: 'Grant roles on a resource to a subject', params: schema.PolicyParams, body: schema.GrantBody, response: { 200: schema.RoleGrant },
      description: `Adds the roles to the subject's direct binding and answers with all its roles on the resource.${needs('manage')}`,
    },
  };
  const revoke = {
    config: member,
    schema: {
      tags, summary: "Revoke a subject's roles on a resource", params: schema.PolicyParams, body: schema.RevokeBody, response: { 200: schema.RoleGrant },
      description: `Removes the roles named (all of them when \`roles\` is absent) and answers with what is left.${needs('manage')}`,
    },
  };
  const list = {
    config: member,
    schema: {
      tags, summary: 'List the direct bindings of a resource', params: schema.PolicyParams, querystring: schema.PolicyQuery, response: { 200: schema.Policy },
      description: `Ordered by subject; pass \`continuation_token\` from one page to get the next.${needs('read')}`,
    },
  };

  app.post(spec, grant, async (request) => service.grant(ctx, callerOf(request), accessOf(request), request.params.resource_type, request.params.resource_id, request.body));
  app.delete(spec, revoke, async (request) => service.revoke(ctx, callerOf(request), accessOf(request), request.params.resource_type, request.params.resource_id, request.body));
  app.get(spec, list, async (request) => service.listGrants(ctx, accessOf(request), request.params.resource_type, request.params.resource_id, request.query));

  app.get(iam, list, async (request) => service.listGrants(ctx, accessOf(request), request.params.resource_type, request.params.resource_id, request.query));
  // `::` is a literal colon in the router's path syntax: these are …/policy:grant and …/policy:revoke.
  app.post(`${iam}::grant`, grant, async (request) => service.grant(ctx, callerOf(request), accessOf(request), request.params.resource_type, request.params.resource_id, request.body));
  app.post(`${iam}::revoke`, revoke, async (request) => service.revoke(ctx, callerOf(request), accessOf(request), request.params.resource_type, request.params.resource_id, request.body));
}

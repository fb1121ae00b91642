// Managed agents: create, list, fetch by name, update and delete by id, connect.
import { Type } from 'typebox';
import { pageOf } from '../../platform/http/lists.ts';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { EmptyBody, Ok, OK, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import type { AuthRequirement } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';
import type { AgentRow } from './store.ts';

const ByName = Type.Object({ project_id: Uuid, agent_name: schema.AgentName });
const ById = Type.Object({ project_id: Uuid, agent_id: Uuid });
const tags = ['Managed agents'];
/** A route's action on the agent its path names (`agent.<action>`). */
const byName = (action: string): { auth: AuthRequirement } => ({ auth: { permission: 'member', resource: { type: service.AGENT_RESOURCE, param: 'agent_name', by: 'name', action } } });
const byId = (action: string): { auth: AuthRequirement } => ({ auth: { permission: 'developer', resource: { type: service.AGENT_RESOURCE, param: 'agent_id', action } } });

export function agentRoutes(app: Api, ctx: AppContext): void {
  app.post('/accounts/projects/:project_id/agents', {
    config: { auth: { permission: 'agent_creator' } },
    schema: { tags, summary: 'Create a managed agent', params: ProjectParams, body: schema.AgentCreate, response: { 201: schema.Agent, 200: schema.Agent } },
  }, async (request, reply) => {
    const { agent, created } = await service.createAgent(ctx, request.params.project_id, request.body);
    return reply.status(created ? 201 : 200).send(service.agentView(agent));
  });

  app.get('/accounts/projects/:project_id/agents', {
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'List managed agents by name (count/offset, filter on the name)', params: ProjectParams, querystring: schema.AgentListQuery, response: { 200: schema.AgentList } },
  }, async (request) => service.listAgents(ctx, request.params.project_id, pageOf(request.query)));

  app.get('/accounts/projects/:project_id/agents/:agent_name', {
    config: byName('see'),
    schema: { tags, summary: 'Fetch a managed agent by name', params: ByName, response: { 200: schema.Agent } },
  }, async (request) => service.agentView(await ctx.authority.resourceOf<AgentRow>(request)));

  app.put('/accounts/projects/:project_id/agents/:agent_id', {
    config: byId('update'),
    schema: { tags, summary: "Update a managed agent's configuration", params: ById, body: schema.AgentUpdate, response: { 200: schema.Agent } },
  }, async (request) => service.agentView(await service.updateAgent(ctx, request.params.project_id, request.params.agent_id, request.body)));

  app.delete('/accounts/projects/:project_id/agents/:agent_id', {
    config: byId('delete'),
    schema: { tags, summary: 'Delete a managed agent', params: ById, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteAgent(ctx, request.params.project_id, request.params.agent_id);
    return OK;
  });

  app.post('/accounts/projects/:project_id/agents/:agent_name/connect', {
    config: { ...byName('connect'), audit: false },
    schema: {
      tags, summary: 'Connection info for a managed agent', params: ByName, body: EmptyBody, response: { 200: schema.AgentConnection },
      description: 'The token\'s `api` grant: everything for developers, the SDK\'s agent defaults for other members; `llm` only for holders of `llm_proxy_user`.',
    },
  }, async (request) => service.connectAgent(ctx, ctx.authority.actorOf(request), await ctx.authority.resourceOf<AgentRow>(request)));
}

// Rules for managed agents: the name comes from the configuration and is unique in the project.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, conflict, notFound } from '../../platform/http/errors.ts';
import { issueParticipantToken } from '../participant-tokens/service.ts';
import type { Page } from '../../platform/http/lists.ts';
import * as store from './store.ts';

/** The resource type of managed agents: who may do what with one is declared with it, in the module's descriptor. */
export const AGENT_RESOURCE = 'agent';

export function agentView(agent: store.AgentRow) {
  return { id: agent.id, name: agent.name, configuration: agent.configuration, permissions: agent.permissions, created_at: agent.createdAt.toISOString(), updated_at: agent.updatedAt.toISOString() };
}

type Configuration = Record<string, unknown> & { name?: string | undefined; metadata?: { name?: string | undefined } & Record<string, unknown> | undefined };

/** Normalises the spec: the legacy top-level name moves to metadata.name, trimmed and lower-cased. */
function normalise(configuration: Configuration): { name: string; configuration: Record<string, unknown> } {
  const { name: legacyName, ...rest } = configuration;
  const name = (configuration.metadata?.name ?? legacyName ?? '').trim().toLowerCase();
  if (!name) throw badRequest('configuration.metadata.name is required');
  if (name.includes('/')) throw badRequest('configuration.metadata.name may not contain "/"');
  return { name, configuration: { version: 'v1', kind: 'ManagedAgent', ...rest, metadata: { ...rest.metadata, name } } };
}

export async function createAgent(ctx: AppContext, projectId: string, input: { configuration: Configuration; if_not_exists?: boolean | undefined; permissions?: unknown }) {
  const { name, configuration } = normalise(input.configuration);
  const permissions = input.permissions && !Array.isArray(input.permissions) ? input.permissions as Record<string, unknown> : {};
  const inserted = await store.insertAgent(ctx.db, { id: randomUUID(), projectId, name, configuration, permissions });
  if (inserted) return { agent: inserted, created: true };
  if (!input.if_not_exists) throw conflict(`An agent named ${JSON.stringify(name)} already exists`, 'already_exists');
  const existing = await store.findAgentByName(ctx.db, projectId, name);
  if (!existing) throw conflict('The agent was deleted while being created; retry', 'concurrent_change');
  return { agent: existing, created: false };
}

/** The agent of that name, if the project has one (for agents named in a body, where a missing one is the request's fault). */
export function findAgent(ctx: AppContext, projectId: string, name: string): Promise<store.AgentRow | undefined> {
  return findAgentByName(ctx.db, projectId, name);
}

/** An agent by name (names are kept trimmed and lower-cased), for routes and grants that name one. */
export function findAgentByName(db: Db, projectId: string, name: string): Promise<store.AgentRow | undefined> {
  return store.findAgentByName(db, projectId, name.trim().toLowerCase());
}

/** An agent by id (any text may arrive as an id). */
export async function findAgentById(db: Db, projectId: string, id: string): Promise<store.AgentRow | undefined> {
  return isUuid(id) ? store.findAgentById(db, projectId, id) : undefined;
}

export async function listAgents(ctx: AppContext, projectId: string, page: Page) {
  const { items, total } = await store.listAgents(ctx.db, projectId, page);
  return { agents: items.map(agentView), total };
}

export async function getAgent(ctx: AppContext, projectId: string, name: string): Promise<store.AgentRow> {
  const agent = await findAgent(ctx, projectId, name);
  if (!agent) throw notFound('Agent');
  return agent;
}

export async function updateAgent(ctx: AppContext, projectId: string, agentId: string, input: { configuration: Configuration }) {
  const { name, configuration } = normalise(input.configuration);
  const clash = await store.findAgentByName(ctx.db, projectId, name);
  if (clash && clash.id !== agentId) throw conflict(`An agent named ${JSON.stringify(name)} already exists`, 'already_exists');
  const agent = await store.updateAgent(ctx.db, projectId, agentId, { name, configuration });
  if (!agent) throw notFound('Agent');
  return agent;
}

export async function deleteAgent(ctx: AppContext, projectId: string, agentId: string): Promise<void> {
  if (!(await store.deleteAgent(ctx.db, projectId, agentId))) throw notFound('Agent');
}

/** Connection info for an agent: a participant token with what the caller may use with it (the agent type's token table). */
export async function connectAgent(ctx: AppContext, actor: Actor, agent: store.AgentRow) {
  const { projectId } = actor.access;
  const scope = await ctx.authority.tokenScope(actor, ctx.authority.type(AGENT_RESOURCE)!, agent);
  const jwt = issueParticipantToken(ctx, {
    projectId,
    name: actor.principal.name,
    grants: [{ name: 'agent', scope: agent.name }, { name: 'role', scope: 'user' }, { name: 'api', scope: scope ?? {} }],
  });
  return { jwt, agent_name: agent.name, project_id: projectId, agent_url: `${ctx.config.publicUrl}/agents/${projectId}/${encodeURIComponent(agent.name)}/messages` };
}

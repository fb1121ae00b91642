// Managed agents of a project.
import type { Module } from '../../module.ts';
import { resourceType } from '../../platform/http/authority.ts';
import { FULL_SCOPE, USER_SCOPE } from '../participant-tokens/service.ts';
import { agentRoutes } from './routes.ts';
import { AGENT_RESOURCE, findAgentById, findAgentByName } from './service.ts';
import type { AgentRow } from './store.ts';

/** Who may do what with one managed agent, and what its connect token carries. */
const agent = resourceType<AgentRow>({
  type: AGENT_RESOURCE,
  label: 'Agent',
  actions: {
    see: { description: 'find it (GET, lists)', roles: ['member'] },
    connect: { description: 'connect: a participant token for the agent', roles: ['member'] },
    update: { description: 'change its configuration', roles: ['developer'] },
    delete: { description: 'delete it', roles: ['developer'] },
  },
  find: { id: findAgentById, name: findAgentByName },
  withoutPolicy: "Managed agents do not support resource policies; agent access uses the service account's run_as configuration",
  grants: {
    agent: { description: '`{"name": "agent", "scope": "<agent name>"}`', actions: ['connect'], names: (row) => [row.name], by: 'name' },
  },
  // Members get the SDK's ApiScope.agentDefault() (`llm` for LLM proxy users alone).
  token: { grant: 'api', roles: [['developer', FULL_SCOPE], ['member', { ...USER_SCOPE, llm: {} }]], policy: [] },
});

export const agentsModule: Module = {
  name: 'agents',
  routes: agentRoutes,
  resources: [agent],
};

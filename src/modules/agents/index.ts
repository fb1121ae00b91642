// Managed agents of a project.
import { fixtureSuffix, type Module } from '../../module.ts';
import { agentRoutes } from './routes.ts';

export const agentsModule: Module = {
  name: 'agents',
  routes: agentRoutes,
  fixtures: [{
    provides: ['agent_name', 'agent_id'],
    async create(client) {
      const name = `agent-${fixtureSuffix()}`;
      const agent = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/agents`, { json: { configuration: { metadata: { name } } } });
      return { agent_name: name, agent_id: agent.id };
    },
  }],
};

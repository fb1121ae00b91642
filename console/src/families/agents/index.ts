import { lazyPage, type Family } from '../family.ts';

export const agents: Family = {
  id: 'agents',
  label: 'Managed agents',
  path: 'agents',
  needs: 'member',
  routes: [
    lazyPage('agents', () => import('./AgentList.tsx')),
    lazyPage('agents/:agentName', () => import('./AgentDetail.tsx')),
  ],
};

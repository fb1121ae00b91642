// Managed agents of a project.
import type { Module } from '../../module.ts';
import { agentRoutes } from './routes.ts';

export const agentsModule: Module = {
  name: 'agents',
  routes: agentRoutes,
};

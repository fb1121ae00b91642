// Image repositories of a project and registry tokens for them.
import type { Module } from '../../module.ts';
import { repositoryRoutes } from './routes.ts';
import { findRepositoryById, REPOSITORY_RESOURCE, REPOSITORY_ROLE_ACTIONS } from './service.ts';

export const repositoriesModule: Module = {
  name: 'repositories',
  routes: repositoryRoutes,
  policyResources: [{
    type: REPOSITORY_RESOURCE,
    roles: Object.fromEntries(REPOSITORY_ROLE_ACTIONS.map(([role, actions]) => [
      role, actions.length > 0 ? `registry tokens with ${actions.map((a) => `\`${a}\``).join(', ')}` : 'find the repository; no token',
    ])),
    readRole: 'repository_inventory',
    manageRole: 'repository_manager',
    find: async (db, projectId, id) => findRepositoryById(db, projectId, id),
  }],
};

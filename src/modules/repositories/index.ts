// Image repositories of a project and registry tokens for them.
import type { Module } from '../../module.ts';
import { resourceType } from '../../platform/http/authority.ts';
import { repositoryRoutes } from './routes.ts';
import { findRepositoryById, REPOSITORY_RESOURCE } from './service.ts';
import type { RepositoryRow } from './store.ts';

/** Who may do what with one repository, and which actions a registry token for it may carry. */
const repository = resourceType<RepositoryRow>({
  type: REPOSITORY_RESOURCE,
  label: 'Repository',
  actions: {
    see: { description: 'find it', roles: ['repository_inventory'] },
    pull: { description: 'registry tokens with `pull`', roles: ['repository_inventory'] },
    push: { description: 'registry tokens with `push`', roles: ['repository_manager'] },
    update: { description: 'rename it, change its description and annotations', roles: ['repository_manager'] },
    delete: { description: 'delete it', roles: ['repository_manager'] },
  },
  find: { id: findRepositoryById },
  policy: {
    readRole: 'repository_inventory',
    manageRole: 'repository_manager',
    roles: {
      admin: ['see', 'pull', 'push'],
      developer: ['see', 'pull', 'push'],
      operator: ['see', 'pull'],
      viewer: ['see', 'pull'],
      list: ['see'],
    },
  },
});

export const repositoriesModule: Module = {
  name: 'repositories',
  routes: repositoryRoutes,
  resources: [repository],
};

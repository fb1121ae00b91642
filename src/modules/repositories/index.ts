// Image repositories of a project and registry tokens for them.
import { fixtureSuffix, type Module } from '../../platform/http/module.ts';
import { repositoryRoutes } from './routes.ts';

export const repositoriesModule: Module = {
  name: 'repositories',
  routes: repositoryRoutes,
  fixtures: [{
    provides: ['repository_id'],
    async create(client) {
      const repository = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/repositories`, { json: { name: `fixture/repo-${fixtureSuffix()}` } });
      return { repository_id: repository.id };
    },
  }],
};

import { lazyPage, type Family } from '../family.ts';

export const repositories: Family = {
  id: 'repositories',
  label: 'Image repositories',
  path: 'repositories',
  needs: 'repository_inventory',
  routes: [
    lazyPage('repositories', () => import('./RepositoryList.tsx')),
    lazyPage('repositories/:repositoryId', () => import('./RepositoryDetail.tsx')),
  ],
};

import { lazyPage, type Family } from '../family.ts';

export const project: Family = {
  id: 'project',
  label: 'Project',
  path: '',
  needs: 'member',
  routes: [lazyPage(undefined, () => import('./ProjectPage.tsx'))],
};

import { lazyPage, type Family } from '../family.ts';

export const storage: Family = {
  id: 'storage',
  label: 'Storage',
  path: 'storage',
  needs: 'member',
  routes: [lazyPage('storage', () => import('./StoragePage.tsx'))],
};

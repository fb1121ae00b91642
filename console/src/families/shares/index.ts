import { lazyPage, type Family } from '../family.ts';

export const shares: Family = {
  id: 'shares',
  label: 'Shares',
  path: 'shares',
  needs: 'share_inventory',
  routes: [lazyPage('shares', () => import('./ShareList.tsx'))],
};

import { lazyPage, type Family } from '../family.ts';

export const apiKeys: Family = {
  id: 'api-keys',
  label: 'API keys',
  path: 'api-keys',
  needs: 'admin',
  routes: [lazyPage('api-keys', () => import('./ApiKeyList.tsx'))],
};

import { lazyPage, type Family } from '../family.ts';

export const secrets: Family = {
  id: 'secrets',
  label: 'Secrets',
  path: 'secrets',
  needs: 'secret_inventory',
  routes: [
    lazyPage('secrets', () => import('./SecretList.tsx')),
    lazyPage('secrets/:secretId', () => import('./SecretDetail.tsx')),
    lazyPage('rooms/:roomName/secrets', () => import('./SecretList.tsx')),
    lazyPage('rooms/:roomName/secrets/:secretId', () => import('./SecretDetail.tsx')),
  ],
};

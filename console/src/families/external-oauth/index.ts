import { lazyPage, type Family } from '../family.ts';

export const externalOAuth: Family = {
  id: 'external-oauth',
  label: 'External OAuth',
  path: 'external-oauth',
  needs: 'external_oauth_inventory',
  routes: [
    lazyPage('external-oauth', () => import('./RegistrationList.tsx')),
    lazyPage('rooms/:roomName/external-oauth', () => import('./RegistrationList.tsx')),
  ],
};

import { lazyPage, type Family } from '../family.ts';

export const oauthClients: Family = {
  id: 'oauth-clients',
  label: 'OAuth clients',
  path: 'oauth-clients',
  needs: 'oauth_client_inventory',
  routes: [
    lazyPage('oauth-clients', () => import('./ClientList.tsx')),
    lazyPage('oauth-clients/:clientId', () => import('./ClientDetail.tsx')),
  ],
};

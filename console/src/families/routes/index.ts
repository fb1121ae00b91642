import { lazyPage, type Family } from '../family.ts';

export const routes: Family = {
  id: 'routes',
  label: 'Routes',
  path: 'routes',
  needs: 'route_inventory',
  routes: [
    lazyPage('routes', () => import('./RouteList.tsx')),
    lazyPage('routes/:domain', () => import('./RouteDetail.tsx')),
  ],
};

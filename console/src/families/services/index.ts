import { lazyPage, type Family } from '../family.ts';

export const services: Family = {
  id: 'services',
  label: 'Services',
  path: 'services',
  needs: 'service_inventory',
  routes: [
    lazyPage('services', () => import('./ServiceList.tsx')),
    lazyPage('services/:serviceId', () => import('./ServiceDetail.tsx')),
    lazyPage('rooms/:roomName/services', () => import('./ServiceList.tsx')),
    lazyPage('rooms/:roomName/services/:serviceId', () => import('./ServiceDetail.tsx')),
  ],
};

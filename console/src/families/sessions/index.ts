import { lazyPage, type Family } from '../family.ts';

export const sessions: Family = {
  id: 'sessions',
  label: 'Sessions',
  path: 'sessions',
  needs: 'session_inventory',
  routes: [
    lazyPage('sessions', () => import('./SessionList.tsx')),
    lazyPage('sessions/:sessionId', () => import('./SessionDetail.tsx')),
  ],
};

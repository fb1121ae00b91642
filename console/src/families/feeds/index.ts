import { lazyPage, type Family } from '../family.ts';

export const feeds: Family = {
  id: 'feeds',
  label: 'Feeds',
  path: 'feeds',
  needs: 'member',
  routes: [
    lazyPage('feeds', () => import('./FeedList.tsx')),
    lazyPage('feeds/:feedId', () => import('./FeedDetail.tsx')),
    lazyPage('feeds/:feedId/policy', () => import('./FeedPolicy.tsx')),
  ],
};

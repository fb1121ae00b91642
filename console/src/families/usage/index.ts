import { lazyPage, type Family } from '../family.ts';

export const usage: Family = {
  id: 'usage',
  label: 'Usage',
  path: 'usage',
  needs: 'usage_reporter',
  // The charts load with the page, never with the first page.
  routes: [lazyPage('usage', () => import('./UsagePage.tsx'))],
};

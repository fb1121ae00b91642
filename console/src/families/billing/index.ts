import { lazyPage, type Family } from '../family.ts';

export const billing: Family = {
  id: 'billing',
  label: 'Billing',
  path: 'billing',
  // The page is the ledger's: its transactions route needs usage_reporter (the balance alone, member).
  needs: 'usage_reporter',
  routes: [lazyPage('billing', () => import('./BillingPage.tsx'))],
};

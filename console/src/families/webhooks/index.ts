import { lazyPage, type Family } from '../family.ts';

export const webhooks: Family = {
  id: 'webhooks',
  label: 'Webhooks',
  path: 'webhooks',
  needs: 'developer',
  routes: [
    lazyPage('webhooks', () => import('./WebhookList.tsx')),
    lazyPage('webhooks/:webhookId', () => import('./WebhookDetail.tsx')),
  ],
};

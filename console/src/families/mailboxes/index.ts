import { lazyPage, type Family } from '../family.ts';

export const mailboxes: Family = {
  id: 'mailboxes',
  label: 'Mailboxes',
  path: 'mailboxes',
  needs: 'mailbox_inventory',
  routes: [
    lazyPage('mailboxes', () => import('./MailboxList.tsx')),
    lazyPage('mailboxes/:address', () => import('./MailboxDetail.tsx')),
  ],
};

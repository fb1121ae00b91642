import { lazyPage, type Family } from '../family.ts';

export const members: Family = {
  id: 'members',
  label: 'Members',
  path: 'members',
  needs: 'developer',
  routes: [lazyPage('members', () => import('./MemberList.tsx'))],
};

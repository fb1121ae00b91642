import { lazyPage, type Family } from '../family.ts';

export const rooms: Family = {
  id: 'rooms',
  label: 'Rooms',
  path: 'rooms',
  needs: 'member',
  routes: [
    lazyPage('rooms', () => import('./RoomList.tsx')),
    lazyPage('rooms/:roomName', () => import('./RoomDetail.tsx')),
    lazyPage('rooms/:roomName/policy', () => import('./RoomPolicy.tsx')),
  ],
};

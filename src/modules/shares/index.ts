// Shares: links into one room, with their own grants and expiry.
import type { Module } from '../../module.ts';
import { shareRoutes } from './routes.ts';

export const sharesModule: Module = {
  name: 'shares',
  routes: shareRoutes,
  fixtures: [{
    provides: ['share_id'],
    needs: ['room_name'],
    async create(client, have) {
      const share = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/shares`, { json: { settings: { room: have.room_name } } });
      return { share_id: share.id };
    },
  }],
};

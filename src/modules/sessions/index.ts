// Room sessions as room servers report them, and the events their start and end emit.
import type { Module } from '../../platform/http/module.ts';
import { roomEnded, roomStarted } from './events.ts';
import { sessionRoutes } from './routes.ts';

export const sessionsModule: Module = {
  name: 'sessions',
  routes: sessionRoutes,
  events: [roomStarted, roomEnded],
  fixtures: [{
    provides: ['session_id'],
    needs: ['room_name'],
    async create(client, have) {
      const session = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/sessions`, { json: { room_name: have.room_name } });
      return { session_id: session.id };
    },
  }],
};

// Rooms of a project and connecting to them.
import { fixtureSuffix, type Module } from '../../platform/http/module.ts';
import { roomRoutes } from './routes.ts';

export const roomsModule: Module = {
  name: 'rooms',
  routes: roomRoutes,
  fixtures: [{
    provides: ['room_name', 'room_id'],
    async create(client) {
      const room = await client.request<{ id: string; name: string }>('POST', `/accounts/projects/${client.projectId}/rooms`, { json: { name: `room-${fixtureSuffix()}` } });
      return { room_name: room.name, room_id: room.id };
    },
  }],
};

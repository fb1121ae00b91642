// Rooms of a project and connecting to them.
import type { Module } from '../../module.ts';
import { resourceType } from '../../platform/http/authority.ts';
import { FULL_SCOPE, USER_SCOPE } from '../participant-tokens/service.ts';
import { roomRoutes } from './routes.ts';
import { findRoomById, findRoomByName, ROOM_RESOURCE, VIEWER_SCOPE } from './service.ts';
import type { RoomRow } from './store.ts';

/** What a room's initial `permissions` give a user, or an API key's participant defaults. */
function openScope(room: RoomRow, principal: { kind: string; userId?: string | undefined }) {
  if (principal.userId) return room.permissions[principal.userId];
  return principal.kind === 'api_key' ? USER_SCOPE : undefined;
}

/**
 * Who may do what in a room, and what its connect token carries: project admins and developers
 * everything; a role on the room's policy what its table gives (`list`: find it, not join it);
 * without one, a user the room's initial permissions for them, an API key the participant defaults.
 * A room's files (`rooms/<room>/…` of project storage) follow its access.
 */
const room = resourceType<RoomRow>({
  type: ROOM_RESOURCE,
  label: 'Room',
  actions: {
    see: { description: 'find it (GET, lists)', roles: ['member'] },
    connect: { description: 'connect: a participant token for the room', roles: ['developer'] },
    read_files: { description: 'list and download its files, `rooms/<room>/…` of project storage', roles: ['developer'] },
    update: { description: 'rename it, change its metadata', roles: ['developer'] },
    delete: { description: 'delete it', roles: ['developer'] },
  },
  find: { id: findRoomById, name: findRoomByName },
  policy: {
    readRole: 'developer',
    manageRole: 'developer',
    roles: {
      admin: ['see', 'connect', 'read_files'],
      developer: ['see', 'connect', 'read_files'],
      operator: ['see', 'connect', 'read_files'],
      viewer: ['see', 'connect', 'read_files'],
      list: ['see'],
    },
  },
  open: {
    description: 'a user named in its initial `permissions` (`read_files` when they include `storage`), and an API key with the participant defaults, when neither holds a role on its policy',
    actions: ['connect', 'read_files'],
    unlessBound: true,
    of(row, principal) {
      const scope = openScope(row, principal);
      return scope && { actions: 'storage' in scope ? ['connect', 'read_files'] : ['connect'], token: scope };
    },
  },
  grants: {
    room: { description: '`{"name": "room", "scope": "<room name>"}`', actions: ['connect'], names: (row) => [row.name], by: 'name' },
  },
  token: {
    grant: 'api',
    roles: [['developer', FULL_SCOPE]],
    policy: [
      ['admin', FULL_SCOPE],
      // The SDK's ApiScope.agentDefault({tunnels: true}).
      ['developer', { ...USER_SCOPE, llm: {}, tunnels: {} }],
      ['operator', USER_SCOPE],
      ['viewer', VIEWER_SCOPE],
    ],
  },
});

export const roomsModule: Module = {
  name: 'rooms',
  routes: roomRoutes,
  resources: [room],
};

// Rooms of a project and connecting to them.
import type { Module } from '../../module.ts';
import { roomRoutes } from './routes.ts';
import { findRoomById, ROOM_RESOURCE, ROOM_ROLE_SCOPES } from './service.ts';

/** A role's grants in words, from the table connect enforces. */
const describeScope = (scope: Record<string, unknown> | null) => (scope
  ? `connect with ${Object.entries(scope).map(([surface, value]) => (Object.keys(value as object).length > 0 ? `\`${surface}\` \`${JSON.stringify(value)}\`` : `\`${surface}\``)).join(', ')}`
  : 'find the room; no connect');

export const roomsModule: Module = {
  name: 'rooms',
  routes: roomRoutes,
  policyResources: [{
    type: ROOM_RESOURCE,
    roles: Object.fromEntries(ROOM_ROLE_SCOPES.map(([role, scope]) => [role, describeScope(scope)])),
    readRole: 'developer',
    manageRole: 'developer',
    find: async (db, projectId, id) => findRoomById(db, projectId, id),
  }],
};

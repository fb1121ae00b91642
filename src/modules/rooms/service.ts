// Rules for rooms: unique names per project, rename keeps the id, and who may connect.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Principal, ProjectAccess } from '../../platform/http/auth.ts';
import { conflict, forbidden, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { FULL_SCOPE, USER_SCOPE, issueParticipantToken } from '../participant-tokens/service.ts';
import * as store from './store.ts';

export function roomView(room: store.RoomRow) {
  return {
    id: room.id,
    name: room.name,
    metadata: room.metadata,
    annotations: room.annotations,
    permissions: room.permissions,
    created_at: room.createdAt.toISOString(),
    updated_at: room.updatedAt.toISOString(),
  };
}

export interface RoomInput {
  name: string;
  if_not_exists?: boolean | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  annotations?: Record<string, string> | null | undefined;
  permissions?: Record<string, Record<string, unknown>> | null | undefined;
}

/** Creates a room; with if_not_exists an existing room of that name is returned as is. */
export async function createRoom(ctx: AppContext, projectId: string, input: RoomInput): Promise<{ room: store.RoomRow; created: boolean }> {
  const inserted = await store.insertRoom(ctx.db, {
    id: randomUUID(),
    projectId,
    name: input.name,
    metadata: input.metadata ?? {},
    annotations: input.annotations ?? {},
    permissions: input.permissions ?? {},
  });
  if (inserted) return { room: inserted, created: true };
  if (!input.if_not_exists) throw conflict(`A room named ${JSON.stringify(input.name)} already exists`);
  const existing = await store.findRoomByName(ctx.db, projectId, input.name);
  if (!existing) throw conflict('The room was deleted while being created; retry');
  return { room: existing, created: false };
}

/** The room of that name, if the project has one (for rooms named in a body, where a missing one is the request's fault). */
export function findRoom(ctx: AppContext, projectId: string, name: string): Promise<store.RoomRow | undefined> {
  return store.findRoomByName(ctx.db, projectId, name);
}

export async function getRoom(ctx: AppContext, projectId: string, name: string): Promise<store.RoomRow> {
  const room = await findRoom(ctx, projectId, name);
  if (!room) throw notFound('Room');
  return room;
}

export async function listRooms(ctx: AppContext, projectId: string, page: Page & { orderBy: keyof typeof store.ROOM_ORDERS }) {
  const { items, total } = await store.listRooms(ctx.db, projectId, page);
  return { rooms: items.map(roomView), total };
}

export async function updateRoom(ctx: AppContext, projectId: string, roomId: string, input: { name: string; metadata?: Record<string, unknown> | null | undefined; annotations?: Record<string, string> | null | undefined }) {
  const clash = await store.findRoomByName(ctx.db, projectId, input.name);
  if (clash && clash.id !== roomId) throw conflict(`A room named ${JSON.stringify(input.name)} already exists`);
  const room = await store.updateRoom(ctx.db, projectId, roomId, {
    name: input.name,
    ...(input.metadata != null ? { metadata: input.metadata } : {}),
    ...(input.annotations != null ? { annotations: input.annotations } : {}),
  });
  if (!room) throw notFound('Room');
  return room;
}

export async function deleteRoom(ctx: AppContext, projectId: string, roomId: string): Promise<void> {
  if (!(await store.deleteRoom(ctx.db, projectId, roomId))) throw notFound('Room');
}

/**
 * The ApiScope a caller gets in a room: API keys, admins and developers get full access; other
 * project users only rooms whose initial permissions name them.
 */
export function roomScopeFor(principal: Principal, access: ProjectAccess, permissions: Record<string, Record<string, unknown>>): Record<string, unknown> {
  if (access.roles.has('admin') || access.roles.has('developer')) return FULL_SCOPE;
  const granted = principal.userId ? permissions[principal.userId] : undefined;
  if (granted) return granted;
  if (principal.kind === 'api_key') return USER_SCOPE;
  throw forbidden('You have no access to this room');
}

export function roomUrl(ctx: AppContext, roomName: string): string {
  return `${ctx.config.roomsUrl}/${encodeURIComponent(roomName)}`;
}

export async function connectRoom(ctx: AppContext, principal: Principal, access: ProjectAccess, roomName: string) {
  const room = await getRoom(ctx, access.projectId, roomName);
  const scope = roomScopeFor(principal, access, room.permissions);
  const jwt = await issueParticipantToken(ctx, {
    projectId: access.projectId,
    name: principal.name,
    grants: [{ name: 'room', scope: room.name }, { name: 'role', scope: 'user' }, { name: 'api', scope }],
  });
  return { jwt, room_name: room.name, project_id: access.projectId, room_url: roomUrl(ctx, room.name) };
}

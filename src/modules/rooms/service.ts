// Rules for rooms: unique names per project, rename keeps the id, and who may connect with what.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { Principal, ProjectAccess } from '../../platform/http/auth.ts';
import { conflict, forbidden, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { FULL_SCOPE, USER_SCOPE, issueParticipantToken } from '../participant-tokens/service.ts';
import { forgetResource, rolesOn } from '../policies/service.ts';
import * as store from './store.ts';

/** The resource type of rooms in resource policies. */
export const ROOM_RESOURCE = 'room';

/**
 * What each role of a room's policy lets its holder do: the ApiScope of the participant token that
 * connect issues, strongest role first. `list` lets a subject find the room, not join it.
 */
export const ROOM_ROLE_SCOPES: readonly (readonly [string, Record<string, unknown> | null])[] = [
  ['admin', FULL_SCOPE],
  // The SDK's ApiScope.agentDefault({tunnels: true}).
  ['developer', { ...USER_SCOPE, llm: {}, tunnels: {} }],
  ['operator', USER_SCOPE],
  // Present and watching: media, the participant list, room files and documents read-only.
  ['viewer', {
    livekit: {},
    messaging: { broadcast: false, send: false },
    storage: { paths: [{ path: '', read_only: true }] },
    sync: { paths: [{ path: '*', read_only: true }] },
  }],
  ['list', null],
];

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
  if (!input.if_not_exists) throw conflict(`A room named ${JSON.stringify(input.name)} already exists`, 'already_exists');
  const existing = await store.findRoomByName(ctx.db, projectId, input.name);
  if (!existing) throw conflict('The room was deleted while being created; retry', 'concurrent_change');
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
  if (clash && clash.id !== roomId) throw conflict(`A room named ${JSON.stringify(input.name)} already exists`, 'already_exists');
  const room = await store.updateRoom(ctx.db, projectId, roomId, {
    name: input.name,
    ...(input.metadata != null ? { metadata: input.metadata } : {}),
    ...(input.annotations != null ? { annotations: input.annotations } : {}),
  });
  if (!room) throw notFound('Room');
  return room;
}

/** A room by id, for resource policies (any text may arrive as an id there). */
export async function findRoomById(db: Db, projectId: string, roomId: string): Promise<store.RoomRow | undefined> {
  return isUuid(roomId) ? store.findRoomById(db, projectId, roomId) : undefined;
}

/** The names of the project's rooms with these ids (others are left out), in one query. */
export async function roomNames(db: Db, projectId: string, ids: readonly string[]): Promise<Map<string, string>> {
  return new Map((await store.findRoomNames(db, projectId, ids)).map((room) => [room.id, room.name]));
}

export async function deleteRoom(ctx: AppContext, projectId: string, roomId: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    if (!(await store.deleteRoom(tx, projectId, roomId))) throw notFound('Room');
    await forgetResource(tx, projectId, ROOM_RESOURCE, roomId);
  });
}

/**
 * The ApiScope a caller gets in a room. Project admins and developers: everything. Others holding
 * a role on the room's policy: what their strongest role grants (the policy decides). Else the
 * room's initial permissions for them; else, for an API key, a participant's defaults. Anyone else
 * may not join.
 */
export async function roomScopeFor(ctx: AppContext, principal: Principal, access: ProjectAccess, room: store.RoomRow): Promise<Record<string, unknown>> {
  if (access.roles.has('admin') || access.roles.has('developer')) return FULL_SCOPE;
  const held = await rolesOn(ctx, principal, access, ROOM_RESOURCE, room.id);
  const strongest = ROOM_ROLE_SCOPES.find(([role]) => held.has(role));
  if (strongest) {
    if (!strongest[1]) throw forbidden('The list role lets you find this room, not join it');
    return strongest[1];
  }
  const granted = principal.userId ? room.permissions[principal.userId] : undefined;
  if (granted) return granted;
  if (principal.kind === 'api_key') return USER_SCOPE;
  throw forbidden('You have no access to this room');
}

export function roomUrl(ctx: AppContext, roomName: string): string {
  return `${ctx.config.roomsUrl}/${encodeURIComponent(roomName)}`;
}

export async function connectRoom(ctx: AppContext, principal: Principal, access: ProjectAccess, roomName: string) {
  const room = await getRoom(ctx, access.projectId, roomName);
  const scope = await roomScopeFor(ctx, principal, access, room);
  const jwt = issueParticipantToken(ctx, {
    projectId: access.projectId,
    name: principal.name,
    grants: [{ name: 'room', scope: room.name }, { name: 'role', scope: 'user' }, { name: 'api', scope }],
  });
  return { jwt, room_name: room.name, project_id: access.projectId, room_url: roomUrl(ctx, room.name) };
}

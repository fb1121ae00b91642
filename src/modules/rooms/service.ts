// Rules for rooms: unique names per project, rename keeps the id, and connecting. Who may do what in
// a room, and with what a connect token, is declared with the room resource type in the descriptor.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { WithinRequirement } from '../../platform/http/auth.ts';
import type { Actor, Scope } from '../../platform/http/authority.ts';
import { conflict, forbidden, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { issueParticipantToken } from '../participant-tokens/service.ts';
import { forgetResource } from '../policies/service.ts';
import * as store from './store.ts';

/** The resource type of rooms: who may do what in a room is declared with it, in the module's descriptor. */
export const ROOM_RESOURCE = 'room';

/** `auth.within` of a route binding a resource to a room it acts in (a service, a secret, a mailbox…): the caller must be allowed to connect there. */
export const ACTS_IN_ROOM: WithinRequirement = { type: ROOM_RESOURCE, action: 'connect' };
/** `auth.within` of a route binding something that writes a room's files (a feed subscription). */
export const WRITES_ROOM_FILES: WithinRequirement = { type: ROOM_RESOURCE, action: 'read_files' };

/** Present and watching: media, the participant list, room files and documents read-only (a room's `viewer`). */
export const VIEWER_SCOPE = {
  livekit: {},
  messaging: { broadcast: false, send: false },
  storage: { paths: [{ path: '', read_only: true }] },
  sync: { paths: [{ path: '*', read_only: true }] },
};

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
  const id = randomUUID();
  const { room } = await ctx.audit.change(ctx.db, store.roomInsert({
    id,
    projectId,
    name: input.name,
    metadata: input.metadata ?? {},
    annotations: input.annotations ?? {},
    permissions: input.permissions ?? {},
  }), id);
  const inserted = store.roomFromJson(room);
  if (inserted) return { room: inserted, created: true };
  if (!input.if_not_exists) throw conflict(`A room named ${JSON.stringify(input.name)} already exists`, 'already_exists');
  const existing = await store.findRoomByName(ctx.db, projectId, input.name);
  if (!existing) throw conflict('The room was deleted while being created; retry', 'concurrent_change');
  return { room: existing, created: false };
}

/**
 * Refuses (403, naming what would allow it) unless the caller may itself take, in the room it binds
 * a resource to, the action its route declares (`auth.within`: a service, a secret, a scheduled
 * task, a mailbox, a route or an external OAuth registration acts in its room, `room.connect`; a
 * feed subscription writes its files, `room.read_files`), so nobody binds one to a room beyond
 * their own access to it. An API key has its participant defaults there, as when it connects.
 */
export function requireInRoom(ctx: AppContext, actor: Actor, room: store.RoomRow): Promise<void> {
  return ctx.authority.requireWithin(actor, room);
}

/** The project's room of that name (404 when there is none), in which the caller may itself act (`requireInRoom`). */
export async function getRoomToActIn(ctx: AppContext, actor: Actor, name: string): Promise<store.RoomRow> {
  const room = await getRoom(ctx, actor.access.projectId, name);
  await requireInRoom(ctx, actor, room);
  return room;
}

/** The room of that name, if the project has one (for rooms named in a body, where a missing one is the request's fault). */
export function findRoom(ctx: AppContext, projectId: string, name: string): Promise<store.RoomRow | undefined> {
  return store.findRoomByName(ctx.db, projectId, name);
}

/** A room by name, for routes and grants that name one. */
export function findRoomByName(db: Db, projectId: string, name: string): Promise<store.RoomRow | undefined> {
  return store.findRoomByName(db, projectId, name);
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
 * The ApiScope a caller may carry in a room: what connect gives it, and the most that any token it
 * mints or signs for the room may hold (the room type's token table, decided by the platform).
 */
export async function roomScopeFor(ctx: AppContext, actor: Actor, room: store.RoomRow): Promise<Scope> {
  const scope = await ctx.authority.tokenScope(actor, ctx.authority.type(ROOM_RESOURCE)!, room);
  if (!scope) throw forbidden('You have no access to this room');
  return scope;
}

export function roomUrl(ctx: AppContext, roomName: string): string {
  return `${ctx.config.roomsUrl}/${encodeURIComponent(roomName)}`;
}

/** Connection info for a room the caller may connect to (the route's step decided): a participant token and its URL. */
export async function connectRoom(ctx: AppContext, actor: Actor, room: store.RoomRow) {
  const scope = await roomScopeFor(ctx, actor, room);
  const { projectId } = actor.access;
  const jwt = issueParticipantToken(ctx, {
    projectId,
    name: actor.principal.name,
    grants: [{ name: 'room', scope: room.name }, { name: 'role', scope: 'user' }, { name: 'api', scope }],
  });
  return { jwt, room_name: room.name, project_id: projectId, room_url: roomUrl(ctx, room.name) };
}

// Rules for shares: a share lets whoever holds its token into one room with the share's grants,
// which are never more than its creator may use in that room, until it expires or is deleted.
// The token is shown once and kept as a hash; connect checks it on every call, uncached.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { AppContext } from '../../context.ts';
import { hashSecret, randomSecret, secretMatches } from '../../platform/crypto/secrets.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, forbidden, notFound, unauthorized } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { DEFAULT_TOKEN_TTL_SECONDS, FULL_SCOPE, issueParticipantToken } from '../participant-tokens/service.ts';
import { findRoomById, getRoom, roomNames, roomScopeFor, roomUrl, VIEWER_SCOPE } from '../rooms/service.ts';
import * as store from './store.ts';

const TOKEN = /^ash_[A-Za-z0-9_-]{43}$/;
const SURFACES = Object.keys(FULL_SCOPE);
/** What a share grants when its settings name no grants: the room's viewer role. */
const DEFAULT_GRANTS = VIEWER_SCOPE;

export interface SettingsInput {
  room?: string | undefined;
  grants?: Record<string, unknown> | undefined;
  expires_at?: string | null | undefined;
  [key: string]: unknown;
}

export function shareView(row: store.ShareRow, roomName: string) {
  const expiresAt = row.expiresAt ? row.expiresAt.toISOString() : null;
  return {
    id: row.id,
    project_id: row.projectId,
    settings: { ...row.settings, room: roomName, grants: row.grants, expires_at: expiresAt },
    expires_at: expiresAt,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function checkGrants(grants: Record<string, unknown>): Record<string, unknown> {
  for (const [surface, value] of Object.entries(grants)) {
    if (!SURFACES.includes(surface)) throw badRequest(`settings.grants.${surface} is not a surface of a participant token; known: ${SURFACES.join(', ')}`);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badRequest(`settings.grants.${surface} must be an object`);
  }
  return grants;
}

/**
 * The first surface of `wanted` that `held` does not cover: one it lacks, or one it holds only in a
 * narrower form. `{}` is a surface with the SDK's defaults, which are its widest; anything else
 * covers exactly itself.
 */
function uncovered(held: Record<string, unknown>, wanted: Record<string, unknown>): string | undefined {
  return Object.entries(wanted).find(([surface, value]) => {
    if (!(surface in held)) return true;
    const mine = held[surface] as Record<string, unknown>;
    return Object.keys(mine).length > 0 && !isDeepStrictEqual(mine, value);
  })?.[0];
}

/** The stored form of settings, checked against the caller's own access to the room (what connect gives it). */
async function resolveSettings(ctx: AppContext, actor: Actor, settings: SettingsInput, currentRoomId?: string) {
  const { projectId } = actor.access;
  const { room: roomName, grants: grantsInput, expires_at: expiresInput, ...kept } = settings;
  const room = roomName !== undefined ? await getRoom(ctx, projectId, roomName) : await findRoomById(ctx.db, projectId, currentRoomId!);
  if (!room) throw notFound('Room');
  const grants = checkGrants(grantsInput ?? DEFAULT_GRANTS);
  const beyond = uncovered(await roomScopeFor(ctx, actor, room), grants);
  if (beyond) throw forbidden(`A share cannot grant "${beyond}" beyond what you may use in this room yourself`);
  const expiresAt = expiresInput ? new Date(expiresInput) : null;
  if (expiresAt && expiresAt.getTime() <= Date.now()) throw badRequest('settings.expires_at must be in the future');
  return { room, fields: { roomId: room.id, grants, settings: kept, expiresAt } satisfies store.ShareFields };
}

export async function createShare(ctx: AppContext, actor: Actor, settings: SettingsInput) {
  const { room, fields } = await resolveSettings(ctx, actor, settings);
  const token = `ash_${randomSecret(32)}`;
  const row = await store.insertShare(ctx.db, { id: randomUUID(), projectId: actor.access.projectId, ...fields, tokenHash: hashSecret(token) });
  return { ...shareView(row, room.name), token };
}

export async function listShares(ctx: AppContext, projectId: string, page: Page) {
  const { items, total } = await store.listShares(ctx.db, projectId, page);
  const names = await roomNames(ctx.db, projectId, [...new Set(items.map((s) => s.roomId))]);
  return { shares: items.map((row) => shareView(row, names.get(row.roomId) ?? '')), total };
}

export async function updateShare(ctx: AppContext, actor: Actor, id: string, settings: SettingsInput) {
  const { projectId } = actor.access;
  const current = await store.findShare(ctx.db, projectId, id);
  if (!current) throw notFound('Share');
  const { room, fields } = await resolveSettings(ctx, actor, settings, current.roomId);
  const row = await store.updateShare(ctx.db, projectId, id, fields);
  if (!row) throw notFound('Share');
  return shareView(row, room.name);
}

export async function deleteShare(ctx: AppContext, projectId: string, id: string): Promise<void> {
  if (!(await store.deleteShare(ctx.db, projectId, id))) throw notFound('Share');
}

/**
 * Connection info for whoever holds the share's token: its room, and a participant token with the
 * share's grants that ends no later than the share. Every failure answers alike, so a caller learns
 * nothing about shares it holds no token for.
 */
export async function connectShare(ctx: AppContext, shareId: string, token: string | undefined) {
  const refused = () => unauthorized('The share token is invalid, expired or revoked');
  if (!token || !TOKEN.test(token)) throw refused();
  const share = await store.findShareForConnect(ctx.db, shareId);
  if (!share || !secretMatches(token, share.tokenHash)) throw refused();
  const secondsLeft = share.expiresAt ? Math.floor((share.expiresAt.getTime() - Date.now()) / 1000) : Infinity;
  if (secondsLeft <= 0) throw refused();
  const room = await findRoomById(ctx.db, share.projectId, share.roomId);
  if (!room) throw refused();
  const jwt = issueParticipantToken(ctx, {
    projectId: share.projectId,
    // Every guest a participant of its own: rooms tell participants apart by name.
    name: `share-${share.id.slice(0, 8)}-${randomSecret(6)}`,
    grants: [{ name: 'room', scope: room.name }, { name: 'role', scope: 'user' }, { name: 'api', scope: share.grants }],
    ttlSeconds: Math.min(DEFAULT_TOKEN_TTL_SECONDS, secondsLeft),
  });
  return { jwt, room_name: room.name, project_id: share.projectId, room_url: roomUrl(ctx, room.name), settings: shareView(share, room.name).settings };
}

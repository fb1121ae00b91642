// Rules for secrets: values encrypted at rest with the service key and returned only when one secret
// is fetched (never in a list, a log line or an error message); names unique among the project's
// secrets and among a room's for one identity; room secrets keyed also by `for_identity` and
// `delegated_to`.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, conflict, notFound, tooLarge } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { getRoom, getRoomToActIn } from '../rooms/service.ts';
import { MAX_SECRET_BYTES } from './schema.ts';
import * as store from './store.ts';

/** Secrets of a room without a type say so. */
const DEFAULT_TYPE = 'opaque';

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The value as canonical base64, encrypted; 400/413 without quoting it. */
function sealValue(ctx: AppContext, dataBase64: string): string {
  if (!BASE64.test(dataBase64) || dataBase64.replace(/=+$/, '').length % 4 === 1) throw badRequest('body.data_base64 must be base64');
  const bytes = Buffer.from(dataBase64, 'base64');
  if (bytes.length > MAX_SECRET_BYTES) throw tooLarge(`A secret holds at most ${MAX_SECRET_BYTES} bytes`);
  return ctx.secrets.encrypt(bytes.toString('base64'));
}

export function secretInfo(row: Pick<store.SecretRow, 'id' | 'name' | 'type' | 'forIdentity' | 'delegatedTo'>) {
  return { id: row.id, name: row.name, type: row.type, delegated_to: row.delegatedTo || null, for_identity: row.forIdentity || null };
}

function secretWithValue(ctx: AppContext, row: store.SecretRow) {
  return { ...secretInfo(row), data_base64: ctx.secrets.decrypt(row.valueEncrypted) };
}

const projectScope = (projectId: string): store.Scope => ({ projectId, roomId: null });

async function roomScope(ctx: AppContext, projectId: string, roomName: string): Promise<store.Scope> {
  return { projectId, roomId: (await getRoom(ctx, projectId, roomName)).id };
}

/** A room's scope to write a secret to or read its value from: only for a caller who may connect to it (its secrets are its participants'). */
async function roomScopeInside(ctx: AppContext, actor: Actor, projectId: string, roomName: string): Promise<store.Scope> {
  return { projectId, roomId: (await getRoomToActIn(ctx, actor, roomName)).id };
}

const keyOf = (id: string, identities: { for_identity?: string | null | undefined; delegated_to?: string | null | undefined } = {}): store.SecretKey =>
  ({ id, forIdentity: identities.for_identity ?? '', delegatedTo: identities.delegated_to ?? '' });

const describeKey = (key: store.SecretKey) =>
  `${key.forIdentity ? ` for ${JSON.stringify(key.forIdentity)}` : ''}${key.delegatedTo ? ` delegated to ${JSON.stringify(key.delegatedTo)}` : ''}`;

async function checkName(ctx: AppContext, scope: store.Scope, key: store.SecretKey, name: string): Promise<void> {
  if (await store.findNameClash(ctx.db, scope, key, name)) throw conflict(`A secret named ${JSON.stringify(name)}${describeKey(key)} already exists`, 'already_exists');
}

// Project secrets.

export interface ProjectSecretInput {
  name: string;
  type: string;
  data_base64: string;
}

export async function createProjectSecret(ctx: AppContext, projectId: string, input: ProjectSecretInput) {
  const row = await store.insertSecret(ctx.db, {
    rowId: randomUUID(), projectId, roomId: null, id: randomUUID(), name: input.name, type: input.type, valueEncrypted: sealValue(ctx, input.data_base64),
  });
  if (!row) throw conflict(`A secret named ${JSON.stringify(input.name)} already exists`, 'already_exists');
  return secretInfo(row);
}

export async function updateProjectSecret(ctx: AppContext, projectId: string, secretId: string, input: ProjectSecretInput) {
  const valueEncrypted = sealValue(ctx, input.data_base64);
  await checkName(ctx, projectScope(projectId), keyOf(secretId), input.name);
  const row = await store.updateSecret(ctx.db, projectScope(projectId), keyOf(secretId), { name: input.name, type: input.type, valueEncrypted });
  if (!row) throw notFound('Secret');
  return secretInfo(row);
}

export async function getProjectSecret(ctx: AppContext, projectId: string, secretId: string) {
  const row = await store.findSecret(ctx.db, projectScope(projectId), keyOf(secretId));
  if (!row) throw notFound('Secret');
  return secretWithValue(ctx, row);
}

export async function listProjectSecrets(ctx: AppContext, projectId: string, page: Page) {
  const { items, total } = await store.listSecrets(ctx.db, projectScope(projectId), page);
  return { secrets: items.map(secretInfo), total };
}

export async function deleteProjectSecret(ctx: AppContext, projectId: string, secretId: string): Promise<void> {
  if (!(await store.deleteSecret(ctx.db, projectScope(projectId), keyOf(secretId)))) throw notFound('Secret');
}

// Room secrets.

export interface RoomSecretInput {
  data_base64: string;
  name?: string | null | undefined;
  type?: string | null | undefined;
  for_identity?: string | null | undefined;
  delegated_to?: string | null | undefined;
}

export interface Identities {
  for_identity?: string | null | undefined;
  delegated_to?: string | null | undefined;
}

export async function createRoomSecret(ctx: AppContext, actor: Actor, projectId: string, roomName: string, input: RoomSecretInput & { secret_id?: string | null | undefined }) {
  const scope = await roomScopeInside(ctx, actor, projectId, roomName);
  const key = keyOf(input.secret_id ?? randomUUID(), input);
  const name = input.name ?? key.id;
  const row = await store.insertSecret(ctx.db, {
    rowId: randomUUID(), ...scope, ...key, name, type: input.type ?? DEFAULT_TYPE, valueEncrypted: sealValue(ctx, input.data_base64),
  });
  if (row) return secretInfo(row);
  if (await store.findSecret(ctx.db, scope, key)) throw conflict(`Secret ${JSON.stringify(key.id)}${describeKey(key)} already exists in the room; update it instead`, 'already_exists');
  throw conflict(`A secret named ${JSON.stringify(name)}${describeKey(key)} already exists in the room`, 'already_exists');
}

export async function updateRoomSecret(ctx: AppContext, actor: Actor, projectId: string, roomName: string, secretId: string, input: RoomSecretInput) {
  const scope = await roomScopeInside(ctx, actor, projectId, roomName);
  const key = keyOf(secretId, input);
  const valueEncrypted = sealValue(ctx, input.data_base64);
  const current = await store.findSecret(ctx.db, scope, key);
  if (!current) throw notFound('Secret');
  const name = input.name ?? current.name;
  await checkName(ctx, scope, key, name);
  const row = await store.updateSecret(ctx.db, scope, key, { name, type: input.type ?? current.type, valueEncrypted });
  if (!row) throw notFound('Secret');
  return secretInfo(row);
}

export async function getRoomSecret(ctx: AppContext, actor: Actor, projectId: string, roomName: string, secretId: string, identities: Identities) {
  const row = await store.findSecret(ctx.db, await roomScopeInside(ctx, actor, projectId, roomName), keyOf(secretId, identities));
  if (!row) throw notFound('Secret');
  return secretWithValue(ctx, row);
}

export async function listRoomSecrets(ctx: AppContext, projectId: string, roomName: string, page: Page & { forIdentity?: string | undefined }) {
  const { items, total } = await store.listSecrets(ctx.db, await roomScope(ctx, projectId, roomName), page);
  return { secrets: items.map(secretInfo), total };
}

export async function deleteRoomSecret(ctx: AppContext, projectId: string, roomName: string, secretId: string, identities: Identities): Promise<void> {
  if (!(await store.deleteSecret(ctx.db, await roomScope(ctx, projectId, roomName), keyOf(secretId, identities)))) throw notFound('Secret');
}

/**
 * The secrets a room server needs for one identity of a room, values decrypted: the project secrets
 * the room's services refer to (`projectSecretIds`), and the room's secrets for the whole room, for
 * that identity, or delegated to it. Without an identity, the room-wide ones only.
 */
export async function secretsForRoomServer(ctx: AppContext, projectId: string, roomId: string, projectSecretIds: readonly string[], identity: string | undefined) {
  const rows = await store.secretsForRoom(ctx.db, projectId, roomId, projectSecretIds, identity || undefined);
  return rows.map((row) => ({ ...secretWithValue(ctx, row), scope: row.roomId === null ? 'project' as const : 'room' as const }));
}

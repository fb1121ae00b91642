// Rules for external OAuth registrations: where they live (the project, or one room of it), a
// provider that can be reached (both endpoints as absolute http(s) URLs, or a connector), and a
// client secret that is encrypted with the service key and never leaves.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { getRoom, getRoomToActIn } from '../rooms/service.ts';
import * as store from './store.ts';

interface OAuthConfigInput {
  client_id?: string | null | undefined;
  client_secret?: string | null | undefined;
  authorization_endpoint?: string | null | undefined;
  token_endpoint?: string | null | undefined;
  no_pkce?: boolean | null | undefined;
  scopes?: string[] | null | undefined;
}

interface ConnectorInput {
  openai_connector_id?: string | null | undefined;
  server_url?: string | null | undefined;
  client_secret_id?: string | null | undefined;
}

export interface RegistrationInput {
  oauth: OAuthConfigInput;
  client_id: string;
  client_secret?: string | null | undefined;
  delegated_to?: string | null | undefined;
  connector?: ConnectorInput | null | undefined;
}

/** Where a request's registrations live: the project, or the named room of it (404 when missing). */
async function scopeOf(ctx: AppContext, projectId: string, roomName: string | undefined, writer?: Actor): Promise<store.Scope & { roomName: string | null }> {
  if (roomName === undefined) return { projectId, roomId: null, roomName: null };
  // A room's registration signs its participants in upstream: written only by a caller who may connect to it.
  const room = writer ? await getRoomToActIn(ctx, writer, roomName) : await getRoom(ctx, projectId, roomName);
  return { projectId, roomId: room.id, roomName: room.name };
}

export function registrationView(row: store.RegistrationRow, roomName: string | null) {
  return {
    id: row.id,
    project_id: row.projectId,
    room_name: roomName,
    delegated_to: row.delegatedTo,
    client_id: row.clientId,
    has_client_secret: row.clientSecretEncrypted !== null,
    oauth: row.oauth,
    connector: row.connector,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

function checkUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`${field} must be an absolute http(s) URL`, 'invalid_url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badRequest(`${field} must be an absolute http(s) URL`, 'invalid_url');
  if (url.username || url.password) throw badRequest(`${field} must not carry credentials`, 'invalid_url');
  return value;
}

/** The connector's non-empty references, or null for none. */
function normaliseConnector(connector: ConnectorInput | null | undefined): Record<string, string> | null {
  if (!connector) return null;
  const entries = Object.entries(connector).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '');
  if (connector.server_url) checkUrl(connector.server_url, 'connector.server_url');
  return entries.length > 0 ? Object.fromEntries(entries) : null;
}

/** The stored provider configuration: what was sent, without its secret and without nulls. */
function normaliseOAuth(oauth: OAuthConfigInput, connector: Record<string, string> | null): Record<string, unknown> {
  const { client_secret: _secret, ...rest } = oauth;
  const config = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== null && v !== undefined && v !== ''));
  const endpoints = ['authorization_endpoint', 'token_endpoint'].filter((k) => config[k] !== undefined);
  for (const key of endpoints) checkUrl(config[key] as string, `oauth.${key}`);
  if (endpoints.length === 1) throw badRequest('oauth needs both authorization_endpoint and token_endpoint, or neither (with a connector)');
  if (endpoints.length === 0 && !connector) throw badRequest('oauth.authorization_endpoint and oauth.token_endpoint are required unless a connector is given');
  return config;
}

/** The secret sent, from either place it may come in; undefined when none was sent. */
function sentSecret(input: RegistrationInput): string | undefined {
  const top = input.client_secret ?? undefined;
  const nested = input.oauth.client_secret ?? undefined;
  if (top !== undefined && nested !== undefined && top !== nested) throw badRequest('client_secret and oauth.client_secret differ; send one');
  return top ?? nested;
}

function fieldsOf(ctx: AppContext, input: RegistrationInput, storedSecret: string | null): store.RegistrationFields {
  const connector = normaliseConnector(input.connector);
  const oauth = normaliseOAuth(input.oauth, connector);
  const secret = sentSecret(input);
  return {
    delegatedTo: input.delegated_to ?? '',
    clientId: input.client_id,
    // Absent keeps what is stored (it cannot be read back to be resent); "" removes it.
    clientSecretEncrypted: secret === undefined ? storedSecret : secret === '' ? null : ctx.secrets.encrypt(secret),
    oauth,
    connector,
  };
}

export async function createRegistration(ctx: AppContext, actor: Actor, projectId: string, roomName: string | undefined, input: RegistrationInput) {
  const scope = await scopeOf(ctx, projectId, roomName, actor);
  const row = await store.insertRegistration(ctx.db, scope, randomUUID(), fieldsOf(ctx, input, null));
  return registrationView(row, scope.roomName);
}

export async function listRegistrations(ctx: AppContext, projectId: string, roomName: string | undefined, page: Page, delegatedTo: string | undefined) {
  const scope = await scopeOf(ctx, projectId, roomName);
  const { items, total } = await store.listRegistrations(ctx.db, scope, page, delegatedTo);
  return { registrations: items.map((row) => registrationView(row, scope.roomName)), total };
}

export async function updateRegistration(ctx: AppContext, actor: Actor, projectId: string, roomName: string | undefined, id: string, input: RegistrationInput) {
  const scope = await scopeOf(ctx, projectId, roomName, actor);
  return ctx.db.transaction(async (tx) => {
    const current = await store.lockRegistration(tx, scope, id);
    if (!current) throw notFound('External OAuth registration');
    const row = await store.updateRegistration(tx, scope, id, fieldsOf(ctx, input, current.clientSecretEncrypted));
    if (!row) throw notFound('External OAuth registration');
    return registrationView(row, scope.roomName);
  });
}

export async function deleteRegistration(ctx: AppContext, projectId: string, roomName: string | undefined, id: string, delegatedTo: string | undefined): Promise<void> {
  const scope = await scopeOf(ctx, projectId, roomName);
  if (!(await store.deleteRegistration(ctx.db, scope, id, delegatedTo))) throw notFound('External OAuth registration');
}

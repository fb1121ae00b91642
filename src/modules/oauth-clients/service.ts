// Rules for project OAuth clients: what a client may be registered with, the secret shown once,
// branding metadata that merges on update, and metadata that must never hold credentials.
import { randomInt } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import { parseApiKey, parsePersonalAccessToken } from '../../platform/crypto/credentials.ts';
import { hashSecret, randomSecret } from '../../platform/crypto/secrets.ts';
import type { BrowserOrigins } from '../../platform/http/cors.ts';
import { badRequest, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { CLIENT_SCOPES, MAX_METADATA_ENTRIES, THEMES, type GrantType, type ResponseType } from './schema.ts';
import * as store from './store.ts';

// The authorization server (src/oauth) looks clients up by their public client id, and serves
// exactly the scopes a client may be registered with.
export { findOAuthClient, type OAuthClientRow } from './store.ts';
export type { ClientScope } from './schema.ts';

export const DEFAULT_THEME = 'auto';

export function clientView(row: store.OAuthClientRow, secret = '') {
  return {
    client_id: row.clientId,
    // The official SDK's parser requires a string here on every read; the secret itself is only
    // ever returned by create, so reads carry "".
    client_secret: secret,
    name: row.name,
    grant_types: row.grantTypes,
    response_types: row.responseTypes,
    redirect_uris: row.redirectUris,
    scope: row.scope,
    project_id: row.projectId,
    metadata: row.metadata,
    official: row.official,
    public: row.secretHash === null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export type MetadataPatch = Record<string, string | null>;

export interface ClientCreateInput {
  name?: string | undefined;
  grant_types: GrantType[];
  response_types?: ResponseType[] | undefined;
  redirect_uris?: string[] | undefined;
  scope: string;
  metadata?: MetadataPatch | null | undefined;
  public?: boolean | undefined;
  official?: boolean | undefined;
}

export type ClientUpdateInput = Partial<Omit<ClientCreateInput, 'public'>>;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
// RFC 8252 §7.1: native apps use a private-use scheme in reverse-domain form (com.example.app:/cb).
// Requiring a dot also rules out javascript:, data:, file: and the like.
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/;

/** Why a redirect URI is unacceptable, or undefined when it is fine. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.includes('*')) return 'must not contain wildcards';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (/\s/.test(uri)) return 'must not contain whitespace';
  const url = URL.parse(uri);
  if (!url) return 'must be an absolute URI';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return url.hostname ? undefined : 'must name a host';
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? undefined : 'may use plain http only on loopback (127.0.0.1, [::1], localhost); use https';
  }
  if (PRIVATE_USE_SCHEME.test(url.protocol)) return undefined;
  return 'must use https, http on loopback, or a reverse-domain private-use scheme';
}

function logoUrlProblem(value: string): string | undefined {
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) return 'must be an absolute http(s) URL';
  if (url.username || url.password) return 'must not carry credentials';
  return undefined;
}

// Key fragments that name credentials. Keys are compared lower-cased with separators removed, so
// "refresh_token", "refreshToken" and "Session-Id" are all caught.
const SECRET_KEY_WORDS = ['password', 'passwd', 'passphrase', 'secret', 'token', 'session', 'cookie', 'credential', 'apikey', 'privatekey', 'bearer'];

function keyLooksSecret(key: string): boolean {
  const flat = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return SECRET_KEY_WORDS.some((word) => flat.includes(word));
}

// base64url of '{"' starts every JOSE header, so a JWS or JWE begins with eyJ.
const JWT_LIKE = /eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/;
// Token-length words only, so prose ("the bearer of this card") passes.
const BEARER = /\bbearer\s+[A-Za-z0-9._~+/=-]{16,}/i;
const BASIC = /\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/gi;
// name=value pairs whose name is a session or token cookie/parameter (connect.sid=…, PHPSESSID=…,
// ?access_token=…), not any word that merely contains those letters (author=…).
const SESSION_PAIR = /(^|[\s;?&])([\w.-]*[._-])?(session|sessionid|sess|sid|token|access_token|id_token|auth_token|jwt|phpsessid|jsessionid)([._-][\w.-]*)?=[^;\s&]{8,}/i;

function looksLikeBasicCredentials(value: string): boolean {
  for (const match of value.matchAll(BASIC)) {
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    if (/^[\x20-\x7e]+:[\x20-\x7e]*$/.test(decoded)) return true;
  }
  return false;
}

function valueLooksSecret(value: string): boolean {
  if (JWT_LIKE.test(value) || BEARER.test(value) || SESSION_PAIR.test(value) || looksLikeBasicCredentials(value)) return true;
  // Atrium's own credentials, wherever they appear in the value.
  return value.split(/[\s"',;&?=]+/).some((word) => parseApiKey(word) !== undefined || parsePersonalAccessToken(word) !== undefined);
}

/**
 * Applies a metadata patch to the stored entries (entries the caller does not send are kept).
 * null removes an entry; removing logo_url (null or "") restores the default logo; theme falls
 * back to auto.
 */
export function mergeMetadata(current: Record<string, string>, patch: MetadataPatch | null | undefined): Record<string, string> {
  const merged: Record<string, string> = { ...current };
  for (const [key, value] of Object.entries(patch ?? {})) {
    if (keyLooksSecret(key)) throw badRequest(`metadata.${key}: OAuth client metadata must not hold passwords, secrets or session tokens`);
    if (value === null || (value === '' && (key === 'logo_url' || key === 'theme'))) {
      delete merged[key];
      continue;
    }
    if (valueLooksSecret(value)) throw badRequest(`metadata.${key} looks like a token or credential; OAuth client metadata must not hold secrets`);
    if (key === 'logo_url') {
      const problem = logoUrlProblem(value);
      if (problem) throw badRequest(`metadata.logo_url ${problem}`);
    }
    if (key === ALLOWED_ORIGINS_KEY) {
      const bad = value.split(/\s+/).filter(Boolean).find((origin) => URL.parse(origin)?.origin !== origin || !/^https?:/.test(origin));
      if (bad !== undefined) throw badRequest(`metadata.${ALLOWED_ORIGINS_KEY} holds ${JSON.stringify(bad)}, which is not a web origin (scheme://host[:port], no path): list origins separated by spaces`);
    }
    if (key === 'theme' && !(THEMES as readonly string[]).includes(value)) throw badRequest(`metadata.theme must be one of ${THEMES.join(', ')}`);
    merged[key] = value;
  }
  merged.theme ??= DEFAULT_THEME;
  if (Object.keys(merged).length > MAX_METADATA_ENTRIES) throw badRequest(`metadata may hold at most ${MAX_METADATA_ENTRIES} entries`);
  return merged;
}

/** The metadata entry listing, space-separated, more browser origins a client's tokens may be used from. */
export const ALLOWED_ORIGINS_KEY = 'allowed_origins';

/**
 * The browser origins a client allows (CORS): its redirect URIs' origins when it is public (a
 * browser app holds no secret), and those its `allowed_origins` metadata lists.
 */
export function allowedOriginsOf(row: store.OAuthClientRow): string[] {
  const fromRedirects = row.secretHash ? [] : row.redirectUris.map((uri) => URL.parse(uri)).filter((u) => u && /^https?:$/.test(u.protocol)).map((u) => u!.origin);
  const listed = (row.metadata[ALLOWED_ORIGINS_KEY] ?? '').split(/\s+/).filter(Boolean);
  return [...new Set([...fromRedirects, ...listed])];
}

// Preflights repeat for every endpoint a page calls: a short-lived cache per instance spares the
// database. A changed client is seen within ORIGIN_CACHE_MS.
const ORIGIN_CACHE_MS = 10_000;
const originCaches = new WeakMap<AppContext, LRUCache<string, { allowed: boolean }>>();

/** What the OAuth clients allow, for the CORS hook (src/platform/http/cors.ts). */
export function browserOrigins(ctx: AppContext): BrowserOrigins {
  let cache = originCaches.get(ctx);
  if (!cache) originCaches.set(ctx, cache = new LRUCache({ max: 10_000, ttl: ORIGIN_CACHE_MS }));
  const cached = async (key: string, compute: () => Promise<boolean>) => {
    const hit = cache.get(key);
    if (hit) return hit.allowed;
    const allowed = await compute();
    cache.set(key, { allowed });
    return allowed;
  };
  return {
    clientAllows: (clientId, origin) => cached(`c:${clientId}:${origin}`, async () => {
      const row = await store.findOAuthClient(ctx.db, clientId);
      return row !== undefined && allowedOriginsOf(row).includes(origin);
    }),
    anyClientAllows: (origin) => cached(`a:${origin}`, async () => {
      const candidates = await store.clientsMentioningOrigin(ctx.db, origin);
      return candidates.some((row) => allowedOriginsOf(row).includes(origin));
    }),
  };
}

/** Splits, checks and de-duplicates a space-separated scope string. */
export function normaliseScope(scope: string): string {
  const scopes = [...new Set(scope.split(/\s+/).filter(Boolean))];
  if (scopes.length === 0) throw badRequest('scope must name at least one scope');
  const unknown = scopes.filter((s) => !(CLIENT_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw badRequest(`scope has unknown value(s) ${unknown.map((s) => JSON.stringify(s)).join(', ')}; allowed: ${CLIENT_SCOPES.join(' ')}`);
  return scopes.join(' ');
}

interface ClientShape {
  grantTypes: readonly string[];
  responseTypes: readonly string[];
  redirectUris: readonly string[];
  isPublic: boolean;
}

/** The rules that span fields, checked on the whole client after a create or an update. */
function assertConsistent(shape: ClientShape): void {
  const grants = new Set(shape.grantTypes);
  for (const uri of shape.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw badRequest(`redirect_uris: ${JSON.stringify(uri.slice(0, 200))} ${problem}`);
  }
  if (grants.has('authorization_code') && shape.redirectUris.length === 0) {
    throw badRequest('redirect_uris must hold at least one URI when grant_types includes authorization_code');
  }
  if (shape.responseTypes.length > 0 && shape.redirectUris.length === 0) {
    throw badRequest('redirect_uris must hold at least one URI when response_types is not empty');
  }
  if (grants.has('authorization_code') !== shape.responseTypes.includes('code')) {
    throw badRequest('response_types includes code exactly when grant_types includes authorization_code');
  }
  if (grants.has('refresh_token') && !grants.has('authorization_code')) {
    throw badRequest('refresh_token is only issued with authorization_code; add it to grant_types');
  }
  if (shape.isPublic && grants.has('client_credentials')) {
    throw badRequest('A public client has no secret, so it cannot use client_credentials');
  }
}

function assertNotOfficial(official: boolean | undefined): void {
  if (official) throw badRequest('official clients are built into the service; a project client cannot be marked official');
}

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 32 base62 characters (~190 bits). Never a UUID, so client ids and user ids cannot be confused as token subjects. */
function newClientId(): string {
  let id = '';
  for (let i = 0; i < 32; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

export async function createClient(ctx: AppContext, projectId: string, input: ClientCreateInput) {
  assertNotOfficial(input.official);
  const isPublic = input.public ?? false;
  const grantTypes = input.grant_types;
  const responseTypes = input.response_types ?? (grantTypes.includes('authorization_code') ? ['code' as const] : []);
  const redirectUris = input.redirect_uris ?? [];
  assertConsistent({ grantTypes, responseTypes, redirectUris, isPublic });
  const scope = normaliseScope(input.scope);
  const metadata = mergeMetadata({}, input.metadata);
  const secret = isPublic ? '' : randomSecret(32);
  const row = await store.insertOAuthClient(ctx.db, {
    clientId: newClientId(),
    projectId,
    name: input.name ?? metadata.name ?? '',
    secretHash: isPublic ? null : hashSecret(secret),
    redirectUris,
    grantTypes,
    responseTypes,
    scope,
    metadata,
  });
  return clientView(row, secret);
}

export async function getClient(ctx: AppContext, projectId: string, clientId: string) {
  const row = await store.findProjectOAuthClient(ctx.db, projectId, clientId);
  if (!row) throw notFound('OAuth client');
  return clientView(row);
}

export async function listClients(ctx: AppContext, projectId: string, page: Page) {
  const { items, total } = await store.listOAuthClients(ctx.db, projectId, page);
  return { clients: items.map((row) => clientView(row)), total };
}

/** Applies the fields sent; metadata merges. The row is locked so concurrent merges do not lose entries. */
export async function updateClient(ctx: AppContext, projectId: string, clientId: string, input: ClientUpdateInput): Promise<void> {
  assertNotOfficial(input.official);
  await ctx.db.transaction(async (tx) => {
    const current = await store.findProjectOAuthClient(tx, projectId, clientId, { forUpdate: true });
    if (!current) throw notFound('OAuth client');
    const next = {
      grantTypes: input.grant_types ?? current.grantTypes,
      responseTypes: input.response_types ?? current.responseTypes,
      redirectUris: input.redirect_uris ?? current.redirectUris,
    };
    assertConsistent({ ...next, isPublic: current.secretHash === null });
    const changes: store.OAuthClientChanges = { ...next };
    if (input.scope !== undefined) changes.scope = normaliseScope(input.scope);
    if (input.metadata != null) changes.metadata = mergeMetadata(current.metadata, input.metadata);
    // The label follows metadata.name (what the meshagent CLI sets) unless name itself is sent.
    const name = input.name ?? (typeof input.metadata?.name === 'string' ? input.metadata.name : undefined);
    if (name !== undefined) changes.name = name;
    await store.updateOAuthClient(tx, projectId, clientId, changes);
  });
}

export async function deleteClient(ctx: AppContext, projectId: string, clientId: string): Promise<void> {
  if (!(await store.deleteOAuthClient(ctx.db, projectId, clientId))) throw notFound('OAuth client');
}

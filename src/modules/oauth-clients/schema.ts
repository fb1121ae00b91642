import { Type } from 'typebox';
import { CountOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials'] as const;
export const RESPONSE_TYPES = ['code', 'token', 'id_token'] as const;
/** Scopes a project client may be registered with: the current names and the earlier ones, still accepted. */
export const CLIENT_SCOPES = ['profile:read', 'rooms:connect', 'llm:invoke', 'secrets:proxy', 'openid', 'profile', 'email', 'offline_access', 'llm_proxy'] as const;
export const THEMES = ['light', 'dark', 'auto'] as const;

export type GrantType = (typeof GRANT_TYPES)[number];
export type ClientScope = (typeof CLIENT_SCOPES)[number];
export type ResponseType = (typeof RESPONSE_TYPES)[number];

export const MAX_REDIRECT_URIS = 20;
export const MAX_METADATA_ENTRIES = 50;

export const ClientId = Type.String({ maxLength: 128, pattern: '^[A-Za-z0-9._~-]{1,128}$', 'x-pattern-means': 'may hold only letters, digits and ". _ ~ -"', description: 'OAuth client id' });
export const ClientParams = Type.Object({ project_id: Uuid, client_id: ClientId });

const ClientName = Type.String({ maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$', 'x-pattern-means': 'must not contain control characters', description: 'Label shown in the console and on the consent page' });
const GrantTypes = Type.Array(Type.Enum(GRANT_TYPES), { minItems: 1, maxItems: GRANT_TYPES.length, uniqueItems: true, description: 'authorization_code, refresh_token, client_credentials' });
const ResponseTypes = Type.Array(Type.Enum(RESPONSE_TYPES), { maxItems: RESPONSE_TYPES.length, uniqueItems: true, description: 'code, token, id_token' });
const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  maxItems: MAX_REDIRECT_URIS, uniqueItems: true,
  description: 'Absolute, no fragment, no wildcard; https, http only on loopback (127.0.0.1, [::1], localhost), or a reverse-domain private-use scheme for native apps',
});
const Scope = Type.String({ maxLength: 500, description: `Space-separated, from: ${CLIENT_SCOPES.join(' ')}` });
const MetadataValue = Type.String({ maxLength: 2000 });
// TypeBox turns a Record key schema into patternProperties, which leaves other keys unchecked, so
// the key rule is a propertyNames constraint instead.
const MetadataPatch = Type.Record(Type.String(), Type.Union([MetadataValue, Type.Null()]), {
  maxProperties: MAX_METADATA_ENTRIES,
  propertyNames: { pattern: '^[A-Za-z0-9_.:-]{1,100}$', 'x-pattern-means': 'names may hold only letters, digits and "_ . : -", at most 100' },
  description: 'String entries alongside the name: logo_url (absolute http(s) URL), theme (light|dark|auto), name… On update, entries merge into the stored ones; null removes one. Never secrets.',
});
const Official = Type.Boolean({ description: 'Accepted for SDK compatibility; only false (official clients are built into the service)' });

export const OAuthClientCreate = Type.Object({
  name: Type.Optional(ClientName),
  grant_types: GrantTypes,
  response_types: Type.Optional(ResponseTypes),
  redirect_uris: Type.Optional(RedirectUris),
  scope: Scope,
  metadata: Type.Optional(Type.Union([MetadataPatch, Type.Null()])),
  public: Type.Optional(Type.Boolean({ default: false, description: 'A public client (single-page or native app): no secret, PKCE only' })),
  official: Type.Optional(Official),
});

export const OAuthClientUpdate = Type.Object({
  name: Type.Optional(ClientName),
  grant_types: Type.Optional(GrantTypes),
  response_types: Type.Optional(ResponseTypes),
  redirect_uris: Type.Optional(RedirectUris),
  scope: Type.Optional(Scope),
  metadata: Type.Optional(Type.Union([MetadataPatch, Type.Null()])),
  official: Type.Optional(Official),
});

export const OAuthClient = Type.Object({
  client_id: Type.String(),
  client_secret: Type.String({ description: 'The secret on create (empty for public clients); always "" afterwards' }),
  name: Type.String(),
  grant_types: Type.Array(Type.String()),
  response_types: Type.Array(Type.String()),
  redirect_uris: Type.Array(Type.String()),
  scope: Type.String(),
  project_id: Type.String(),
  metadata: Type.Record(Type.String(), Type.String()),
  official: Type.Boolean(),
  public: Type.Boolean({ description: 'No secret; authenticates with PKCE only' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'OAuthClient' });

export const OAuthClientList = ListOf('clients', OAuthClient);
export const OAuthClientListQuery = Type.Object(CountOffsetQuery);

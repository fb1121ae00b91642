import { Type } from 'typebox';
import { CountOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { CLOSED, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const Url = Type.String({ maxLength: 2000, description: 'An absolute http(s) URL' });

/** The provider configuration (the SDKs' OAuthClientConfig). */
const OAuthConfig = Type.Object({
  client_id: nullable(Type.String({ maxLength: 500 })),
  client_secret: nullable(Type.String({ maxLength: 4000, description: 'Kept encrypted with the registration\'s secret; never returned' })),
  authorization_endpoint: nullable(Url),
  token_endpoint: nullable(Url),
  no_pkce: nullable(Type.Boolean({ description: 'The provider does not support PKCE' })),
  scopes: nullable(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
}, CLOSED);

const Connector = Type.Object({
  openai_connector_id: nullable(Type.String({ maxLength: 200 })),
  server_url: nullable(Url),
  client_secret_id: nullable(Type.String({ maxLength: 200, description: 'The id of a secret that holds the client secret' })),
}, CLOSED);

export const RegistrationInput = Type.Object({
  oauth: OAuthConfig,
  client_id: Type.String({ minLength: 1, maxLength: 500 }),
  client_secret: nullable(Type.String({ maxLength: 4000, description: 'Write-only: kept encrypted, never returned. On update, absent or null keeps the stored one and "" removes it.' })),
  delegated_to: nullable(Type.String({ maxLength: 200, description: 'The participant identity the registration is for; absent, null or "" for everyone' })),
  connector: nullable(Connector),
}, {
  ...CLOSED,
  examples: [{
    oauth: { authorization_endpoint: 'https://accounts.example.com/authorize', token_endpoint: 'https://accounts.example.com/token', scopes: ['read'] },
    client_id: 'atrium-agents',
    client_secret: 's3cret-value',
  }],
});

const OAuthConfigView = Type.Object({
  client_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  authorization_endpoint: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  token_endpoint: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  no_pkce: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  scopes: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
});

const ConnectorView = Type.Union([Type.Object({
  openai_connector_id: Type.Optional(Type.String()),
  server_url: Type.Optional(Type.String()),
  client_secret_id: Type.Optional(Type.String()),
}), Type.Null()]);

export const Registration = Type.Object({
  id: Type.String(),
  project_id: Type.String(),
  room_name: Type.Union([Type.String(), Type.Null()], { description: 'The room of a room registration; null for the project\'s' }),
  delegated_to: Type.String(),
  client_id: Type.String(),
  has_client_secret: Type.Boolean({ description: 'Whether a client secret is stored (it is never returned)' }),
  oauth: OAuthConfigView,
  connector: ConnectorView,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const RegistrationListQuery = Type.Object({
  ...CountOffsetQuery,
  delegated_to: Type.Optional(Type.String({ maxLength: 200, description: 'Only registrations delegated to this identity' })),
});
export const RegistrationList = ListOf('registrations', Registration);

export const DeleteQuery = Type.Object({
  delegated_to: Type.Optional(Type.String({ maxLength: 200, description: 'Delete only if the registration is delegated to this identity' })),
});

export const ProjectRegistrationParams = Type.Object({ project_id: Uuid, registration_id: Uuid });
export const RoomParams = Type.Object({ project_id: Uuid, room_name: RoomName });
// Its own name so that the route walks tell a room's registrations from the project's.
export const RoomRegistrationParams = Type.Object({ project_id: Uuid, room_name: RoomName, room_registration_id: Uuid });

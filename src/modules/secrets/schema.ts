import { Type } from 'typebox';
import { CountOffsetQuery, MAX_PAGE } from '../../platform/http/lists.ts';
import { Name, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';

/** Largest secret value, in bytes (decoded). */
export const MAX_SECRET_BYTES = 64 * 1024;

export const SecretId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$', 'x-pattern-means': 'must start with a letter or digit and hold only letters, digits and ". _ : -"', maxLength: 200, description: 'Secret id: assigned (a UUID), or chosen for a room secret' });
const SecretName = Type.String({ ...Name, description: 'Unique among the project\'s secrets, or among a room\'s for one identity' });
const SecretType = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$', 'x-pattern-means': 'must start with a letter or digit and hold only letters, digits and ". _ -"', maxLength: 100, description: 'What the value holds: `docker` (registry credentials as JSON), `keys` (a JSON object of strings), or any other label' });
// Checked for the alphabet and decoded size by the service, which answers 413 past MAX_SECRET_BYTES.
const DataBase64 = Type.String({ maxLength: 1024 * 1024, description: `The value, base64-encoded; at most ${MAX_SECRET_BYTES} bytes decoded` });
const IDENTITY = { maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$', 'x-pattern-means': 'must not contain control characters' };
const Identity = (description: string) => Type.Union([Type.String({ ...IDENTITY, description }), Type.Null()]);

export const ProjectSecretBody = Type.Object({ name: SecretName, type: SecretType, data_base64: DataBase64 }, {
  examples: [{ name: 'registry', type: 'docker', data_base64: 'eyJzZXJ2ZXIiOiJnaGNyLmlvIn0=' }],
});

const RoomSecretFields = {
  data_base64: DataBase64,
  name: Type.Optional(Type.Union([SecretName, Type.Null()])),
  type: Type.Optional(Type.Union([SecretType, Type.Null()])),
  for_identity: Type.Optional(Identity('The participant identity the value is for; none: the whole room')),
  delegated_to: Type.Optional(Identity('The identity allowed to use it on behalf of `for_identity`')),
};

export const RoomSecretCreate = Type.Object({
  ...RoomSecretFields,
  secret_id: Type.Optional(Type.Union([SecretId, Type.Null()])),
}, { examples: [{ data_base64: 'c2VjcmV0', name: 'token', type: 'keys' }] });

export const RoomSecretUpdate = Type.Object(RoomSecretFields, { examples: [{ data_base64: 'c2VjcmV0', name: 'token', type: 'keys' }] });

const InfoFields = {
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  delegated_to: Type.Union([Type.String(), Type.Null()]),
  for_identity: Type.Union([Type.String(), Type.Null()]),
};

export const SecretInfo = Type.Object(InfoFields, { description: 'A secret without its value' });
export const SecretWithValue = Type.Object({ ...InfoFields, data_base64: Type.String({ description: 'The value, base64-encoded' }) });

export const SecretList = Type.Object({ secrets: Type.Array(SecretInfo), total: Type.Integer() });

export const ListQuery = Type.Object({
  ...CountOffsetQuery,
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: MAX_PAGE, description: 'Most items returned' })),
});
export const RoomListQuery = Type.Object({
  ...ListQuery.properties,
  for_identity: Type.Optional(Type.String({ ...IDENTITY, description: 'Only the secrets for this identity (empty: those for the whole room); all when absent' })),
});
export const KeyQuery = Type.Object({
  for_identity: Type.Optional(Type.String({ ...IDENTITY, description: 'The identity the value is for; absent or empty: the whole room' })),
  delegated_to: Type.Optional(Type.String({ ...IDENTITY, description: 'The identity it is delegated to; absent or empty: none' })),
});

export const ProjectSecretParams = Type.Object({ project_id: Uuid, secret_id: SecretId });
export const RoomParams = Type.Object({ project_id: Uuid, room_name: RoomName });
export const RoomSecretParams = Type.Object({ project_id: Uuid, room_name: RoomName, secret_id: SecretId });

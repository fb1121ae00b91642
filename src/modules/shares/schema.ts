import { Type } from 'typebox';
import { filterQuery, LimitOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { JsonObject, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';

const settingsOf = (room: 'required' | 'optional', description: string) => Type.Object({
  room: room === 'required' ? RoomName : Type.Optional(RoomName),
  grants: Type.Optional(JsonObject('The ApiScope of who connects through the share (livekit, messaging, storage, …); at most what you may use in that room yourself. Default: the room\'s viewer role')),
  expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the share stops letting anyone in; absent or null: never' })),
}, { additionalProperties: true, maxProperties: 50, description });

export const ShareCreate = Type.Object({
  settings: settingsOf('required', 'The room, the grants and the expiry; other keys are kept as given'),
}, { examples: [{ settings: { room: 'lobby', grants: { livekit: {}, messaging: { broadcast: false, send: false } } } }] });

export const ShareUpdate = Type.Object({
  settings: settingsOf('optional', 'Replaces the settings; without `room` the share keeps its room'),
}, { examples: [{ settings: {} }] });

export const Share = Type.Object({
  id: Type.String(),
  project_id: Type.String(),
  settings: Type.Record(Type.String(), Type.Unknown(), { description: 'Kept settings, with `room` (its current name), `grants` and `expires_at`' }),
  expires_at: Type.Union([Timestamp, Type.Null()]),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const CreatedShare = Type.Object({
  ...Share.properties,
  token: Type.String({ description: 'The share token, shown this once: whoever holds it connects through the share' }),
});

export const ShareParams = Type.Object({ project_id: Uuid, share_id: Uuid });
export const ConnectParams = Type.Object({ share_id: Uuid });

export const ShareListQuery = Type.Object({ ...LimitOffsetQuery, ...filterQuery('label or room name') });
export const ShareList = ListOf('shares', Share);

export const ShareConnection = Type.Object({
  jwt: Type.String({ description: 'Participant token for the share\'s room, with the share\'s grants' }),
  room_name: Type.String(),
  project_id: Type.String(),
  room_url: Type.String(),
  settings: Type.Record(Type.String(), Type.Unknown()),
});

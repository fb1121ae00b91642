import { Type } from 'typebox';
import { filterQuery, LimitOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { JsonObject, Name, StringMap, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const RoomName = Type.String({ ...Name, maxLength: 200, description: 'Room name, unique in the project' });

/** An ApiScope of the participant-token format the official SDK reads, kept as given. */
export const ApiScope = JsonObject('ApiScope granted to a participant (livekit, queues, messaging, storage, …)');

export const Room = Type.Object({
  id: Type.String(),
  name: Type.String(),
  metadata: JsonObject(),
  annotations: Type.Record(Type.String(), Type.String()),
  permissions: Type.Record(Type.String(), ApiScope, { description: 'Initial permissions: user id → ApiScope' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Room' });

export const RoomCreate = Type.Object({
  name: RoomName,
  if_not_exists: Type.Optional(Type.Boolean({ default: false, description: 'Return the existing room instead of 409' })),
  metadata: Type.Optional(Type.Union([JsonObject(), Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
  permissions: Type.Optional(Type.Union([Type.Record(Uuid, ApiScope, { maxProperties: 1000 }), Type.Null()])),
});

export const RoomUpdate = Type.Object({
  name: RoomName,
  metadata: Type.Optional(Type.Union([JsonObject(), Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
});

export const RoomListQuery = Type.Object({
  ...LimitOffsetQuery,
  ...filterQuery('name'),
  order_by: Type.Optional(Type.Union([Type.Literal('room_name'), Type.Literal('created_at')], { default: 'room_name' })),
});

export const RoomList = ListOf('rooms', Room);

export const RoomConnection = Type.Object({
  jwt: Type.String({ description: 'Participant token for this room' }),
  room_name: Type.String(),
  project_id: Type.String(),
  room_url: Type.String({ description: 'WebSocket URL of the room' }),
});

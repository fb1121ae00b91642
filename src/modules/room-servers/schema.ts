import { Type } from 'typebox';
import { JsonObject, Uuid } from '../../platform/http/schemas.ts';
import { Mailbox } from '../mailboxes/schema.ts';
import { RoomName } from '../rooms/schema.ts';

export const RoomParams = Type.Object({ project_id: Uuid, room_name: RoomName });

const Scope = Type.Union([Type.Literal('project'), Type.Literal('room')]);
const RoomRef = Type.Object({ id: Type.String(), name: Type.String() });

export const RoomServices = Type.Object({
  room: RoomRef,
  services: Type.Array(Type.Object({
    id: Type.String(),
    scope: Scope,
    spec: JsonObject('The ServiceSpec to run, with its id: templates rendered with every value, obscure ones included'),
  })),
});

export const SecretsQuery = Type.Object({
  for_identity: Type.Optional(Type.String({ maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$', 'x-pattern-means': 'must not contain control characters', description: 'The participant identity to read secrets for; absent: the room-wide secrets only' })),
});

export const RoomSecrets = Type.Object({
  room: RoomRef,
  secrets: Type.Array(Type.Object({
    id: Type.String(),
    scope: Scope,
    name: Type.String(),
    type: Type.String(),
    for_identity: Type.Union([Type.String(), Type.Null()]),
    delegated_to: Type.Union([Type.String(), Type.Null()]),
    data_base64: Type.String(),
  })),
});

export const RoomMailboxes = Type.Object({ room: RoomRef, mailboxes: Type.Array(Mailbox) });

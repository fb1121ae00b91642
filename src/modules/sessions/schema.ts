import { Type } from 'typebox';
import { Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';

const Participants = Type.Record(Type.String({ maxLength: 100 }), Type.Integer({ minimum: 0, maximum: 1_000_000 }), {
  maxProperties: 50, description: 'Participant count by role, e.g. {"user": 3, "agent": 1}',
});

export const SessionStart = Type.Object({
  room_name: RoomName,
  session_id: Type.Optional(Type.String({ format: 'uuid', description: 'The room server\'s id for the session; generated when absent. Reporting the same id again returns the session without a second event.' })),
  participants: Type.Optional(Participants),
});

export const SessionEnd = Type.Object({
  participants: Type.Optional(Participants),
});

export const RoomSession = Type.Object({
  id: Uuid,
  room_id: Type.Union([Uuid, Type.Null()], { description: 'The registered room of that name, if any' }),
  room_name: Type.String(),
  kind: Type.Literal('room'),
  created_at: Timestamp,
  started_at: Timestamp,
  ended_at: Type.Union([Timestamp, Type.Null()]),
  is_active: Type.Boolean(),
  participants: Participants,
}, { $id: 'RoomSession' });

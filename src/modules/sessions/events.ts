// Events of room sessions, emitted when a room server reports a session's start and end.
import { Type } from 'typebox';
import { defineEvent } from '../../platform/events/catalogue.ts';

const RoomSession = Type.Object({
  room_name: Type.String(),
  room_url: Type.String({ description: 'WebSocket URL of the room' }),
  session_id: Type.String(),
});

export const roomStarted = defineEvent('room.started', RoomSession, { description: 'A room session started', room: true });
export const roomEnded = defineEvent('room.ended', RoomSession, { description: 'A room session ended', room: true });

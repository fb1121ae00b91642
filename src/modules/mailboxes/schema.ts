import { Type } from 'typebox';
import { CountOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { CLOSED, Name, StringMap, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';

// A local part of the usual characters, without those that cannot stand in a URL path (`/ ? # %`),
// dot-separated; the domain is checked against the deployment's mail domains by the service.
const LOCAL = "[A-Za-z0-9!#$&'*+=^_`{|}~-]+(?:\\.[A-Za-z0-9!#$&'*+=^_`{|}~-]+)*";
export const Address = Type.String({
  pattern: `^(?=[^@]{1,64}@)${LOCAL}@[A-Za-z0-9.-]{1,253}$`, 'x-pattern-means': 'must be an email address (name@domain)', maxLength: 320,
  description: 'An email address under one of the mail domains the deployment allows (ATRIUM_MAIL_DOMAINS); compared case-insensitively, stored lower-cased',
  examples: ['support@mail.example.test'],
});

const Fields = {
  room: Type.String({ ...RoomName, description: 'The room whose queue receives the mail' }),
  queue: Type.String({ ...Name, description: 'The queue of that room' }),
  public: Type.Optional(Type.Union([Type.Boolean({ description: 'Accept mail from anyone (default: only from project members)' }), Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
};

export const MailboxCreate = Type.Object({ address: Address, ...Fields }, { ...CLOSED, examples: [{ address: 'support@mail.example.test', room: 'lobby', queue: 'inbox', public: false }] });
export const MailboxUpdate = Type.Object(Fields, CLOSED);

export const Mailbox = Type.Object({
  address: Type.String(),
  room: Type.String(),
  room_id: Type.String(),
  queue: Type.String(),
  public: Type.Boolean(),
  annotations: Type.Record(Type.String(), Type.String()),
});

export const MailboxEnvelope = Type.Object({ mailbox: Mailbox });
export const MailboxList = ListOf('mailboxes', Mailbox);
export const MailboxListQuery = Type.Object({ ...CountOffsetQuery, filter: Type.Optional(Type.String({ maxLength: 200, description: 'Only addresses containing this text' })) });

export const AddressParams = Type.Object({ project_id: Uuid, address: Address });
export const RoomParams = Type.Object({ project_id: Uuid, room_name: RoomName });

import { Type } from 'typebox';
import { CountOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { Description, JsonObject, Name, StringMap, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { MAX_DATETIME_FORMAT_LENGTH } from './filenames.ts';

/** Most messages in one batch publish (the body is also bounded by the 1 MiB JSON limit). */
export const MAX_BATCH = 1000;

export const Visibility = Type.Union([Type.Literal('public'), Type.Literal('project'), Type.Literal('private')], {
  description: '`private` (the default): only holders of `feed_inventory` see it; `project` and `public`: every project member. Fixed at creation.',
});

const MessageSchema = Type.Union([JsonObject('A JSON Schema (draft-07, or 2020-12 when `$schema` says so)'), Type.Boolean(), Type.Null()], {
  description: 'Messages must match it; `true` or null accept any JSON value, `false` none',
});

export const Feed = Type.Object({
  id: Type.String(),
  project_id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  visibility: Type.String(),
  paused: Type.Boolean(),
  annotations: StringMap,
  message_schema: Type.Unknown(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const FeedCreate = Type.Object({
  name: Name,
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  visibility: Type.Optional(Type.Union([Visibility, Type.Null()])),
  paused: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
  message_schema: Type.Optional(MessageSchema),
}, { examples: [{ name: 'orders', visibility: 'project', message_schema: { type: 'object', required: ['id'] } }] });

export const FeedUpdate = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  paused: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
  message_schema: Type.Optional(MessageSchema),
}, { description: 'What the official SDK sends: name, description, paused, annotations and message_schema (a missing name keeps the current one). Visibility cannot change.' });

export const FeedEnvelope = Type.Object({ feed: Feed });
export const FeedWithRights = Type.Object({
  feed: Feed,
  rights: Type.Array(Type.String({ examples: ['publish'] }), {
    description: 'The actions `feed.<action>` the caller may take on this feed (`read_subscriptions`, `add_subscription`, `change_subscriptions`, `publish`, `manage`, `read_policy`, `change_policy`), '
      + 'through project roles, the feed\'s policy or a participant grant (docs/permissions.md "Resource actions")',
  }),
});
export const FeedList = ListOf('feeds', Feed);
export const FeedListQuery = Type.Object(CountOffsetQuery);

export const Message = Type.Unknown({ description: 'Any JSON value: the message itself' });
export const MessageBatch = Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH, description: `A JSON array of 1–${MAX_BATCH} messages, accepted all together or not at all` });

const Accepted = Type.Object({ id: Type.String(), seq: Type.Integer({ description: 'Position in the feed' }), created_at: Timestamp });
export const Published = Accepted;
export const PublishedBatch = Type.Object({ messages: Type.Array(Accepted) });

const DatetimeFormat = Type.String({
  minLength: 1, maxLength: MAX_DATETIME_FORMAT_LENGTH,
  description: 'File names: tokens YYYY, MM, DD, hh, mm, ss, SSS (UTC, the time of the file\'s first message); "/" makes folders. Default `YYYY-MM-DDThh_mm_ssZ`.',
});

export const Subscription = Type.Object({
  id: Type.String(),
  feed_id: Type.String(),
  project_id: Type.String(),
  room: Type.String({ description: 'The room\'s name' }),
  room_id: Type.String(),
  path: Type.String({ description: 'Folder in the room\'s storage ("" for its root)' }),
  filename_datetime_format: Type.Union([Type.String(), Type.Null()]),
  annotations: StringMap,
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SubscriptionCreate = Type.Object({
  room: Name,
  path: Type.String({ maxLength: 1024, description: 'Folder in the room\'s storage; "/" or "" for its root' }),
  filename_datetime_format: Type.Optional(Type.Union([DatetimeFormat, Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
}, { examples: [{ room: 'ops-room', path: 'feeds/orders/' }] });

export const SubscriptionUpdate = Type.Object({
  filename_datetime_format: Type.Optional(Type.Union([DatetimeFormat, Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
}, { description: 'Fields left out keep their value. Room and path are fixed at creation.' });

export const SubscriptionEnvelope = Type.Object({ subscription: Subscription });
export const SubscriptionList = ListOf('subscriptions', Subscription);
export const SubscriptionListQuery = Type.Object(CountOffsetQuery);

export const FeedParams = Type.Object({ project_id: Uuid, feed_id: Uuid });
export const SubscriptionParams = Type.Object({ project_id: Uuid, feed_id: Uuid, subscription_id: Uuid });
export const RoomParams = Type.Object({ project_id: Uuid, room_name: Name });

import { Type } from 'typebox';
import { LimitOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { Description, JsonObject, Name, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const MAX_URL_LENGTH = 2048;
export const MAX_PAYLOAD_TEXT = 64 * 1024;
export const MIN_SECRET_LENGTH = 16;
export const MAX_SECRET_LENGTH = 256;

const Url = Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'Absolute http(s) URL that receives the POSTs' });
const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20, description: 'Event types (the catalogue is in docs/webhooks.md); "*" subscribes to all, including types added later' });
const Action = Type.Union([Type.Literal(''), Type.Literal('call'), Type.Null()], { description: '"" (or null): JSON delivery; "call": deliver each room event as a room.call handoff' });
const Payload = Type.Union([JsonObject(), Type.Null(), Type.String({ maxLength: MAX_PAYLOAD_TEXT })], {
  description: 'JSON object merged into every body at top level (or sent as the room.call `arguments`); null or "" for none; a string holding a JSON object is accepted too',
});
const Secret = Type.Union([Type.String({ maxLength: MAX_SECRET_LENGTH }), Type.Boolean(), Type.Null()], {
  description: `Signing secret: true generates one, a string of ${MIN_SECRET_LENGTH}–${MAX_SECRET_LENGTH} characters sets that one, false removes signing, null or "" leaves it as it is. A new secret is returned once, in this response.`,
});

export const WebhookCreate = Type.Object({
  name: Name,
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  url: Url,
  events: Events,
  action: Type.Optional(Action),
  payload: Type.Optional(Payload),
  secret: Type.Optional(Secret),
});

export const WebhookUpdate = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  action: Type.Optional(Action),
  payload: Type.Optional(Payload),
  secret: Type.Optional(Secret),
  enabled: Type.Optional(Type.Boolean({ description: 'true re-enables a disabled webhook (clearing disabled_reason); false pauses it' })),
}, { description: 'Fields left out keep their value' });

export const RotateSecret = Type.Object({
  secret: Type.Optional(Type.String({ minLength: MIN_SECRET_LENGTH, maxLength: MAX_SECRET_LENGTH, description: 'The new secret; generated when absent' })),
  overlap_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 * 86400, default: 86400, description: 'How long the old secret keeps signing (Service-Signature-Previous); default one day' })),
});

export const Webhook = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  action: Type.String(),
  payload: Type.Union([JsonObject(), Type.Null()]),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why Atrium disabled the webhook (410 Gone, failing for days); null when enabled' }),
  has_secret: Type.Boolean({ description: 'Deliveries are signed' }),
  previous_secret_expires_at: Type.Union([Timestamp, Type.Null()], { description: 'Until when the previous secret also signs, after a rotation' }),
  secret: Type.Optional(Type.String({ description: 'Only in the response that set a new secret: store it now, it is not shown again' })),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Webhook' });

export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook) });

const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')]);

export const Attempt = Type.Object({
  attempt: Type.Integer(),
  trigger: Type.String({ description: 'scheduled, or manual (a redeliver request)' }),
  started_at: Timestamp,
  latency_ms: Type.Integer(),
  succeeded: Type.Boolean(),
  http_status: Type.Union([Type.Integer(), Type.Null()]),
  response_excerpt: Type.Union([Type.String(), Type.Null()], { description: 'Start of the response body, at most 1 KiB' }),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const Delivery = Type.Object({
  id: Uuid,
  webhook_id: Uuid,
  event_id: Uuid,
  event: Type.String({ description: 'Event type' }),
  data: JsonObject(),
  status: DeliveryStatus,
  attempt_count: Type.Integer(),
  next_attempt_at: Type.Union([Timestamp, Type.Null()], { description: 'When the next attempt is due (pending deliveries)' }),
  last_attempt_at: Type.Union([Timestamp, Type.Null()]),
  last_http_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
  attempts: Type.Array(Attempt, { description: 'The latest attempts, oldest first' }),
}, { $id: 'WebhookDelivery' });

export const DeliveryListQuery = Type.Object({
  ...LimitOffsetQuery,
  status: Type.Optional(DeliveryStatus),
});

export const DeliveryList = ListOf('deliveries', Delivery);

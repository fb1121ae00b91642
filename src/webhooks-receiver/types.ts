// Payload types of the events Atrium delivers (docs/webhooks.md), shared by the receiver library, its
// handlers and the `atrium webhooks listen` command. Data shapes are type aliases, not interfaces,
// so that a typed event is also a plain WebhookEvent (aliases get an implicit index signature).
import type { IncomingHttpHeaders } from 'node:http';

export type RoomStartedData = {
  room_name: string;
  room_url?: string;
  session_id?: string;
};

export type RoomEndedData = {
  room_name: string;
  session_id?: string;
};

export type StorageFileUpdatedData = {
  path: string;
  participant_id: string;
};

export type StorageFileDeletedData = {
  path: string;
  participant_id: string;
};

/** The `room.call` handoff: join `room_url` as a participant with `token`. */
export type RoomCallData = {
  room_name: string;
  room_url: string;
  token: string;
  arguments?: Record<string, unknown>;
};

export interface WebhookEventMap {
  'room.started': RoomStartedData;
  'room.ended': RoomEndedData;
  'storage.file.updated': StorageFileUpdatedData;
  'storage.file.deleted': StorageFileDeletedData;
  'room.call': RoomCallData;
}

export type WebhookEventType = keyof WebhookEventMap;

export interface WebhookEvent<T extends string = string, D = Record<string, unknown>> {
  /** The body's `event` field. */
  type: T;
  data: D;
  /**
   * `Service-Event-Id`: the same for every retry of one event, so a handler that must act once
   * de-duplicates on it. Undefined when the caller did not send it.
   */
  id: string | undefined;
  /** `Service-Event-Timestamp` (unix seconds) when the event occurred. */
  timestamp: number | undefined;
  /** `Service-Delivery-Attempt`: 1 for the first attempt, higher for retries. */
  attempt: number | undefined;
  /** Top-level body keys besides `event` and `data`: the webhook's configured `payload`. */
  payload: Record<string, unknown>;
  /** The exact bytes the signature covered: the POST body, or the `Service-Webhook` header value. */
  raw: Buffer;
  headers: IncomingHttpHeaders;
}

export type TypedWebhookEvent<K extends WebhookEventType> = WebhookEvent<K, WebhookEventMap[K]>;

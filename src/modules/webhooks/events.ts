// The events Atrium delivers, and how a change emits one: inside the change's own transaction, the
// event row, one delivery row per subscribed webhook and one outbox job per delivery are written
// (in a single statement, as this sits on the path of every storage write and session report), so
// an event exists exactly when its cause committed (SPEC "Events").
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/db/engine.ts';
import * as store from './store.ts';

export const EVENT_TYPES = ['room.started', 'room.ended', 'storage.file.updated', 'storage.file.deleted'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Subscribing to `*` means every type, including ones added later. */
export const ALL_EVENTS = '*';

/** Event types that name a room, which a `call` webhook can hand off. */
export const ROOM_EVENT_TYPES: readonly EventType[] = ['room.started', 'room.ended'];

export interface EventData {
  'room.started': { room_name: string; room_url: string; session_id: string };
  'room.ended': { room_name: string; room_url: string; session_id: string };
  /** participant_id: the user or API key that wrote the file, or the service feature that did. */
  'storage.file.updated': { path: string; participant_id: string };
  'storage.file.deleted': { path: string; participant_id: string };
}

export const DELIVER_TOPIC = 'webhooks.deliver';

/**
 * Emits an event in the caller's transaction. Returns the event id, or undefined when no enabled
 * webhook of the project subscribes to it (then nothing is written).
 */
export async function emitEvent<T extends EventType>(tx: Db, projectId: string, type: T, data: EventData[T]): Promise<string | undefined> {
  const eventId = randomUUID();
  const deliveries = await store.insertEvent(tx, { id: eventId, projectId, type, data, callable: ROOM_EVENT_TYPES.includes(type) }, DELIVER_TOPIC);
  return deliveries > 0 ? eventId : undefined;
}

/**
 * Emits an event in the same statement as the change that causes it (`cause`, see
 * store.EventCause): atomic on its own, so no transaction (and its BEGIN/COMMIT round trips) is
 * needed. Returns the event id (undefined when nothing subscribes or the change did not happen)
 * and the cause's result columns.
 */
export async function emitEventWithCause<T extends EventType, R extends Record<string, unknown>>(db: Db, projectId: string, type: T, data: EventData[T], cause: store.EventCause): Promise<{ eventId: string | undefined; row: R }> {
  const eventId = randomUUID();
  const { deliveries, row } = await store.insertEventWithCause<R>(db, { id: eventId, projectId, type, data, callable: ROOM_EVENT_TYPES.includes(type) }, DELIVER_TOPIC, cause);
  return { eventId: deliveries > 0 ? eventId : undefined, row };
}

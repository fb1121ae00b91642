// The event catalogue: each module declares the events it emits (type, meaning, payload schema),
// and the union over all modules is what webhooks can subscribe to and docs/webhooks.md lists.
// Consumers (webhook deliveries, LLM loggers, billing) are declared in their modules' descriptors:
// the events each takes, the job type it queues and its SQL fan-out, which runs in the statement
// writing the event, so an event and everything it causes commit together. docs/events.md is the
// map (event → consumers → jobs → handler), generated from these declarations.
import type { SQL } from 'drizzle-orm';
import type { Static, TObject } from 'typebox';
import type { JobRows, JobType } from '../jobs/types.ts';

export interface EventDefinition<T = Record<string, unknown>> {
  /** Dotted name, e.g. `room.started`. */
  readonly type: string;
  readonly description: string;
  /** The payload's schema (documentation and tests; emitters are typed by it). */
  readonly schema: TObject;
  /** The payload names a room (`room_name`), so the event can be handed off to the room. */
  readonly room: boolean;
  /** Phantom field carrying the payload type; never set. */
  readonly __data?: T;
}

export function defineEvent<S extends TObject>(type: string, schema: S, options: { description: string; room?: boolean }): EventDefinition<Static<S>> {
  return { type, schema, description: options.description, room: options.room ?? false };
}

/**
 * The events about to be written (one or more, of one type and project), as consumers see them when
 * building their fan-out. The emitting statement is built once per event type and reused for every
 * project, so a fan-out depends only on the definition and refers to the project as `projectId`, a
 * bound parameter of type uuid.
 */
export interface PendingEvent {
  readonly projectId: SQL;
  readonly definition: EventDefinition;
}

/**
 * One consumer's part of the statement that writes an event. The statement is
 *
 *   with <cause>, <before of each consumer>,
 *        event as (insert into events select … from <the cause's event rows> where <wants of any consumer>
 *                  returning id, project_id, type, data, created_at),
 *        <after of each consumer>
 *   <the jobs of each consumer, union all> → outbox
 *
 * so an event nobody wants is not stored at all. WITH items must be named `<consumer name>_…` so
 * that consumers never clash.
 */
export interface EventFanout<P = Record<string, unknown>, Keyed extends boolean = boolean> {
  /** WITH items evaluated before the event row (e.g. who subscribes). */
  before?: SQL;
  /** Whether this consumer wants the event (a boolean over `before`); always, when absent. */
  wants?: SQL;
  /** WITH items that read the `event` item and write the consumer's own rows. */
  after?: SQL;
  /** The jobs it queues, of its job type: one per row of `from` (over `event` and its WITH items); due now unless `runAt` or `gatherMs` say otherwise. */
  jobs: JobRows<P, Keyed>;
}

export interface EventConsumer<P = any, Keyed extends boolean = boolean> {
  /** Prefix of its WITH items; unique. */
  readonly name: string;
  /** The events it takes (their definitions), or every event (`ALL_EVENTS`). */
  readonly takes: readonly EventDefinition<any>[] | typeof ALL_EVENTS;
  /** The job type it queues. */
  readonly queues: JobType<P, Keyed>;
  /**
   * Its jobs fall due this long after the event, and wake no worker when written: a worker finds
   * them at its next look (its poll, or another wake-up) and runs the jobs gathered by then in one
   * settlement (`recordTogether`). For per-event work that is cheaper in bulk than one by one.
   */
  readonly gatherMs?: number | undefined;
  /** Its part of the emitting statement, for one event type (called once per type and cause). */
  fanout(event: PendingEvent): EventFanout<P, Keyed>;
}

/** Declares a consumer; its fan-out's job fields are checked against its job type's payload. */
export const defineConsumer = <P, Keyed extends boolean>(consumer: EventConsumer<P, Keyed>): EventConsumer<P, Keyed> => consumer;

/** Whether a consumer takes events of this type. */
export const takes = (consumer: EventConsumer, definition: EventDefinition<any>): boolean =>
  consumer.takes === ALL_EVENTS || consumer.takes.some((d) => d.type === definition.type);

/** Subscribing to `*` means every type, including ones added later. */
export const ALL_EVENTS = '*';

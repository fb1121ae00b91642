// Emitting a domain event: the event row and every consumer's fan-out (and their outbox jobs) in
// one statement, inside the caller's transaction or together with the change that causes it.
import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/engine.ts';
import { enqueueWithSql, rowsOf } from '../jobs/outbox.ts';
import type { EventConsumer, EventDefinition, PendingEvent } from './catalogue.ts';

/**
 * The change that causes an event, written by the same statement as the event (one round trip and
 * atomic without a transaction): `ctes` are WITH items making the change, `happened` a condition
 * over them (no event when false), `result` a select list over them returned to the caller.
 */
export interface EventCause {
  ctes: SQL;
  happened: SQL;
  result: SQL;
}

export class Events {
  readonly #definitions: ReadonlyMap<string, EventDefinition>;
  readonly #consumers: EventConsumer[] = [];

  constructor(definitions: readonly EventDefinition[]) {
    const byType = new Map<string, EventDefinition>();
    for (const definition of definitions) {
      if (byType.has(definition.type)) throw new Error(`Event type ${definition.type} is declared twice`);
      byType.set(definition.type, definition);
    }
    this.#definitions = byType;
  }

  addConsumer(consumer: EventConsumer): void {
    if (this.#consumers.some((c) => c.name === consumer.name)) throw new Error(`Event consumer ${consumer.name} is added twice`);
    this.#consumers.push(consumer);
  }

  /** Every event type, in declaration order. */
  get definitions(): readonly EventDefinition[] {
    return [...this.#definitions.values()];
  }

  definition(type: string): EventDefinition | undefined {
    return this.#definitions.get(type);
  }

  /**
   * Emits an event in the caller's transaction. Returns the event id, or undefined when no consumer
   * wants it (then nothing is written).
   */
  async emit<T>(tx: Db, projectId: string, definition: EventDefinition<T>, data: T): Promise<string | undefined> {
    const id = randomUUID();
    const { stored } = await this.#write(tx, projectId, definition, { events: oneEvent(id, data, sql`true`) });
    return stored > 0 ? id : undefined;
  }

  /**
   * Emits an event in the same statement as the change that causes it (no transaction needed).
   * Returns the event id (undefined when nothing wanted it or the change did not happen) and the
   * cause's result columns.
   */
  async emitWithCause<T>(db: Db, projectId: string, definition: EventDefinition<T>, data: T, cause: EventCause): Promise<{ eventId: string | undefined; row: Record<string, unknown> }> {
    const id = randomUUID();
    const { stored, row } = await this.#write(db, projectId, definition, {
      ctes: cause.ctes,
      events: oneEvent(id, data, cause.happened),
      result: cause.result,
    });
    return { eventId: stored > 0 ? id : undefined, row };
  }

  /**
   * Emits events of one type and project, one per row of `cause.events` (a select of `id uuid,
   * data jsonb` over the cause's WITH items), in the statement making the changes: many changes
   * and their events in one round trip. Returns how many events were stored and the result columns.
   */
  async emitEachWithCause<T>(db: Db, projectId: string, definition: EventDefinition<T>, cause: { ctes: SQL; events: SQL; result: SQL }): Promise<{ stored: number; row: Record<string, unknown> }> {
    return this.#write(db, projectId, definition, cause);
  }

  async #write(db: Db, projectId: string, definition: EventDefinition<unknown>, source: { ctes?: SQL; events: SQL; result?: SQL }): Promise<{ stored: number; row: Record<string, unknown> }> {
    if (this.#definitions.get(definition.type) !== definition) throw new Error(`Event type ${definition.type} is not in the catalogue`);
    const pending: PendingEvent = { projectId, definition: definition as EventDefinition };
    const fanouts = this.#consumers.map((c) => c.fanout(pending));
    const before = [source.ctes, ...fanouts.map((f) => f.before)].filter((s): s is SQL => s !== undefined);
    const after = fanouts.map((f) => f.after).filter((s): s is SQL => s !== undefined);
    // Every consumer's jobs with their due time: now, or `gatherMs` from now.
    const jobs = fanouts.flatMap((f) => (f.jobs === undefined ? [] : [
      sql`select topic, key, payload, ${f.gatherMs ? sql`now() + ${`${f.gatherMs} milliseconds`}::interval` : sql`null::timestamptz`} as run_at from (${f.jobs}) as j`,
    ]));
    const wants = fanouts.length > 0 ? sql.join(fanouts.map((f) => sql`(${f.wants})`), sql` or `) : sql`false`;
    const ctes = sql.join([
      ...before,
      sql`event as (
        insert into events (id, project_id, type, data)
        select e.id, ${projectId}::uuid, ${definition.type}, e.data from (${source.events}) e
        where ${wants}
        returning id, project_id, type, data, created_at
      )`,
      ...after,
    ], sql`,\n`);
    const jobSelect = jobs.length > 0
      ? sql.join(jobs.map((j) => sql`(${j})`), sql` union all `)
      : sql`select null::text as topic, null::text as key, null::jsonb as payload, null::timestamptz as run_at where false`;
    const statement = enqueueWithSql(ctes, jobSelect, sql`(select count(*) from event)::int as stored${source.result ? sql`, ${source.result}` : sql``}`, { runAt: true });
    const row = rowsOf<Record<string, unknown>>(await db.execute(statement))[0]!;
    return { stored: Number(row.stored), row };
  }
}

/** The event rows of a single event: one row when `happened` holds. */
function oneEvent(id: string, data: unknown, happened: SQL): SQL {
  return sql`select ${id}::uuid as id, ${JSON.stringify(data)}::jsonb as data where ${happened}`;
}

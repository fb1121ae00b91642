// Emitting a domain event: the event row and every consumer's fan-out (and their outbox jobs) in
// one statement, inside the caller's transaction or together with the change that causes it.
import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/engine.ts';
import { CompiledSql } from '../db/statements.ts';
import { enqueueWithSql } from '../jobs/outbox.ts';
import { rowsOf } from '../db/rows.ts';
import { takes, type EventConsumer, type EventDefinition, type PendingEvent } from './catalogue.ts';

/**
 * The change that causes an event, written by the same statement as the event (one round trip and
 * atomic without a transaction). The statement's text is built once per event type and cause
 * `name`: `build` writes its parts with `sql.placeholder(…)` for every value (names not starting
 * with `event_`), and `values` holds this call's.
 */
export interface EventCause<Parts> {
  name: string;
  build(): Parts;
  values: Record<string, unknown>;
}

/** One event's cause: `ctes` are WITH items making the change, `happened` a condition over them (no event when false), `result` a select list over them returned to the caller. */
export interface SingleCause {
  ctes: SQL;
  happened: SQL;
  result: SQL;
}

/** Many events' cause: as `SingleCause`, with `events` a select of `id uuid, data jsonb` over the WITH items, one event per row. */
export interface ManyCause {
  ctes: SQL;
  events: SQL;
  result: SQL;
}

// The event's own values, bound to these placeholders in every emitting statement.
const projectIdParam = sql`${sql.placeholder('event_project_id')}::uuid`;
const oneEvent = (happened: SQL) => sql`select ${sql.placeholder('event_id')}::uuid as id, ${sql.placeholder('event_data')}::jsonb as data where ${happened}`;
const eventValues = (projectId: string, id: string, data: unknown) => ({ event_project_id: projectId, event_id: id, event_data: JSON.stringify(data) });

export class Events {
  readonly #definitions: ReadonlyMap<string, EventDefinition>;
  readonly #consumers: EventConsumer[] = [];
  /** Emitting statements by event type and cause name, with the cause's builder; a fan-out depends only on the event's definition. */
  readonly #statements = new Map<string, { statement: CompiledSql; builder: unknown }>();

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
    this.#statements.clear();
  }

  /** Every consumer, in the order they were added. */
  get consumers(): readonly EventConsumer[] {
    return [...this.#consumers];
  }

  /** The text of the statement that emits an event of this type with every consumer's fan-out (no cause). */
  statementText(definition: EventDefinition<unknown>): string {
    return this.#statement(definition, '', undefined, () => ({ events: oneEvent(sql`true`) })).text;
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
    const statement = this.#statement(definition, '', undefined, () => ({ events: oneEvent(sql`true`) }));
    const { stored } = await this.#run(tx, statement, eventValues(projectId, id, data));
    return stored > 0 ? id : undefined;
  }

  /**
   * Emits an event in the same statement as the change that causes it (no transaction needed).
   * Returns the event id (undefined when nothing wanted it or the change did not happen) and the
   * cause's result columns.
   */
  async emitWithCause<T>(db: Db, projectId: string, definition: EventDefinition<T>, data: T, cause: EventCause<SingleCause>): Promise<{ eventId: string | undefined; row: Record<string, unknown> }> {
    const id = randomUUID();
    const statement = this.#statement(definition, cause.name, cause.build, () => {
      const parts = cause.build();
      return { ctes: parts.ctes, events: oneEvent(parts.happened), result: parts.result };
    });
    const { stored, row } = await this.#run(db, statement, { ...cause.values, ...eventValues(projectId, id, data) });
    return { eventId: stored > 0 ? id : undefined, row };
  }

  /**
   * Emits events of one type and project, one per row of the cause's `events`, in the statement
   * making the changes: many changes and their events in one round trip. Returns how many events
   * were stored and the result columns.
   */
  async emitEachWithCause<T>(db: Db, projectId: string, definition: EventDefinition<T>, cause: EventCause<ManyCause>): Promise<{ stored: number; row: Record<string, unknown> }> {
    const statement = this.#statement(definition, cause.name, cause.build, cause.build);
    return this.#run(db, statement, { ...cause.values, event_project_id: projectId });
  }

  async #run(db: Db, statement: CompiledSql, values: Record<string, unknown>): Promise<{ stored: number; row: Record<string, unknown> }> {
    const row = rowsOf<Record<string, unknown>>(await statement.run(db, values))[0]!;
    return { stored: Number(row.stored), row };
  }

  /**
   * The emitting statement of this event type and cause, built on first use. Two causes under one
   * name would silently share the first one's text, so a second builder under a name is refused.
   */
  #statement(definition: EventDefinition<unknown>, causeName: string, builder: unknown, source: () => { ctes?: SQL; events: SQL; result?: SQL }): CompiledSql {
    if (this.#definitions.get(definition.type) !== definition) throw new Error(`Event type ${definition.type} is not in the catalogue`);
    const key = `${definition.type}\n${causeName}`;
    const cached = this.#statements.get(key);
    if (cached) {
      if (cached.builder !== builder) throw new Error(`Two causes of ${definition.type} are named ${JSON.stringify(causeName)}: give each its own name`);
      return cached.statement;
    }
    const statement = new CompiledSql(this.#build(definition as EventDefinition, source()));
    this.#statements.set(key, { statement, builder });
    return statement;
  }

  #build(definition: EventDefinition, source: { ctes?: SQL; events: SQL; result?: SQL }): SQL {
    const pending: PendingEvent = { projectId: projectIdParam, definition };
    const consumers = this.#consumers.filter((c) => takes(c, definition));
    const fanouts = consumers.map((c) => ({ consumer: c, fanout: c.fanout(pending) }));
    const before = [source.ctes, ...fanouts.map((f) => f.fanout.before)].filter((s): s is SQL => s !== undefined);
    const after = fanouts.map((f) => f.fanout.after).filter((s): s is SQL => s !== undefined);
    // Every consumer's jobs with their due time: now, or `gatherMs` from now.
    const jobs = fanouts.map(({ consumer, fanout }) => consumer.queues.select({
      ...fanout.jobs,
      runAt: fanout.jobs.runAt ?? (consumer.gatherMs ? sql`now() + ${`${consumer.gatherMs} milliseconds`}::interval` : sql`null::timestamptz`),
    }));
    const wants = fanouts.length > 0 ? sql.join(fanouts.map((f) => sql`(${f.fanout.wants ?? sql`true`})`), sql` or `) : sql`false`;
    const ctes = sql.join([
      ...before,
      sql`event as (
        insert into events (id, project_id, type, data)
        select e.id, ${projectIdParam}, ${definition.type}, e.data from (${source.events}) e
        where ${wants}
        returning id, project_id, type, data, created_at
      )`,
      ...after,
    ], sql`,\n`);
    const allJobs = jobs.length > 0
      ? sql.join(jobs.map((j) => sql`(${j})`), sql` union all `)
      : sql`select null::text as topic, null::text as key, null::jsonb as payload, null::timestamptz as run_at where false`;
    return enqueueWithSql(ctes, allJobs, sql`(select count(*) from event)::int as stored${source.result ? sql`, ${source.result}` : sql``}`, { runAt: true });
  }
}

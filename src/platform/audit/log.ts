// The audit log's table and its two ways in: `write` inside the transaction of the change an entry
// records (no entry without the change, no change without the entry), and `later` for what happened
// without a change (refusals, failed sign-ins), which waits for nobody: such entries of one second
// travel together in one statement, so a burst of refusals costs no request a round trip. A
// project's entries are also its `audit.recorded` events (src/platform/audit/view.ts), written by
// the same statement, for webhooks to deliver.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/engine.ts';
import { GroupCommit } from '../db/group-commit.ts';
import { rowsOf } from '../db/rows.ts';
import { CompiledSql, preparedPerDb } from '../db/statements.ts';
import type { EventCause, Events, ManyCause, SingleCause } from '../events/emit.ts';
import { pruneInBatches, type RetentionLimits } from '../jobs/retention.ts';
import { auditLogTable, type AuditRow } from './table.ts';
import { auditRecorded, entryView } from './view.ts';


export const AUDIT_OUTCOMES = ['succeeded', 'refused', 'failed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** Who acted: a user, an API key, a participant token, an OAuth client, an operator at the server's shell, or nobody known (`anonymous`: a failed sign-in). */
export interface AuditActor {
  readonly type: 'user' | 'api_key' | 'participant' | 'oauth_client' | 'operator' | 'anonymous';
  readonly id?: string | undefined;
  readonly name?: string | undefined;
  readonly credentialKind?: string | undefined;
  readonly credentialId?: string | undefined;
  readonly oauthClientId?: string | undefined;
}

/** Where a request came from: its id, its client's address (through the trusted proxies) and user agent. */
export interface AuditOrigin {
  readonly requestId?: string | undefined;
  readonly clientAddress?: string | undefined;
  readonly userAgent?: string | undefined;
}

/** One entry. Never a secret: actions, names and ids only, and the reason in the service's own words. */
export interface AuditEntry {
  /** The project, or null for the deployment's own events. */
  readonly projectId: string | null;
  readonly actor: AuditActor;
  /** `<type>.<action>`: a route's declared resource action, or a security event's name. */
  readonly action: string;
  readonly target?: { readonly type: string; readonly id?: string | undefined } | undefined;
  readonly outcome: AuditOutcome;
  readonly reason?: string | undefined;
  readonly origin?: AuditOrigin | undefined;
}

const MAX_TEXT = 512;
const clip = (value: string | undefined) => (value === undefined ? null : value.slice(0, MAX_TEXT));

function rowOf(entry: AuditEntry): Omit<AuditRow, 'seq'> {
  const { actor, target, origin } = entry;
  return {
    id: randomUUID(),
    at: new Date(),
    projectId: entry.projectId,
    actorType: actor.type,
    actorId: clip(actor.id),
    actorName: clip(actor.name),
    credentialKind: clip(actor.credentialKind),
    credentialId: clip(actor.credentialId),
    oauthClientId: clip(actor.oauthClientId),
    action: entry.action,
    targetType: clip(target?.type),
    targetId: clip(target?.id),
    outcome: entry.outcome,
    reason: clip(entry.reason),
    requestId: clip(origin?.requestId),
    clientAddress: clip(origin?.clientAddress),
    userAgent: clip(origin?.userAgent),
  };
}

type EntryRow = ReturnType<typeof rowOf>;
const ENTRY_COLUMNS = Object.keys(getTableColumns(auditLogTable)).filter((key) => key !== 'seq') as (keyof EntryRow)[];
const columnName = (key: keyof EntryRow) => auditLogTable[key].name;
const columnType = (key: keyof EntryRow) => auditLogTable[key].getSQLType();

// A deployment's entry (no project, so no event) is one insert, built once (preparedPerDb): its
// placeholders take the row's values as the columns map them.
const insertEntry = preparedPerDb((db) => db.insert(auditLogTable)
  .values(Object.fromEntries(ENTRY_COLUMNS.map((key) => [key, sql.placeholder(key)])) as never).prepare('audit_insert'));

// A project's entry is written by the statement that emits its `audit.recorded` event, so that a
// webhook subscribed to it is queued with the entry, and nobody's entry costs a second statement.
// Its values are bound as `audit_<key>`, clear of the names of a change it is written with.
const columnList = sql.raw(ENTRY_COLUMNS.map(columnName).join(', '));
const entryValues = (row: EntryRow) => Object.fromEntries(ENTRY_COLUMNS.map((key) => [`audit_${key}`, key === 'at' ? row.at.toISOString() : row[key]]));
/** The WITH item `audit_entry` that writes the entry when `happened` holds. */
const entryInsert = (happened: SQL) => sql`audit_entry as (
    insert into audit_log (${columnList})
    select ${sql.join(ENTRY_COLUMNS.map((key) => sql`${sql.placeholder(`audit_${key}`)}::${sql.raw(columnType(key))}`), sql`, `)}
    where ${happened}
    returning seq
  )`;
const audited = sql`(select count(*) from audit_entry)::int as audited`;
const oneEntry: EventCause<SingleCause>['build'] = () => ({ ctes: entryInsert(sql`true`), happened: sql`true`, result: audited });
/** A change's statement with the entry of the request making it, written when the change happened. */
const withEntry = (change: SingleCause): SingleCause => ({
  ctes: sql`${change.ctes},\n${entryInsert(change.happened)}`,
  happened: change.happened,
  result: sql`${change.result}, ${audited}`,
});

// Many entries of one project (refusals gathered over a second): their rows as one JSON array.
const manyEntries: EventCause<ManyCause>['build'] = () => ({
  ctes: sql`audit_input as (
    select * from jsonb_to_recordset(${sql.placeholder('entries')}::jsonb)
      as r(${sql.raw(ENTRY_COLUMNS.map((key) => `${columnName(key)} ${columnType(key)}`).join(', '))}, data jsonb)
  ), audit_entries as (
    insert into audit_log (${columnList}) select ${columnList} from audit_input
  )`,
  events: sql`select gen_random_uuid() as id, data from audit_input`,
  result: sql`true as written`,
});

/**
 * The entry a request's change of one statement writes itself (`AuditLog.change`): set by the audit
 * step around the handler of a route declaring `audit: 'statement'` (src/platform/http/audit.ts).
 */
interface PendingEntry {
  /** The entry, naming `targetId` (a created resource) when given. */
  entry(targetId: string | undefined): AuditEntry;
  written: boolean;
}
const pendingEntries = new AsyncLocalStorage<PendingEntry>();

/** How long an entry nobody waits for lingers for others to join its statement. */
const LINGER_MS = 1000;

export class AuditLog {
  readonly #db: Db;
  readonly #events: Events;
  readonly #later: GroupCommit<AuditEntry, undefined>;
  /** Builders of changes with their entry, one per change's builder (an event's statement is cached with its builder). */
  readonly #withEntries = new WeakMap<() => SingleCause, () => SingleCause>();
  /** Statements of changes made without an entry, by cause name. */
  readonly #changesAlone = new Map<string, CompiledSql>();

  constructor(db: Db, events: Events) {
    this.#db = db;
    this.#events = events;
    // Grouped by project: one statement writes a project's entries and their events.
    this.#later = new GroupCommit(async (entries) => {
      const rows = entries.map(rowOf);
      const projectId = rows[0]!.projectId;
      if (projectId === null) {
        await this.#db.insert(auditLogTable).values(rows);
      } else {
        const json = rows.map((row) => ({ ...Object.fromEntries(ENTRY_COLUMNS.map((key) => [columnName(key), row[key]])), data: entryView(row) }));
        await this.#events.emitEachWithCause(this.#db, projectId, auditRecorded, { name: 'audit.entries', build: manyEntries, values: { entries: JSON.stringify(json) } });
      }
      return entries.map(() => undefined);
    }, { lingerMs: LINGER_MS });
  }

  /**
   * Writes an entry in the transaction of the change it records: `db`'s own, or the request's
   * transaction in flight when `db` is the service's handle.
   */
  async write(db: Db, entry: AuditEntry): Promise<void> {
    const row = rowOf(entry);
    if (row.projectId === null) await insertEntry(db).execute(row);
    else await this.#events.emitWithCause(db, row.projectId, auditRecorded, entryView(row), { name: 'audit.entry', build: oneEntry, values: entryValues(row) });
  }

  /**
   * Runs `fn` (a route's handler) with `entry` pending for its one-statement change (`change`).
   * Says whether the change wrote it: when not (nothing changed), the caller writes it.
   */
  async pending<T>(entry: PendingEntry['entry'], fn: () => Promise<T>): Promise<{ value: T; written: boolean }> {
    const slot: PendingEntry = { entry, written: false };
    const value = await pendingEntries.run(slot, fn);
    return { value, written: slot.written };
  }

  /**
   * A change made by one statement (its WITH items, whether it happened, what it returns), written
   * together with the pending entry of the request making it and that entry's event: atomic without
   * a transaction, and no statement more than the change. `targetId` names the resource it creates.
   * Without a pending entry (a job, a command, a route the step runs in a transaction) the change
   * runs alone. Returns the change's result columns. A second change under one pending entry is
   * refused: it would go unrecorded.
   */
  async change(db: Db, cause: EventCause<SingleCause>, targetId?: string): Promise<Record<string, unknown>> {
    const slot = pendingEntries.getStore();
    if (slot === undefined) return this.#alone(db, cause);
    if (slot.written) throw new Error(`AuditLog.change: ${cause.name} is a second change of a route declared to make one (audit: 'statement')`);
    const row = rowOf(slot.entry(targetId));
    if (row.projectId === null) throw new Error('AuditLog.change: a change of one statement is a project\'s');
    const { row: result } = await this.#events.emitWithCause(db, row.projectId, auditRecorded, entryView(row), {
      name: `${cause.name}+audit`, build: this.#withEntry(cause.build), values: { ...cause.values, ...entryValues(row) },
    });
    slot.written = Number(result.audited) > 0;
    return result;
  }

  #withEntry(build: () => SingleCause): () => SingleCause {
    let built = this.#withEntries.get(build);
    if (built === undefined) this.#withEntries.set(build, (built = () => withEntry(build())));
    return built;
  }

  async #alone(db: Db, cause: EventCause<SingleCause>): Promise<Record<string, unknown>> {
    let statement = this.#changesAlone.get(cause.name);
    if (statement === undefined) {
      const { ctes, result } = cause.build();
      this.#changesAlone.set(cause.name, (statement = new CompiledSql(sql`with ${ctes} select ${result}`)));
    }
    return rowsOf<Record<string, unknown>>(await statement.run(db, cause.values))[0]!;
  }

  /** Writes an entry of something that changed nothing, soon, together with others of its project; resolves once written. */
  later(entry: AuditEntry): Promise<undefined> {
    return this.#later.add(entry.projectId ?? '', entry);
  }

  /** Writes what lingers now (on shutdown, and for readers that must see it). */
  flush(): Promise<void> {
    return this.#later.flush();
  }

  /**
   * Removes the entries older than `before`, a batch at a time: the one deletion the table allows,
   * each batch in a transaction that says it is the retention job's. Returns how many went.
   */
  prune(before: Date, limits: Pick<RetentionLimits, 'batchSize' | 'maxBatches'>, db: Db = this.#db): Promise<number> {
    return pruneInBatches('audit_log', limits, (limit) => db.transaction(async (tx) => {
      await tx.execute(sql`set local atrium.audit_retention = 'on'`);
      return rowsOf(await tx.execute(sql`
        delete from audit_log where seq in (select seq from audit_log where at < ${before.toISOString()}::timestamptz order by seq limit ${limit})
        returning seq`)).length;
    }));
  }
}

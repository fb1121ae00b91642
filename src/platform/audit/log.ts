// The audit log's table and its two ways in: `write` inside the transaction of the change an entry
// records (no entry without the change, no change without the entry), and `later` for what happened
// without a change (refusals, failed sign-ins), which waits for nobody: such entries of one second
// travel together in one statement, so a burst of refusals costs no request a round trip.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { bigint, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import type { Db } from '../db/engine.ts';
import { timestamptz } from '../db/columns.ts';
import { GroupCommit } from '../db/group-commit.ts';
import { rowsOf } from '../db/rows.ts';
import { preparedPerDb } from '../db/statements.ts';
import { pruneInBatches, type RetentionLimits } from '../jobs/retention.ts';

export const auditLogTable = pgTable('audit_log', {
  seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  id: uuid('id').notNull(),
  at: timestamptz('at').notNull().defaultNow(),
  projectId: uuid('project_id'),
  actorType: text('actor_type').notNull(),
  actorId: text('actor_id'),
  actorName: text('actor_name'),
  credentialKind: text('credential_kind'),
  credentialId: text('credential_id'),
  oauthClientId: text('oauth_client_id'),
  action: text('action').notNull(),
  targetType: text('target_type'),
  targetId: text('target_id'),
  outcome: text('outcome').notNull(),
  reason: text('reason'),
  requestId: text('request_id'),
  clientAddress: text('client_address'),
  userAgent: text('user_agent'),
});

export type AuditRow = typeof auditLogTable.$inferSelect;

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

function rowOf(entry: AuditEntry) {
  const { actor, target, origin } = entry;
  return {
    id: randomUUID(),
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
const placeholders = (columns: readonly (keyof EntryRow)[]) => Object.fromEntries(columns.map((column) => [column, sql.placeholder(column)]));
const ENTRY_COLUMNS = ['id', 'projectId', 'actorType', 'actorId', 'actorName', 'credentialKind', 'credentialId', 'oauthClientId', 'action', 'targetType', 'targetId', 'outcome', 'reason', 'requestId', 'clientAddress', 'userAgent'] as const satisfies readonly (keyof EntryRow)[];

// Every audited request writes one: built once, run on the request's transaction (preparedPerDb).
const insertEntry = preparedPerDb((db) => db.insert(auditLogTable).values(placeholders(ENTRY_COLUMNS) as never).prepare('audit_insert'));

/** How long an entry nobody waits for lingers for others to join its statement. */
const LINGER_MS = 1000;

export class AuditLog {
  readonly #db: Db;
  readonly #later: GroupCommit<AuditEntry, undefined>;

  constructor(db: Db) {
    this.#db = db;
    this.#later = new GroupCommit(async (entries) => {
      await this.#db.insert(auditLogTable).values(entries.map(rowOf));
      return entries.map(() => undefined);
    }, { lingerMs: LINGER_MS });
  }

  /**
   * Writes an entry in the transaction of the change it records: `db`'s own, or the request's
   * transaction in flight when `db` is the service's handle.
   */
  async write(db: Db, entry: AuditEntry): Promise<void> {
    await insertEntry(db).execute(rowOf(entry));
  }

  /** Writes an entry of something that changed nothing, soon, together with others; resolves once written. */
  later(entry: AuditEntry): Promise<undefined> {
    return this.#later.add('audit', entry);
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

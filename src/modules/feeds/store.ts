// Feeds, their messages and their subscriptions. Every query is keyed by the project id, or by a
// subscription or feed id that a project-keyed query produced.
//
// Ordering and wake-ups rest on the feed row. A publish takes it (`update … set last_seq`) for its
// whole transaction, so messages get gap-free seqs that commit in order. A flush that decides
// whether more is waiting first takes it in share mode, so it waits for a publish in flight and
// then sees its messages; a publish after it finds the subscription's `flush_due_at` in the state
// the flush left. Together: a message is never left waiting without a flush job to write it.
import { and, asc, eq, getTableColumns, ilike, inArray, or, sql, type SQL } from 'drizzle-orm';
import { bigint, boolean, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import { enqueueWithSql } from '../../platform/jobs/outbox.ts';
import { rowsOf } from '../../platform/db/rows.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { roomsTable } from '../rooms/tables.ts';
import { flushJob } from './jobs.ts';

export const feedsTable = pgTable('feeds', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  visibility: text('visibility').$type<'public' | 'project' | 'private'>().notNull(),
  paused: boolean('paused').notNull().default(false),
  annotations: jsonb('annotations').$type<Record<string, string>>().notNull().default({}),
  messageSchema: jsonb('message_schema').$type<unknown>(),
  schemaVersion: integer('schema_version').notNull().default(1),
  lastSeq: bigint('last_seq', { mode: 'number' }).notNull().default(0),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});
export type FeedRow = typeof feedsTable.$inferSelect;

export const subscriptionsTable = pgTable('feed_subscriptions', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  feedId: uuid('feed_id').notNull(),
  roomId: uuid('room_id').notNull(),
  path: text('path').notNull(),
  filenameDatetimeFormat: text('filename_datetime_format'),
  annotations: jsonb('annotations').$type<Record<string, string>>().notNull().default({}),
  deliveredSeq: bigint('delivered_seq', { mode: 'number' }).notNull(),
  pendingToSeq: bigint('pending_to_seq', { mode: 'number' }),
  pendingFile: text('pending_file'),
  flushDueAt: timestamptz('flush_due_at'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});
export type SubscriptionRow = typeof subscriptionsTable.$inferSelect & { room: string };

/** When a subscription's next file is due: what publishers and flushes agree on. */
export interface FlushPolicy {
  /** The window: the longest a message waits. */
  windowMs: number;
  /** A file is due at once when this many messages wait; also the most lines per file. */
  maxMessages: number;
}

// ---- feeds ---------------------------------------------------------------------------------------

export async function insertFeed(db: Db, feed: typeof feedsTable.$inferInsert): Promise<FeedRow | undefined> {
  const [row] = await db.insert(feedsTable).values(feed).onConflictDoNothing({ target: [feedsTable.projectId, feedsTable.name] }).returning();
  return row;
}

export async function findFeed(db: Db, projectId: string, id: string): Promise<FeedRow | undefined> {
  const [row] = await db.select().from(feedsTable).where(and(eq(feedsTable.projectId, projectId), eq(feedsTable.id, id)));
  return row;
}

export async function findFeedByName(db: Db, projectId: string, name: string): Promise<FeedRow | undefined> {
  const [row] = await db.select().from(feedsTable).where(and(eq(feedsTable.projectId, projectId), eq(feedsTable.name, name)));
  return row;
}

/**
 * A page of a project's feeds. `privateToo` includes every private feed (true) or those with these
 * ids (the caller's roles on feed policies); `roomId` narrows to the feeds a
 * room sees: project and public ones, and any with a subscription into that room.
 */
export async function listFeeds(db: Db, projectId: string, page: Page, options: { privateToo: true | readonly string[]; roomId?: string | undefined }) {
  const conditions: (SQL | undefined)[] = [eq(feedsTable.projectId, projectId)];
  if (options.privateToo !== true) {
    const shown = options.privateToo.filter(isUuid);
    conditions.push(shown.length > 0
      ? or(inArray(feedsTable.visibility, ['public', 'project']), inArray(feedsTable.id, shown))
      : inArray(feedsTable.visibility, ['public', 'project']));
  }
  if (options.roomId) {
    conditions.push(or(
      inArray(feedsTable.visibility, ['public', 'project']),
      sql`exists (select 1 from ${subscriptionsTable} s where s.feed_id = ${feedsTable.id} and s.room_id = ${options.roomId}::uuid)`,
    ));
  }
  if (page.filter) conditions.push(ilike(feedsTable.name, likeContains(page.filter)));
  const where = and(...conditions);
  const rows = await db.select({ ...getTableColumns(feedsTable), total: windowTotal }).from(feedsTable).where(where)
    .orderBy(asc(feedsTable.name), asc(feedsTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, feedsTable, where));
}

export async function updateFeed(db: Db, projectId: string, id: string, changes: Partial<Pick<FeedRow, 'name' | 'description' | 'paused' | 'annotations' | 'messageSchema'>> & { newSchema: boolean }): Promise<FeedRow | undefined> {
  const { newSchema, ...rest } = changes;
  const [row] = await db.update(feedsTable)
    .set({ ...rest, ...(newSchema ? { schemaVersion: sql`${feedsTable.schemaVersion} + 1` } : {}), updatedAt: new Date() })
    .where(and(eq(feedsTable.projectId, projectId), eq(feedsTable.id, id))).returning();
  return row;
}

export async function deleteFeed(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(feedsTable).where(and(eq(feedsTable.projectId, projectId), eq(feedsTable.id, id))).returning({ id: feedsTable.id });
  return rows.length > 0;
}

/**
 * After a resume (in its transaction, which holds the feed row): every subscription with messages
 * waiting and no flush scheduled gets one now.
 */
export async function scheduleWaiting(tx: Db, feedId: string): Promise<void> {
  await tx.execute(enqueueWithSql(
    sql`due as (
      update feed_subscriptions s set flush_due_at = now()
      from feeds f
      where f.id = ${feedId}::uuid and s.feed_id = f.id and s.flush_due_at is null and (s.delivered_seq < f.last_seq or s.pending_to_seq is not null)
      returning s.id
    )`,
    flushJob.select({ from: sql`due`, payload: { subscription_id: sql`id` } }),
  ));
}

export interface AcceptedMessage {
  id: string;
  seq: number;
  createdAt: Date;
}

/**
 * Stores messages (compact JSON texts) in one statement: takes their seqs from the feed row (which
 * it keeps locked until commit), and schedules a flush for every subscription that had none, due
 * after the window or at once when a file's worth is waiting. Undefined when the feed is not
 * there, is paused, or its schema changed since `schemaVersion` (the caller tells which).
 */
export async function publish(db: Db, input: { projectId: string; feedId: string; schemaVersion: number; messages: readonly string[]; policy: FlushPolicy }): Promise<AcceptedMessage[] | undefined> {
  const n = input.messages.length;
  const { windowMs, maxMessages } = input.policy;
  const result = await db.execute(enqueueWithSql(
    sql`feed as (
      update feeds set last_seq = last_seq + ${n}
      where id = ${input.feedId}::uuid and project_id = ${input.projectId}::uuid and not paused and schema_version = ${input.schemaVersion}
      returning id, last_seq
    ),
    accepted as (
      insert into feed_messages (feed_id, seq, id, data)
      select feed.id, feed.last_seq - ${n} + m.ord, gen_random_uuid(), m.data
      from feed, jsonb_array_elements_text(${JSON.stringify(input.messages)}::jsonb) with ordinality as m(data, ord)
      returning id, seq, created_at
    ),
    due as (
      update feed_subscriptions s
      set flush_due_at = case when feed.last_seq - s.delivered_seq >= ${maxMessages} then now() else now() + ${windowMs} * interval '1 millisecond' end
      from feed
      where s.feed_id = feed.id
        and (s.flush_due_at is null or (s.flush_due_at > now() and feed.last_seq - s.delivered_seq >= ${maxMessages}))
      returning s.id, s.flush_due_at
    )`,
    flushJob.select({ from: sql`due`, payload: { subscription_id: sql`id` }, runAt: sql`flush_due_at` }),
    sql`(select count(*) from feed)::int as found,
        (select coalesce(jsonb_agg(jsonb_build_array(id, seq, (extract(epoch from created_at) * 1000)::float8) order by seq), '[]'::jsonb) from accepted) as accepted`,
    { runAt: true },
  ));
  const row = rowsOf<{ found: number; accepted: [string, number, number][] }>(result)[0]!;
  if (Number(row.found) === 0) return undefined;
  return row.accepted.map(([id, seq, ms]) => ({ id, seq: Number(seq), createdAt: new Date(ms) }));
}

// ---- subscriptions -------------------------------------------------------------------------------

const subscriptionColumns = { ...getTableColumns(subscriptionsTable), room: roomsTable.name };

/** Inserts a subscription that starts after the feed's latest message (waiting for a publish in flight). */
export async function insertSubscription(db: Db, row: { id: string; projectId: string; feedId: string; roomId: string; path: string; filenameDatetimeFormat: string | null; annotations: Record<string, string> }): Promise<boolean> {
  const result = await db.execute(sql`
    insert into feed_subscriptions (id, project_id, feed_id, room_id, path, filename_datetime_format, annotations, delivered_seq)
    select ${row.id}::uuid, ${row.projectId}::uuid, f.id, ${row.roomId}::uuid, ${row.path}, ${row.filenameDatetimeFormat}, ${JSON.stringify(row.annotations)}::jsonb, f.last_seq
    from (select id, last_seq from feeds where id = ${row.feedId}::uuid and project_id = ${row.projectId}::uuid for share) f
    returning id`);
  return rowsOf(result).length > 0;
}

export async function findSubscription(db: Db, projectId: string, feedId: string, id: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db.select(subscriptionColumns).from(subscriptionsTable).innerJoin(roomsTable, eq(roomsTable.id, subscriptionsTable.roomId))
    .where(and(eq(subscriptionsTable.projectId, projectId), eq(subscriptionsTable.feedId, feedId), eq(subscriptionsTable.id, id)));
  return row;
}

export async function listSubscriptions(db: Db, projectId: string, feedId: string, page: Page) {
  const conditions: (SQL | undefined)[] = [eq(subscriptionsTable.projectId, projectId), eq(subscriptionsTable.feedId, feedId)];
  if (page.filter) conditions.push(ilike(roomsTable.name, likeContains(page.filter)));
  const where = and(...conditions);
  const rows = await db.select({ ...subscriptionColumns, total: windowTotal }).from(subscriptionsTable).innerJoin(roomsTable, eq(roomsTable.id, subscriptionsTable.roomId))
    .where(where).orderBy(asc(subscriptionsTable.createdAt), asc(subscriptionsTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, async () => {
    const [count] = await db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(subscriptionsTable).innerJoin(roomsTable, eq(roomsTable.id, subscriptionsTable.roomId)).where(where);
    return count?.n ?? 0;
  });
}

export async function updateSubscription(db: Db, projectId: string, feedId: string, id: string, changes: Partial<Pick<SubscriptionRow, 'filenameDatetimeFormat' | 'annotations'>>): Promise<boolean> {
  const rows = await db.update(subscriptionsTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(subscriptionsTable.projectId, projectId), eq(subscriptionsTable.feedId, feedId), eq(subscriptionsTable.id, id))).returning({ id: subscriptionsTable.id });
  return rows.length > 0;
}

export async function deleteSubscription(db: Db, projectId: string, feedId: string, id: string): Promise<boolean> {
  const rows = await db.delete(subscriptionsTable)
    .where(and(eq(subscriptionsTable.projectId, projectId), eq(subscriptionsTable.feedId, feedId), eq(subscriptionsTable.id, id))).returning({ id: subscriptionsTable.id });
  return rows.length > 0;
}

// ---- delivery ------------------------------------------------------------------------------------

/** A batch a subscription is writing: messages (fromSeq, toSeq] of its feed into `file`. */
export interface PendingBatch {
  subscriptionId: string;
  projectId: string;
  feedId: string;
  fromSeq: number;
  toSeq: number;
  file: string;
}

/** Takes the feed row in share mode: waits for a publish in flight, so its messages are seen next. */
async function holdFeed(tx: Db, subscriptionId: string): Promise<{ paused: boolean } | undefined> {
  const [row] = rowsOf<{ paused: boolean }>(await tx.execute(sql`
    select f.paused from feeds f where f.id = (select feed_id from feed_subscriptions where id = ${subscriptionId}::uuid) for share`));
  return row;
}

/**
 * The batch to write next, reserved so that a crash before it is acknowledged writes the same one
 * again: the one already pending, or — when the flush is due and the feed not paused — the next
 * messages (at most `maxMessages`), with the file named by `nameFile` from the first one. Undefined
 * when there is nothing to write now (and then no flush is left scheduled, unless one is due later).
 */
export async function reserveBatch(db: Db, subscriptionId: string, policy: FlushPolicy, nameFile: (sub: { id: string; projectId: string; room: string; path: string; format: string | null }, first: { seq: number; createdAt: Date }) => string): Promise<PendingBatch | undefined> {
  return db.transaction(async (tx) => {
    const feed = await holdFeed(tx, subscriptionId);
    if (!feed) return undefined;
    const [sub] = rowsOf<{ id: string; project_id: string; feed_id: string; room: string; path: string; format: string | null; delivered_seq: string; pending_to_seq: string | null; pending_file: string | null; due: boolean | null }>(await tx.execute(sql`
      select s.id, s.project_id, s.feed_id, r.name as room, s.path, s.filename_datetime_format as format, s.delivered_seq, s.pending_to_seq, s.pending_file,
             s.flush_due_at <= now() as due
      from feed_subscriptions s join rooms r on r.id = s.room_id
      where s.id = ${subscriptionId}::uuid
      for update of s`));
    if (!sub) return undefined;
    const base = { subscriptionId: sub.id, projectId: sub.project_id, feedId: sub.feed_id, fromSeq: Number(sub.delivered_seq) };
    if (sub.pending_to_seq !== null) return { ...base, toSeq: Number(sub.pending_to_seq), file: sub.pending_file! };
    if (feed.paused) {
      await tx.update(subscriptionsTable).set({ flushDueAt: null }).where(eq(subscriptionsTable.id, sub.id));
      return undefined;
    }
    // Not due: a job left over from a crash, or one whose flush was brought forward.
    if (!sub.due) return undefined;
    const [span] = rowsOf<{ first_seq: string | null; last_seq: string | null; first_ms: number | null }>(await tx.execute(sql`
      select min(seq) as first_seq, max(seq) as last_seq, (extract(epoch from min(created_at)) * 1000)::float8 as first_ms
      from (select seq, created_at from feed_messages where feed_id = ${sub.feed_id}::uuid and seq > ${sub.delivered_seq}::bigint order by seq limit ${policy.maxMessages}) m`));
    if (!span || span.first_seq === null) {
      await tx.update(subscriptionsTable).set({ flushDueAt: null }).where(eq(subscriptionsTable.id, sub.id));
      return undefined;
    }
    const file = nameFile({ id: sub.id, projectId: sub.project_id, room: sub.room, path: sub.path, format: sub.format }, { seq: Number(span.first_seq), createdAt: new Date(Number(span.first_ms)) });
    await tx.update(subscriptionsTable).set({ pendingToSeq: Number(span.last_seq), pendingFile: file }).where(eq(subscriptionsTable.id, sub.id));
    return { ...base, toSeq: Number(span.last_seq), file };
  });
}

/** The stored texts of messages (fromSeq, toSeq] of a feed, in order. */
export async function batchMessages(db: Db, feedId: string, fromSeq: number, toSeq: number): Promise<string[]> {
  const rows = rowsOf<{ data: string }>(await db.execute(sql`
    select data from feed_messages where feed_id = ${feedId}::uuid and seq > ${fromSeq}::bigint and seq <= ${toSeq}::bigint order by seq`));
  return rows.map((r) => r.data);
}

/**
 * Acknowledges a written batch in the caller's transaction: advances the subscription past it and
 * schedules the next flush if messages wait (at once when a file's worth does). False when the
 * batch is no longer pending (the subscription was deleted, or another run acknowledged it).
 */
export async function completeBatch(tx: Db, batch: PendingBatch, policy: FlushPolicy): Promise<boolean> {
  if (!(await holdFeed(tx, batch.subscriptionId))) return false;
  const result = await tx.execute(enqueueWithSql(
    sql`next as (
      select min(created_at) as oldest, count(*) as waiting
      from (select created_at from feed_messages where feed_id = ${batch.feedId}::uuid and seq > ${batch.toSeq}::bigint order by seq limit ${policy.maxMessages}) m
    ),
    acknowledged as (
      update feed_subscriptions s set delivered_seq = ${batch.toSeq}::bigint, pending_to_seq = null, pending_file = null, updated_at = now(),
        flush_due_at = case
          when next.waiting = 0 then null
          when next.waiting >= ${policy.maxMessages} then now()
          else greatest(now(), next.oldest + ${policy.windowMs} * interval '1 millisecond') end
      from next
      where s.id = ${batch.subscriptionId}::uuid and s.pending_to_seq = ${batch.toSeq}::bigint
      returning s.id, s.flush_due_at
    )`,
    flushJob.select({ from: sql`acknowledged where flush_due_at is not null`, payload: { subscription_id: sql`id` }, runAt: sql`flush_due_at` }),
    sql`(select count(*) from acknowledged)::int as acknowledged`,
    { runAt: true },
  ));
  return Number(rowsOf<{ acknowledged: number }>(result)[0]?.acknowledged ?? 0) > 0;
}

/** Deletes messages every subscription of their feed has delivered (all of them when it has none). */
export async function pruneDelivered(db: Db): Promise<number> {
  const result = await db.execute(sql`
    with done as (
      select f.id, coalesce((select min(s.delivered_seq) from feed_subscriptions s where s.feed_id = f.id), f.last_seq) as upto
      from feeds f
    ),
    deleted as (
      delete from feed_messages m using done where m.feed_id = done.id and m.seq <= done.upto returning 1
    )
    select count(*)::int as n from deleted`);
  return Number(rowsOf<{ n: number }>(result)[0]?.n ?? 0);
}

// Rules for feeds, their messages and their subscriptions: who sees a feed (its visibility), who may
// publish to it, what a message must look like (its message_schema), and where a subscription
// writes (a folder of a room's storage).
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { Principal, ProjectAccess } from '../../platform/http/auth.ts';
import { ApiError, badRequest, conflict, forbidden, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { getRoom } from '../rooms/service.ts';
import { roomStoragePath } from '../storage/service.ts';
import { validateDatetimeFormat } from './filenames.ts';
import * as store from './store.ts';

type Visibility = store.FeedRow['visibility'];

export function feedView(feed: store.FeedRow) {
  return {
    id: feed.id,
    project_id: feed.projectId,
    name: feed.name,
    description: feed.description,
    visibility: feed.visibility,
    paused: feed.paused,
    annotations: feed.annotations,
    message_schema: feed.messageSchema ?? null,
    created_at: feed.createdAt.toISOString(),
    updated_at: feed.updatedAt.toISOString(),
  };
}

export function subscriptionView(sub: store.SubscriptionRow) {
  return {
    id: sub.id,
    feed_id: sub.feedId,
    project_id: sub.projectId,
    room: sub.room,
    room_id: sub.roomId,
    path: sub.path,
    filename_datetime_format: sub.filenameDatetimeFormat,
    annotations: sub.annotations,
    created_at: sub.createdAt.toISOString(),
    updated_at: sub.updatedAt.toISOString(),
  };
}

/** The flush policy from the settings (ATRIUM_FEEDS_FLUSH_SECONDS and _MESSAGES). */
export function flushPolicy(ctx: AppContext): store.FlushPolicy {
  return { windowMs: ctx.config.feeds.flushMs, maxMessages: ctx.config.feeds.flushMessages };
}

// ---- message schemas -----------------------------------------------------------------------------

/** Validators by feed and schema version: compiled once per version, not per message. */
const validators = new LRUCache<string, ValidateFunction | true>({ max: 2000 });

/**
 * Compiles a message schema; 400 with ajv's reason when it is not one. A fresh ajv instance per
 * schema, so that one feed's `$id`s never clash with another's.
 */
function compileMessageSchema(schema: unknown): ValidateFunction | true {
  if (schema === null || schema === true) return true;
  const options = { strict: false, allErrors: false, validateFormats: true } as const;
  const draft2020 = typeof schema === 'object' && /2019-09|2020-12/.test(String((schema as { $schema?: unknown }).$schema ?? ''));
  const ajv = draft2020 ? new Ajv2020(options) : new Ajv(options);
  addFormats.default(ajv);
  try {
    return ajv.compile(schema as object | boolean);
  } catch (error) {
    throw badRequest(`message_schema is not a usable JSON Schema: ${(error as Error).message}`);
  }
}

function validatorFor(feed: store.FeedRow): ValidateFunction | true {
  const key = `${feed.id}:${feed.schemaVersion}`;
  let validate = validators.get(key);
  if (validate === undefined) validators.set(key, (validate = compileMessageSchema(feed.messageSchema ?? null)));
  return validate;
}

/** Checks messages against the feed's schema; the refusal names the message's index and the failing path. */
function validateMessages(feed: store.FeedRow, messages: readonly unknown[], batch: boolean): void {
  const validate = validatorFor(feed);
  if (validate === true) return;
  messages.forEach((message, index) => {
    if (validate(message)) return;
    const error = validate.errors?.[0];
    const where = error?.instancePath || '/';
    const which = batch ? `messages[${index}]` : 'the message';
    throw badRequest(`${which} does not match the feed's message_schema at ${where}: ${error?.message ?? 'is not allowed'}`);
  });
}

// ---- feeds ---------------------------------------------------------------------------------------

const canSeePrivate = (access: ProjectAccess) => access.roles.has('feed_inventory');

/** A participant token granted this feed: `{"name": "feed", "scope": "<feed id or name>"}`, or `"*"` for every feed. */
function grantedFeed(principal: Principal, feed: store.FeedRow): boolean {
  return principal.kind === 'participant'
    && (principal.grants ?? []).some((g) => g.name === 'feed' && (g.scope === feed.id || g.scope === feed.name || g.scope === '*'));
}

function visibleTo(principal: Principal, access: ProjectAccess, feed: store.FeedRow): boolean {
  return feed.visibility !== 'private' || canSeePrivate(access) || grantedFeed(principal, feed);
}

/**
 * Who may publish to a feed: holders of `feed_manager` in its project (developers, admins, API keys
 * that hold it) and participant tokens granted the feed. Resource policies' feed roles (`publisher`,
 * `manager`) are a third way in, to be checked here.
 */
function mayPublish(principal: Principal, access: ProjectAccess, feed: store.FeedRow): boolean {
  if (principal.kind === 'participant') return grantedFeed(principal, feed);
  return access.roles.has('feed_manager');
}

export interface FeedInput {
  name?: string | undefined;
  description?: string | null | undefined;
  visibility?: Visibility | null | undefined;
  paused?: boolean | null | undefined;
  annotations?: Record<string, string> | null | undefined;
  message_schema?: unknown;
}

export async function createFeed(ctx: AppContext, projectId: string, input: FeedInput & { name: string }): Promise<store.FeedRow> {
  const messageSchema = input.message_schema ?? null;
  compileMessageSchema(messageSchema);
  const feed = await store.insertFeed(ctx.db, {
    id: randomUUID(),
    projectId,
    name: input.name,
    description: input.description ?? '',
    visibility: input.visibility ?? 'private',
    paused: input.paused ?? false,
    annotations: input.annotations ?? {},
    messageSchema,
  });
  if (!feed) throw conflict(`A feed named ${JSON.stringify(input.name)} already exists`);
  return feed;
}

/** A feed the caller can see; 404 for one it cannot (or that is missing). */
export async function getFeed(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string): Promise<store.FeedRow> {
  const feed = await store.findFeed(ctx.db, access.projectId, feedId);
  if (!feed || !visibleTo(principal, access, feed)) throw notFound('Feed');
  return feed;
}

export async function listFeeds(ctx: AppContext, access: ProjectAccess, page: Page) {
  const { items, total } = await store.listFeeds(ctx.db, access.projectId, page, { privateToo: canSeePrivate(access) });
  return { feeds: items.map(feedView), total };
}

/** Feeds a room sees: project and public ones, and those with a subscription into it. */
export async function listRoomFeeds(ctx: AppContext, access: ProjectAccess, roomName: string, page: Page) {
  const room = await getRoom(ctx, access.projectId, roomName);
  const { items, total } = await store.listFeeds(ctx.db, access.projectId, page, { privateToo: canSeePrivate(access), roomId: room.id });
  return { feeds: items.map(feedView), total };
}

/**
 * Updates a feed; fields left out keep their value, null resets one. A new message_schema takes
 * effect for the next publish. Resuming a paused feed sends its waiting messages on at once.
 */
export async function updateFeed(ctx: AppContext, projectId: string, feedId: string, input: FeedInput): Promise<store.FeedRow> {
  return ctx.db.transaction(async (tx) => {
    const current = await store.findFeed(tx, projectId, feedId);
    if (!current) throw notFound('Feed');
    const schemaGiven = input.message_schema !== undefined;
    const messageSchema = schemaGiven ? input.message_schema ?? null : current.messageSchema ?? null;
    const newSchema = schemaGiven && !isDeepStrictEqual(messageSchema, current.messageSchema ?? null);
    if (newSchema) compileMessageSchema(messageSchema);
    if (input.name !== undefined && input.name !== current.name && (await store.findFeedByName(tx, projectId, input.name))) {
      throw conflict(`A feed named ${JSON.stringify(input.name)} already exists`);
    }
    const paused = input.paused === undefined ? current.paused : input.paused ?? false;
    const feed = await store.updateFeed(tx, projectId, feedId, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.description !== undefined ? { description: input.description ?? '' } : {}),
      ...(input.annotations !== undefined ? { annotations: input.annotations ?? {} } : {}),
      paused,
      messageSchema,
      newSchema,
    });
    if (!feed) throw notFound('Feed');
    if (current.paused && !paused) await store.scheduleWaiting(tx, feed.id);
    return feed;
  });
}

export async function deleteFeed(ctx: AppContext, projectId: string, feedId: string): Promise<void> {
  if (!(await store.deleteFeed(ctx.db, projectId, feedId))) throw notFound('Feed');
}

// ---- publishing ----------------------------------------------------------------------------------

export interface PublishedMessage {
  id: string;
  seq: number;
  created_at: string;
}

/**
 * Validates and stores messages, all or none, with their subscriptions' flushes scheduled in the
 * same statement. 404 for a feed that is not there, 409 for a paused one, 400 for a message that
 * breaks the schema (naming its index and path).
 */
async function publishChecked(ctx: AppContext, db: Db, feed: store.FeedRow, messages: readonly unknown[], batch: boolean): Promise<PublishedMessage[]> {
  let current = feed;
  // A schema changed between the read and the write is checked again (a feed's schema rarely moves).
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (current.paused) throw conflict(`The feed ${JSON.stringify(current.name)} is paused: it accepts no messages until it is resumed`);
    validateMessages(current, messages, batch);
    const accepted = await store.publish(db, {
      projectId: current.projectId,
      feedId: current.id,
      schemaVersion: current.schemaVersion,
      messages: messages.map((m) => JSON.stringify(m)),
      policy: flushPolicy(ctx),
    });
    if (accepted) return accepted.map((m) => ({ id: m.id, seq: m.seq, created_at: m.createdAt.toISOString() }));
    const reread = await store.findFeed(db, current.projectId, current.id);
    if (!reread) throw notFound('Feed');
    current = reread;
  }
  throw conflict('The feed changed while the messages were published; retry');
}

/** Publishing by a caller: one message, or a batch (all or nothing). */
export async function publish(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, messages: readonly unknown[], batch: boolean): Promise<PublishedMessage[]> {
  const feed = await getFeed(ctx, principal, access, feedId);
  if (!mayPublish(principal, access, feed)) throw forbidden('Publishing to this feed needs the feed_manager role or a participant token granted the feed');
  if (!batch && messages[0] === undefined) throw badRequest('The body must be the message: a JSON value');
  return publishChecked(ctx, ctx.db, feed, messages, batch);
}

/**
 * Publishing by the service itself (LLM loggers), in the caller's transaction. When the feed
 * refuses the message (gone, paused, or the message breaks its schema) nothing is written and
 * `refused` says why.
 */
export async function publishAsService(ctx: AppContext, tx: Db, projectId: string, feedId: string, message: unknown): Promise<{ refused?: string }> {
  const feed = await store.findFeed(tx, projectId, feedId);
  if (!feed) return { refused: 'the destination feed no longer exists' };
  try {
    await publishChecked(ctx, tx, feed, [message], false);
    return {};
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) return { refused: error.message };
    throw error;
  }
}

/** Whether a feed exists in the project (for references to it, e.g. an LLM logger's destination). */
export async function feedExists(ctx: AppContext, projectId: string, feedId: string): Promise<boolean> {
  return (await store.findFeed(ctx.db, projectId, feedId)) !== undefined;
}

// ---- subscriptions -------------------------------------------------------------------------------

/** The feed of a subscription route: visible to the caller; for changes, not paused. */
async function subscribedFeed(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, change: boolean): Promise<store.FeedRow> {
  const feed = await getFeed(ctx, principal, access, feedId);
  if (change && feed.paused) throw conflict(`The feed ${JSON.stringify(feed.name)} is paused: its subscriptions cannot change until it is resumed`);
  return feed;
}

export interface SubscriptionInput {
  room: string;
  path: string;
  filename_datetime_format?: string | null | undefined;
  annotations?: Record<string, string> | null | undefined;
}

export async function createSubscription(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, input: SubscriptionInput): Promise<store.SubscriptionRow> {
  const feed = await subscribedFeed(ctx, principal, access, feedId, true);
  let room;
  try {
    room = await getRoom(ctx, access.projectId, input.room);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw badRequest(`room: no room named ${JSON.stringify(input.room)} in this project`);
    throw error;
  }
  // The folder as stored: normalised, and checked to stay inside the room's storage.
  const roomFolder = roomStoragePath(room.name, '');
  const path = roomStoragePath(room.name, input.path).slice(roomFolder.length + 1);
  const format = input.filename_datetime_format ? validateDatetimeFormat(input.filename_datetime_format) : null;
  const id = randomUUID();
  const inserted = await store.insertSubscription(ctx.db, { id, projectId: access.projectId, feedId: feed.id, roomId: room.id, path, filenameDatetimeFormat: format, annotations: input.annotations ?? {} });
  if (!inserted) throw notFound('Feed');
  return getSubscription(ctx, principal, access, feedId, id);
}

export async function getSubscription(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, subscriptionId: string): Promise<store.SubscriptionRow> {
  await subscribedFeed(ctx, principal, access, feedId, false);
  const sub = await store.findSubscription(ctx.db, access.projectId, feedId, subscriptionId);
  if (!sub) throw notFound('Subscription');
  return sub;
}

export async function listSubscriptions(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, page: Page) {
  await subscribedFeed(ctx, principal, access, feedId, false);
  const { items, total } = await store.listSubscriptions(ctx.db, access.projectId, feedId, page);
  return { subscriptions: items.map(subscriptionView), total };
}

export async function updateSubscription(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, subscriptionId: string, input: Omit<SubscriptionInput, 'room' | 'path'>): Promise<store.SubscriptionRow> {
  await subscribedFeed(ctx, principal, access, feedId, true);
  const changes = {
    ...(input.filename_datetime_format !== undefined ? { filenameDatetimeFormat: input.filename_datetime_format ? validateDatetimeFormat(input.filename_datetime_format) : null } : {}),
    ...(input.annotations !== undefined ? { annotations: input.annotations ?? {} } : {}),
  };
  if (!(await store.updateSubscription(ctx.db, access.projectId, feedId, subscriptionId, changes))) throw notFound('Subscription');
  return getSubscription(ctx, principal, access, feedId, subscriptionId);
}

/** Deletes a subscription: nothing more is written for it (a file being written may still land). */
export async function deleteSubscription(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, subscriptionId: string): Promise<void> {
  await subscribedFeed(ctx, principal, access, feedId, true);
  if (!(await store.deleteSubscription(ctx.db, access.projectId, feedId, subscriptionId))) throw notFound('Subscription');
}

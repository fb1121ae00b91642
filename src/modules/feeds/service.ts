// Rules for feeds, their messages and their subscriptions: what a message must look like (its
// message_schema) and where a subscription writes (a folder of a room's storage). Who may see a feed
// and do what with it is declared with the feed resource type in the module's descriptor, and decided
// by the platform before a route's handler runs.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { WithinRequirement } from '../../platform/http/auth.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { ApiError, badRequest, conflict, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import { forgetResource } from '../policies/service.ts';
import { getRoom, getRoomToActIn } from '../rooms/service.ts';
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

/** The resource type of feeds: who may do what to one feed is declared with it, in the module's descriptor. */
export const FEED_RESOURCE = 'feed';

/** `auth.within` of a route setting where something publishes (an LLM logger's destination feed). */
export const PUBLISHES_INTO_FEED: WithinRequirement = { type: FEED_RESOURCE, action: 'publish' };

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
  if (!feed) throw conflict(`A feed named ${JSON.stringify(input.name)} already exists`, 'already_exists');
  return feed;
}

/** What the caller may do with a feed it sees (the route's step found it): the console's buttons. */
export function rightsOn(ctx: AppContext, actor: Actor, feed: store.FeedRow): Promise<string[]> {
  return ctx.authority.rights(actor, ctx.authority.type(FEED_RESOURCE)!, feed);
}

/** A feed by id, for routes and grants that name one (any text may arrive as an id there). */
export async function findFeedById(db: Db, projectId: string, feedId: string): Promise<store.FeedRow | undefined> {
  return isUuid(feedId) ? store.findFeed(db, projectId, feedId) : undefined;
}

/** A feed by name, for participant-token grants that name it so. */
export function findFeedByName(db: Db, projectId: string, name: string): Promise<store.FeedRow | undefined> {
  return store.findFeedByName(db, projectId, name);
}

/** Private feeds a list shows besides the others: all of them, or those the caller may see (a role on their policy). */
async function privateFeedsOf(ctx: AppContext, actor: Actor): Promise<true | readonly string[]> {
  return ctx.authority.visible(actor, ctx.authority.type(FEED_RESOURCE)!);
}

export async function listFeeds(ctx: AppContext, actor: Actor, page: Page) {
  const { items, total } = await store.listFeeds(ctx.db, actor.access.projectId, page, { privateToo: await privateFeedsOf(ctx, actor) });
  return { feeds: items.map(feedView), total };
}

/** Feeds a room sees: project and public ones, and those with a subscription into it. */
export async function listRoomFeeds(ctx: AppContext, actor: Actor, roomName: string, page: Page) {
  const room = await getRoom(ctx, actor.access.projectId, roomName);
  const { items, total } = await store.listFeeds(ctx.db, actor.access.projectId, page, { privateToo: await privateFeedsOf(ctx, actor), roomId: room.id });
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
      throw conflict(`A feed named ${JSON.stringify(input.name)} already exists`, 'already_exists');
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
  await ctx.db.transaction(async (tx) => {
    if (!(await store.deleteFeed(tx, projectId, feedId))) throw notFound('Feed');
    await forgetResource(tx, projectId, FEED_RESOURCE, feedId);
  });
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
    if (current.paused) throw conflict(`The feed ${JSON.stringify(current.name)} is paused: it accepts no messages until it is resumed`, 'feed_paused');
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
  throw conflict('The feed changed while the messages were published; retry', 'concurrent_change');
}

/** Publishing by a caller the route's step let publish: one message, or a batch (all or nothing). */
export async function publish(ctx: AppContext, feed: store.FeedRow, messages: readonly unknown[], batch: boolean): Promise<PublishedMessage[]> {
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

/**
 * The feed a resource of the caller's will publish into (an LLM logger's destination): undefined when
 * the project has none by that id or the caller cannot see it; refused (403, naming who may) unless
 * the caller may publish there themselves (its route declares `within` `feed.publish`), since nobody
 * routes messages into a feed beyond that.
 */
export async function feedToPublishInto(ctx: AppContext, actor: Actor, feedId: string): Promise<store.FeedRow | undefined> {
  const feed = await findFeedById(ctx.db, actor.access.projectId, feedId);
  if (!feed) return undefined;
  const type = ctx.authority.type(FEED_RESOURCE)!;
  if (!(await ctx.authority.decide(actor, type, feed, 'see')).allowed) return undefined;
  await ctx.authority.requireWithin(actor, feed);
  return feed;
}

// ---- subscriptions -------------------------------------------------------------------------------

/** A subscription change needs the feed running. */
function notPaused(feed: store.FeedRow): void {
  if (feed.paused) throw conflict(`The feed ${JSON.stringify(feed.name)} is paused: its subscriptions cannot change until it is resumed`, 'feed_paused');
}

export interface SubscriptionInput {
  room: string;
  path: string;
  filename_datetime_format?: string | null | undefined;
  annotations?: Record<string, string> | null | undefined;
}

export async function createSubscription(ctx: AppContext, actor: Actor, feed: store.FeedRow, input: SubscriptionInput): Promise<store.SubscriptionRow> {
  notPaused(feed);
  const { projectId } = feed;
  let room;
  try {
    // The subscription writes into the room's files: only for a caller with access to them.
    room = await getRoomToActIn(ctx, actor, input.room);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw badRequest(`room: no room named ${JSON.stringify(input.room)} in this project`);
    throw error;
  }
  // The folder as stored: normalised, and checked to stay inside the room's storage.
  const roomFolder = roomStoragePath(room.name, '');
  const path = roomStoragePath(room.name, input.path).slice(roomFolder.length + 1);
  const format = input.filename_datetime_format ? validateDatetimeFormat(input.filename_datetime_format) : null;
  const id = randomUUID();
  const inserted = await store.insertSubscription(ctx.db, { id, projectId, feedId: feed.id, roomId: room.id, path, filenameDatetimeFormat: format, annotations: input.annotations ?? {} });
  if (!inserted) throw notFound('Feed');
  return getSubscription(ctx, feed, id);
}

export async function getSubscription(ctx: AppContext, feed: store.FeedRow, subscriptionId: string): Promise<store.SubscriptionRow> {
  const sub = await store.findSubscription(ctx.db, feed.projectId, feed.id, subscriptionId);
  if (!sub) throw notFound('Subscription');
  return sub;
}

export async function listSubscriptions(ctx: AppContext, feed: store.FeedRow, page: Page) {
  const { items, total } = await store.listSubscriptions(ctx.db, feed.projectId, feed.id, page);
  return { subscriptions: items.map(subscriptionView), total };
}

export async function updateSubscription(ctx: AppContext, feed: store.FeedRow, subscriptionId: string, input: Omit<SubscriptionInput, 'room' | 'path'>): Promise<store.SubscriptionRow> {
  notPaused(feed);
  const changes = {
    ...(input.filename_datetime_format !== undefined ? { filenameDatetimeFormat: input.filename_datetime_format ? validateDatetimeFormat(input.filename_datetime_format) : null } : {}),
    ...(input.annotations !== undefined ? { annotations: input.annotations ?? {} } : {}),
  };
  if (!(await store.updateSubscription(ctx.db, feed.projectId, feed.id, subscriptionId, changes))) throw notFound('Subscription');
  return getSubscription(ctx, feed, subscriptionId);
}

/** Deletes a subscription: nothing more is written for it (a file being written may still land). */
export async function deleteSubscription(ctx: AppContext, feed: store.FeedRow, subscriptionId: string): Promise<void> {
  notPaused(feed);
  if (!(await store.deleteSubscription(ctx.db, feed.projectId, feed.id, subscriptionId))) throw notFound('Subscription');
}

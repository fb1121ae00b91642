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
import type { Role } from '../../platform/http/roles.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import { forgetResource, resourcesWithRoles, rolesOn } from '../policies/service.ts';
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

/** The resource type of feeds in resource policies. */
export const FEED_RESOURCE = 'feed';

type FeedRight = 'see' | 'read_subscriptions' | 'subscribe' | 'publish' | 'manage';

/**
 * What each role of a feed's policy lets its holder do with that one feed, strongest first: `see`
 * (find it, private or not), `read_subscriptions`, `subscribe` (add, change and remove its
 * subscriptions), `publish`, `manage` (update, pause, delete it). docs/permissions.md is generated
 * from this table.
 */
export const FEED_ROLE_RIGHTS: readonly (readonly [string, readonly FeedRight[]])[] = [
  ['manager', ['see', 'read_subscriptions', 'subscribe', 'publish', 'manage']],
  ['publisher', ['see', 'read_subscriptions', 'publish']],
  ['subscriber', ['see', 'read_subscriptions', 'subscribe']],
  ['reader', ['see', 'read_subscriptions']],
  ['list', ['see']],
];

const canSeePrivate = (access: ProjectAccess) => access.roles.has('feed_inventory');

/** A participant token granted this feed: `{"name": "feed", "scope": "<feed id or name>"}`, or `"*"` for every feed. */
function grantedFeed(principal: Principal, feed: store.FeedRow): boolean {
  return principal.kind === 'participant'
    && (principal.grants ?? []).some((g) => g.name === 'feed' && (g.scope === feed.id || g.scope === feed.name || g.scope === '*'));
}

/**
 * One feed as one caller sees it in one call: the caller's roles on the feed's policy are read
 * (one query) only when project roles do not already decide, and then once, however many checks
 * the call makes (seeing the feed, then the action).
 */
interface FeedSeen {
  row: store.FeedRow;
  principal: Principal;
  access: ProjectAccess;
  policyRoles(): Promise<Set<string>>;
}

function seenBy(ctx: AppContext, principal: Principal, access: ProjectAccess, row: store.FeedRow): FeedSeen {
  let held: Promise<Set<string>> | undefined;
  return { row, principal, access, policyRoles: () => (held ??= rolesOn(ctx, principal, access, FEED_RESOURCE, row.id)) };
}

/** Whether the feed's policy gives the caller `right`. */
async function policyAllows(feed: FeedSeen, right: FeedRight): Promise<boolean> {
  const held = await feed.policyRoles();
  return FEED_ROLE_RIGHTS.some(([role, rights]) => held.has(role) && rights.includes(right));
}

async function visible(feed: FeedSeen): Promise<boolean> {
  return feed.row.visibility !== 'private' || canSeePrivate(feed.access) || grantedFeed(feed.principal, feed.row) || policyAllows(feed, 'see');
}

/** What a caller does with a feed they can see. */
export type FeedAction = 'read_subscriptions' | 'add_subscription' | 'change_subscriptions' | 'publish' | 'manage';

/** Each action: the project role that allows it on every feed, and the right on one feed's policy that allows it there. */
const FEED_ACTIONS: Readonly<Record<FeedAction, { role: Role; right: FeedRight }>> = {
  read_subscriptions: { role: 'feed_subscription_inventory', right: 'read_subscriptions' },
  add_subscription: { role: 'feed_subscription_creator', right: 'subscribe' },
  change_subscriptions: { role: 'feed_subscription_manager', right: 'subscribe' },
  publish: { role: 'feed_manager', right: 'publish' },
  manage: { role: 'feed_manager', right: 'manage' },
};

/**
 * The actions the caller may take on a feed they can see: by the project role, by a participant
 * token granted the feed (to publish), or by a role on the feed's policy whose rights carry it. The
 * policy is read (one query) only when project roles do not already allow every action asked.
 */
async function allowedActions(feed: FeedSeen, actions: readonly FeedAction[] = Object.keys(FEED_ACTIONS) as FeedAction[]): Promise<FeedAction[]> {
  const { principal, access } = feed;
  if (principal.kind === 'participant') return actions.filter((action) => action === 'publish' && grantedFeed(principal, feed.row));
  const byRole = (action: FeedAction) => access.roles.has(FEED_ACTIONS[action].role);
  const held = actions.every(byRole) ? new Set<string>() : await feed.policyRoles();
  return actions.filter((action) => byRole(action) || FEED_ROLE_RIGHTS.some(([role, rights]) => held.has(role) && rights.includes(FEED_ACTIONS[action].right)));
}

/** Refuses an action the caller may not take, naming what would allow it. */
async function mayDo(feed: FeedSeen, action: FeedAction): Promise<void> {
  if ((await allowedActions(feed, [action])).length > 0) return;
  const { role, right } = FEED_ACTIONS[action];
  const roles = FEED_ROLE_RIGHTS.filter(([, rights]) => rights.includes(right)).map(([name]) => name).join(' or ');
  throw forbidden(`This needs the ${role} project role or the ${roles} role on the feed's policy${action === 'publish' ? ', or a participant token granted the feed' : ''}`);
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
  if (!feed) throw conflict(`A feed named ${JSON.stringify(input.name)} already exists`, 'already_exists');
  return feed;
}

/** A feed the caller can see; 404 for one it cannot (or that is missing). */
async function seeFeed(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string): Promise<FeedSeen> {
  const row = await store.findFeed(ctx.db, access.projectId, feedId);
  const feed = row && seenBy(ctx, principal, access, row);
  if (!feed || !(await visible(feed))) throw notFound('Feed');
  return feed;
}

/** A feed the caller can see (404 otherwise), and what they may do with it. */
export async function getFeed(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string): Promise<{ feed: store.FeedRow; rights: FeedAction[] }> {
  const feed = await seeFeed(ctx, principal, access, feedId);
  return { feed: feed.row, rights: await allowedActions(feed) };
}

/** A feed by id, for resource policies (any text may arrive as an id there). */
export async function findFeedById(db: Db, projectId: string, feedId: string): Promise<store.FeedRow | undefined> {
  return isUuid(feedId) ? store.findFeed(db, projectId, feedId) : undefined;
}

/** Which private feeds a list shows: all of them to holders of feed_inventory, else those the caller holds a role on. */
async function privateFeedsOf(ctx: AppContext, principal: Principal, access: ProjectAccess): Promise<true | string[]> {
  return canSeePrivate(access) || resourcesWithRoles(ctx, principal, access, FEED_RESOURCE);
}

export async function listFeeds(ctx: AppContext, principal: Principal, access: ProjectAccess, page: Page) {
  const { items, total } = await store.listFeeds(ctx.db, access.projectId, page, { privateToo: await privateFeedsOf(ctx, principal, access) });
  return { feeds: items.map(feedView), total };
}

/** Feeds a room sees: project and public ones, and those with a subscription into it. */
export async function listRoomFeeds(ctx: AppContext, principal: Principal, access: ProjectAccess, roomName: string, page: Page) {
  const room = await getRoom(ctx, access.projectId, roomName);
  const { items, total } = await store.listFeeds(ctx.db, access.projectId, page, { privateToo: await privateFeedsOf(ctx, principal, access), roomId: room.id });
  return { feeds: items.map(feedView), total };
}

/**
 * Updates a feed; fields left out keep their value, null resets one. A new message_schema takes
 * effect for the next publish. Resuming a paused feed sends its waiting messages on at once.
 */
export async function updateFeed(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, input: FeedInput): Promise<store.FeedRow> {
  await mayDo(await seeFeed(ctx, principal, access, feedId), 'manage');
  const { projectId } = access;
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

export async function deleteFeed(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string): Promise<void> {
  await mayDo(await seeFeed(ctx, principal, access, feedId), 'manage');
  await ctx.db.transaction(async (tx) => {
    if (!(await store.deleteFeed(tx, access.projectId, feedId))) throw notFound('Feed');
    await forgetResource(tx, access.projectId, FEED_RESOURCE, feedId);
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

/** Publishing by a caller: one message, or a batch (all or nothing). */
export async function publish(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, messages: readonly unknown[], batch: boolean): Promise<PublishedMessage[]> {
  const feed = await seeFeed(ctx, principal, access, feedId);
  await mayDo(feed, 'publish');
  if (!batch && messages[0] === undefined) throw badRequest('The body must be the message: a JSON value');
  return publishChecked(ctx, ctx.db, feed.row, messages, batch);
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

/**
 * The feed of a subscription route, visible to the caller, who may do this to its subscriptions
 * (`create`, `read`, `change`: the project roles feed_subscription_creator, _inventory and _manager,
 * or a role on the feed's policy); for a create or a change, not paused.
 */
async function subscribedFeed(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, action: 'create' | 'read' | 'change'): Promise<store.FeedRow> {
  const feed = await seeFeed(ctx, principal, access, feedId);
  await mayDo(feed, action === 'read' ? 'read_subscriptions' : action === 'create' ? 'add_subscription' : 'change_subscriptions');
  if (action !== 'read' && feed.row.paused) throw conflict(`The feed ${JSON.stringify(feed.row.name)} is paused: its subscriptions cannot change until it is resumed`, 'feed_paused');
  return feed.row;
}

export interface SubscriptionInput {
  room: string;
  path: string;
  filename_datetime_format?: string | null | undefined;
  annotations?: Record<string, string> | null | undefined;
}

export async function createSubscription(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, input: SubscriptionInput): Promise<store.SubscriptionRow> {
  const feed = await subscribedFeed(ctx, principal, access, feedId, 'create');
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
  return findSubscription(ctx, access, feedId, id);
}

async function findSubscription(ctx: AppContext, access: ProjectAccess, feedId: string, subscriptionId: string): Promise<store.SubscriptionRow> {
  const sub = await store.findSubscription(ctx.db, access.projectId, feedId, subscriptionId);
  if (!sub) throw notFound('Subscription');
  return sub;
}

export async function getSubscription(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, subscriptionId: string): Promise<store.SubscriptionRow> {
  await subscribedFeed(ctx, principal, access, feedId, 'read');
  return findSubscription(ctx, access, feedId, subscriptionId);
}

export async function listSubscriptions(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, page: Page) {
  await subscribedFeed(ctx, principal, access, feedId, 'read');
  const { items, total } = await store.listSubscriptions(ctx.db, access.projectId, feedId, page);
  return { subscriptions: items.map(subscriptionView), total };
}

export async function updateSubscription(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, subscriptionId: string, input: Omit<SubscriptionInput, 'room' | 'path'>): Promise<store.SubscriptionRow> {
  await subscribedFeed(ctx, principal, access, feedId, 'change');
  const changes = {
    ...(input.filename_datetime_format !== undefined ? { filenameDatetimeFormat: input.filename_datetime_format ? validateDatetimeFormat(input.filename_datetime_format) : null } : {}),
    ...(input.annotations !== undefined ? { annotations: input.annotations ?? {} } : {}),
  };
  if (!(await store.updateSubscription(ctx.db, access.projectId, feedId, subscriptionId, changes))) throw notFound('Subscription');
  return findSubscription(ctx, access, feedId, subscriptionId);
}

/** Deletes a subscription: nothing more is written for it (a file being written may still land). */
export async function deleteSubscription(ctx: AppContext, principal: Principal, access: ProjectAccess, feedId: string, subscriptionId: string): Promise<void> {
  await subscribedFeed(ctx, principal, access, feedId, 'change');
  if (!(await store.deleteSubscription(ctx.db, access.projectId, feedId, subscriptionId))) throw notFound('Subscription');
}

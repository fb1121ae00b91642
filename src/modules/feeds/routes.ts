// Feeds: CRUD, the feeds a room sees, publishing one message or a batch, and the subscriptions that
// write a feed's messages into room storage. Routes on one feed name their action on it
// (`feed.<action>`); the platform decides it from the feed's resource type (index.ts) before the
// handler runs, and hands the handler the feed it found.
import type { FastifyRequest } from 'fastify';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import type { AuthRequirement } from '../../platform/http/auth.ts';
import { WRITES_ROOM_FILES } from '../rooms/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';
import type { FeedRow } from './store.ts';

const tags = ['Feeds'];
const feeds = '/accounts/projects/:project_id/feeds';
/** A route's action on the feed its path names. */
const on = (action: string, credentials?: AuthRequirement['credentials']): { auth: AuthRequirement } => ({
  auth: { permission: 'member', ...(credentials ? { credentials } : {}), resource: { type: service.FEED_RESOURCE, param: 'feed_id', action } },
});

export function feedRoutes(app: Api, ctx: AppContext): void {
  const feedOf = (request: FastifyRequest) => ctx.authority.resourceOf<FeedRow>(request);
  const actorOf = (request: FastifyRequest) => ctx.authority.actorOf(request);

  app.post(feeds, {
    config: { auth: { permission: 'feed_creator' } },
    schema: { tags, summary: 'Create a feed', params: ProjectParams, body: schema.FeedCreate, response: { 201: schema.FeedEnvelope } },
  }, async (request, reply) => reply.status(201).send({ feed: service.feedView(await service.createFeed(ctx, request.params.project_id, request.body)) }));

  app.get(feeds, {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'List feeds', params: ProjectParams, querystring: schema.FeedListQuery, response: { 200: schema.FeedList },
      description: 'The feeds the caller may see (`feed.see`): project and public ones, and private ones for holders of `feed_inventory` or of a role on their policy.',
    },
  }, async (request) => service.listFeeds(ctx, actorOf(request), pageOf(request.query)));

  app.get('/accounts/projects/:project_id/rooms/:room_name/feeds', {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'List the feeds a room sees', params: schema.RoomParams, querystring: schema.FeedListQuery, response: { 200: schema.FeedList },
      description: 'Project and public feeds, and feeds with a subscription into the room, of those the caller may see (`feed.see`).',
    },
  }, async (request) => service.listRoomFeeds(ctx, actorOf(request), request.params.room_name, pageOf(request.query)));

  app.get(`${feeds}/:feed_id`, {
    config: on('see'),
    schema: { tags, summary: 'Fetch a feed, and what the caller may do with it', params: schema.FeedParams, response: { 200: schema.FeedWithRights } },
  }, async (request) => {
    const feed = await feedOf(request);
    return { feed: service.feedView(feed), rights: await service.rightsOn(ctx, actorOf(request), feed) };
  });

  app.put(`${feeds}/:feed_id`, {
    config: on('manage'),
    schema: {
      tags, summary: 'Update a feed (pause, resume, rename, change its schema)', params: schema.FeedParams, body: schema.FeedUpdate, response: { 200: schema.FeedEnvelope },
      description: 'A paused feed refuses publishes and subscription changes (409) and holds back delivery; resuming delivers what waited.',
    },
  }, async (request) => ({ feed: service.feedView(await service.updateFeed(ctx, request.params.project_id, request.params.feed_id, request.body)) }));

  app.delete(`${feeds}/:feed_id`, {
    config: on('manage'),
    schema: { tags, summary: 'Delete a feed, its waiting messages and its subscriptions', params: schema.FeedParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteFeed(ctx, request.params.project_id, request.params.feed_id);
    return OK;
  });

  const publishing = on('publish', ['api_key', 'user', 'participant']);
  app.post(`${feeds}/:feed_id/messages`, {
    config: publishing,
    schema: {
      tags, summary: 'Publish a message (the body is the message)', params: schema.FeedParams, body: schema.Message, response: { 201: schema.Published },
      description: 'A participant token publishes with the grant `{"name": "feed", "scope": "<feed id or name>"}` (`"*"`: every feed), and only where the API key that signed it may publish too. '
        + '400 when the message breaks the feed\'s message_schema; 409 when the feed is paused.',
    },
  }, async (request, reply) => {
    const [accepted] = await service.publish(ctx, await feedOf(request), [request.body], false);
    return reply.status(201).send(accepted);
  });

  app.post(`${feeds}/:feed_id/messages/batch`, {
    config: publishing,
    schema: {
      tags, summary: 'Publish a batch of messages, all or none', params: schema.FeedParams, body: schema.MessageBatch, response: { 201: schema.PublishedBatch },
      description: 'The refusal of a batch names the index of the first message that breaks the schema, and where.',
    },
  }, async (request, reply) => reply.status(201).send({ messages: await service.publish(ctx, await feedOf(request), request.body, true) }));

  app.post(`${feeds}/:feed_id/subscriptions`, {
    // It writes into the room's files: only for a caller with access to them.
    config: { auth: { ...on('add_subscription').auth, within: WRITES_ROOM_FILES } },
    schema: {
      tags, summary: 'Subscribe a room: write the feed\'s messages into its storage', params: schema.FeedParams, body: schema.SubscriptionCreate, response: { 201: schema.SubscriptionEnvelope },
      description: 'Messages published from now on are written as JSON Lines files under `rooms/<room>/<path>/` of project storage (docs/feeds.md). It writes into the room\'s files: 403 for a caller who may not read them.',
    },
  }, async (request, reply) => reply.status(201).send({
    subscription: service.subscriptionView(await service.createSubscription(ctx, actorOf(request), await feedOf(request), request.body)),
  }));

  app.get(`${feeds}/:feed_id/subscriptions`, {
    config: on('read_subscriptions'),
    schema: { tags, summary: 'List a feed\'s subscriptions', params: schema.FeedParams, querystring: schema.SubscriptionListQuery, response: { 200: schema.SubscriptionList } },
  }, async (request) => service.listSubscriptions(ctx, await feedOf(request), pageOf(request.query)));

  app.get(`${feeds}/:feed_id/subscriptions/:subscription_id`, {
    config: on('read_subscriptions'),
    schema: { tags, summary: 'Fetch a subscription', params: schema.SubscriptionParams, response: { 200: schema.SubscriptionEnvelope } },
  }, async (request) => ({ subscription: service.subscriptionView(await service.getSubscription(ctx, await feedOf(request), request.params.subscription_id)) }));

  app.put(`${feeds}/:feed_id/subscriptions/:subscription_id`, {
    config: on('change_subscriptions'),
    schema: {
      tags, summary: 'Update a subscription (fields left out keep their value)', params: schema.SubscriptionParams, body: schema.SubscriptionUpdate, response: { 200: schema.SubscriptionEnvelope },
    },
  }, async (request) => ({
    subscription: service.subscriptionView(await service.updateSubscription(ctx, await feedOf(request), request.params.subscription_id, request.body)),
  }));

  app.delete(`${feeds}/:feed_id/subscriptions/:subscription_id`, {
    config: on('change_subscriptions'),
    schema: { tags, summary: 'Delete a subscription: nothing more is written for it', params: schema.SubscriptionParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteSubscription(ctx, await feedOf(request), request.params.subscription_id);
    return OK;
  });
}

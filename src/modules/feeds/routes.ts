// Feeds: CRUD, the feeds a room sees, publishing one message or a batch, and the subscriptions that
// write a feed's messages into room storage.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import { accessOf, callerOf } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Feeds'];
const feeds = '/accounts/projects/:project_id/feeds';
const publishAuth = { permission: 'member', credentials: ['api_key', 'user', 'participant'] } as const;
// Routes on one feed ask for `member`; the service then checks the project role or the feed's policy.
const READ_SUBSCRIPTIONS = 'Needs `feed_subscription_inventory`, or the `reader`, `subscriber`, `publisher` or `manager` role on the feed\'s policy.';
const CHANGE_SUBSCRIPTIONS = 'Needs `feed_subscription_manager`, or the `subscriber` or `manager` role on the feed\'s policy.';

export function feedRoutes(app: Api, ctx: AppContext): void {
  app.post(feeds, {
    config: { auth: { permission: 'feed_creator' } },
    schema: { tags, summary: 'Create a feed', params: ProjectParams, body: schema.FeedCreate, response: { 201: schema.FeedEnvelope } },
  }, async (request, reply) => reply.status(201).send({ feed: service.feedView(await service.createFeed(ctx, request.params.project_id, request.body)) }));

  app.get(feeds, {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'List feeds', params: ProjectParams, querystring: schema.FeedListQuery, response: { 200: schema.FeedList },
      description: 'Private feeds are listed for holders of `feed_inventory`, and for subjects with a role on their policy.',
    },
  }, async (request) => service.listFeeds(ctx, callerOf(request), accessOf(request), pageOf(request.query)));

  app.get('/accounts/projects/:project_id/rooms/:room_name/feeds', {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'List the feeds a room sees', params: schema.RoomParams, querystring: schema.FeedListQuery, response: { 200: schema.FeedList },
      description: 'Project and public feeds, and feeds with a subscription into the room (private ones only for holders of `feed_inventory` or of a role on their policy).',
    },
  }, async (request) => service.listRoomFeeds(ctx, callerOf(request), accessOf(request), request.params.room_name, pageOf(request.query)));

  app.get(`${feeds}/:feed_id`, {
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'Fetch a feed, and what the caller may do with it', params: schema.FeedParams, response: { 200: schema.FeedWithRights } },
  }, async (request) => {
    const { feed, rights } = await service.getFeed(ctx, callerOf(request), accessOf(request), request.params.feed_id);
    return { feed: service.feedView(feed), rights };
  });

  app.put(`${feeds}/:feed_id`, {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'Update a feed (pause, resume, rename, change its schema)', params: schema.FeedParams, body: schema.FeedUpdate, response: { 200: schema.FeedEnvelope },
      description: 'Needs `feed_manager`, or the `manager` role on the feed\'s policy. A paused feed refuses publishes and subscription changes (409) and holds back delivery; resuming delivers what waited.',
    },
  }, async (request) => ({ feed: service.feedView(await service.updateFeed(ctx, callerOf(request), accessOf(request), request.params.feed_id, request.body)) }));

  app.delete(`${feeds}/:feed_id`, {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'Delete a feed, its waiting messages and its subscriptions', params: schema.FeedParams, response: { 200: Ok },
      description: 'Needs `feed_manager`, or the `manager` role on the feed\'s policy.',
    },
  }, async (request) => {
    await service.deleteFeed(ctx, callerOf(request), accessOf(request), request.params.feed_id);
    return OK;
  });

  app.post(`${feeds}/:feed_id/messages`, {
    config: { auth: publishAuth },
    schema: {
      tags, summary: 'Publish a message (the body is the message)', params: schema.FeedParams, body: schema.Message, response: { 201: schema.Published },
      description: 'Needs `feed_manager`, the `publisher` or `manager` role on the feed\'s policy, or a participant token with the grant `{"name": "feed", "scope": "<feed id or name>"}`. 400 when the message breaks the feed\'s message_schema; 409 when the feed is paused.',
    },
  }, async (request, reply) => {
    const [accepted] = await service.publish(ctx, callerOf(request), accessOf(request), request.params.feed_id, [request.body], false);
    return reply.status(201).send(accepted);
  });

  app.post(`${feeds}/:feed_id/messages/batch`, {
    config: { auth: publishAuth },
    schema: {
      tags, summary: 'Publish a batch of messages, all or none', params: schema.FeedParams, body: schema.MessageBatch, response: { 201: schema.PublishedBatch },
      description: 'The refusal of a batch names the index of the first message that breaks the schema, and where.',
    },
  }, async (request, reply) => reply.status(201).send({ messages: await service.publish(ctx, callerOf(request), accessOf(request), request.params.feed_id, request.body, true) }));

  app.post(`${feeds}/:feed_id/subscriptions`, {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'Subscribe a room: write the feed\'s messages into its storage', params: schema.FeedParams, body: schema.SubscriptionCreate, response: { 201: schema.SubscriptionEnvelope },
      description: 'Needs `feed_subscription_creator`, or the `subscriber` or `manager` role on the feed\'s policy. Messages published from now on are written as JSON Lines files under `rooms/<room>/<path>/` of project storage (docs/feeds.md).',
    },
  }, async (request, reply) => reply.status(201).send({
    subscription: service.subscriptionView(await service.createSubscription(ctx, callerOf(request), accessOf(request), request.params.feed_id, request.body)),
  }));

  app.get(`${feeds}/:feed_id/subscriptions`, {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'List a feed\'s subscriptions', params: schema.FeedParams, querystring: schema.SubscriptionListQuery, response: { 200: schema.SubscriptionList },
      description: READ_SUBSCRIPTIONS,
    },
  }, async (request) => service.listSubscriptions(ctx, callerOf(request), accessOf(request), request.params.feed_id, pageOf(request.query)));

  app.get(`${feeds}/:feed_id/subscriptions/:subscription_id`, {
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'Fetch a subscription', params: schema.SubscriptionParams, response: { 200: schema.SubscriptionEnvelope }, description: READ_SUBSCRIPTIONS },
  }, async (request) => ({
    subscription: service.subscriptionView(await service.getSubscription(ctx, callerOf(request), accessOf(request), request.params.feed_id, request.params.subscription_id)),
  }));

  app.put(`${feeds}/:feed_id/subscriptions/:subscription_id`, {
    config: { auth: { permission: 'member' } },
    schema: {
      tags, summary: 'Update a subscription (fields left out keep their value)', params: schema.SubscriptionParams, body: schema.SubscriptionUpdate, response: { 200: schema.SubscriptionEnvelope },
      description: CHANGE_SUBSCRIPTIONS,
    },
  }, async (request) => ({
    subscription: service.subscriptionView(await service.updateSubscription(ctx, callerOf(request), accessOf(request), request.params.feed_id, request.params.subscription_id, request.body)),
  }));

  app.delete(`${feeds}/:feed_id/subscriptions/:subscription_id`, {
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'Delete a subscription: nothing more is written for it', params: schema.SubscriptionParams, response: { 200: Ok }, description: CHANGE_SUBSCRIPTIONS },
  }, async (request) => {
    await service.deleteSubscription(ctx, callerOf(request), accessOf(request), request.params.feed_id, request.params.subscription_id);
    return OK;
  });
}

// Feeds: JSON messages published once and written, by subscriptions, into rooms' storage.
import type { Module } from '../../module.ts';
import { resourceType } from '../../platform/http/authority.ts';
import { handles } from '../../platform/jobs/types.ts';
import { flushHandler, pruneSchedule } from './delivery.ts';
import { flushJob } from './jobs.ts';
import { feedRoutes } from './routes.ts';
import { FEED_RESOURCE, findFeedById, findFeedByName } from './service.ts';
import type { FeedRow } from './store.ts';

/** Who may do what with one feed: docs/permissions.md and docs/feeds.md are generated or written from this. */
const feed = resourceType<FeedRow>({
  type: FEED_RESOURCE,
  label: 'Feed',
  actions: {
    see: { description: 'find it, private too (GET, lists)', roles: ['feed_inventory'] },
    read_subscriptions: { description: 'read its subscriptions', roles: ['feed_subscription_inventory'] },
    add_subscription: { description: 'add a subscription (into a room whose files the caller may read: `room.read_files`)', roles: ['feed_subscription_creator'] },
    change_subscriptions: { description: 'change and remove its subscriptions', roles: ['feed_subscription_manager'] },
    publish: { description: 'publish messages', roles: ['feed_manager'] },
    manage: { description: 'update, pause and delete it', roles: ['feed_manager'] },
  },
  find: { id: findFeedById, name: findFeedByName },
  policy: {
    readRole: 'feed_inventory',
    manageRole: 'feed_manager',
    roles: {
      manager: ['see', 'read_subscriptions', 'add_subscription', 'change_subscriptions', 'publish', 'manage'],
      publisher: ['see', 'read_subscriptions', 'publish'],
      subscriber: ['see', 'read_subscriptions', 'add_subscription', 'change_subscriptions'],
      reader: ['see', 'read_subscriptions'],
      list: ['see'],
    },
  },
  open: {
    description: 'every member, for a feed of visibility `project` or `public`',
    actions: ['see'],
    of: (row) => (row.visibility === 'private' ? undefined : { actions: ['see'] }),
  },
  grants: {
    feed: {
      description: '`{"name": "feed", "scope": "<feed id or name>"}`, `"*"` for every feed',
      actions: ['see', 'publish'],
      names: (row) => [row.id, row.name],
      by: 'id or name',
      every: '*',
    },
  },
});

export const feedsModule: Module = {
  name: 'feeds',
  routes: feedRoutes,
  jobs: [handles(flushJob, flushHandler)],
  schedules: () => [pruneSchedule()],
  resources: [feed],
};

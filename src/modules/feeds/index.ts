// Feeds: JSON messages published once and written, by subscriptions, into rooms' storage.
import { fixtureSuffix, type Module } from '../../module.ts';
import { handles } from '../../platform/jobs/types.ts';
import { flushHandler, pruneSchedule } from './delivery.ts';
import { flushJob } from './jobs.ts';
import { feedRoutes } from './routes.ts';
import { FEED_RESOURCE, FEED_ROLE_RIGHTS, findFeedById } from './service.ts';

/** What a right lets its holder do, in words for docs/permissions.md. */
const RIGHT_WORDS = { see: 'find it (private too)', read_subscriptions: 'read its subscriptions', subscribe: 'add, change and remove its subscriptions', publish: 'publish', manage: 'update, pause and delete it' } as const;

export const feedsModule: Module = {
  name: 'feeds',
  routes: feedRoutes,
  jobs: [handles(flushJob, flushHandler)],
  schedules: () => [pruneSchedule()],
  policyResources: [{
    type: FEED_RESOURCE,
    roles: Object.fromEntries(FEED_ROLE_RIGHTS.map(([role, rights]) => [role, rights.map((right) => RIGHT_WORDS[right]).join(', ')])),
    readRole: 'feed_inventory',
    manageRole: 'feed_manager',
    find: async (db, projectId, id) => findFeedById(db, projectId, id),
  }],
  fixtures: [{
    provides: ['feed_id', 'subscription_id'],
    needs: ['room_name'],
    async create(client, have) {
      const project = `/accounts/projects/${client.projectId}`;
      const { feed } = await client.request<{ feed: { id: string } }>('POST', `${project}/feeds`, { json: { name: `feed-${fixtureSuffix()}`, visibility: 'project' } });
      const { subscription } = await client.request<{ subscription: { id: string } }>('POST', `${project}/feeds/${feed.id}/subscriptions`, {
        json: { room: have.room_name, path: 'feeds/fixture' },
      });
      return { feed_id: feed.id, subscription_id: subscription.id };
    },
  }],
};

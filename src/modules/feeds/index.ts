// Feeds: JSON messages published once and written, by subscriptions, into rooms' storage.
import type { Module } from '../../module.ts';
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
};

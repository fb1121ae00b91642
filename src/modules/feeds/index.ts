// Feeds: JSON messages published once and written, by subscriptions, into rooms' storage.
import { fixtureSuffix, type Module } from '../../platform/http/module.ts';
import { flushHandler, pruneSchedule } from './delivery.ts';
import { feedRoutes } from './routes.ts';

export const feedsModule: Module = {
  name: 'feeds',
  routes: feedRoutes,
  jobs: (ctx) => [flushHandler(ctx)],
  schedules: () => [pruneSchedule()],
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

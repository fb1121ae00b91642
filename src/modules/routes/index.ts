// Routes: domains of the deployment claimed by a project and sent to its rooms.
import { fixtureSuffix, type Module } from '../../module.ts';
import { routeRoutes } from './routes.ts';

export const routesModule: Module = {
  name: 'routes',
  routes: routeRoutes,
  fixtures: [{
    provides: ['domain'],
    needs: ['room_name'],
    async create(client, have) {
      const domain = `r-${fixtureSuffix()}.routes.example.test`;
      await client.request('POST', `/accounts/projects/${client.projectId}/routes`, { json: { domain, room_name: have.room_name, port: 8080 } });
      return { domain };
    },
  }],
};

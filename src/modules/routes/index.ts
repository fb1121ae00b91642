// Routes: domains of the deployment claimed by a project and sent to its rooms.
import type { Module } from '../../module.ts';
import { routeRoutes } from './routes.ts';

export const routesModule: Module = {
  name: 'routes',
  routes: routeRoutes,
};

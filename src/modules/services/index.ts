// Services: project-wide and room-scoped ServiceSpecs, written directly or rendered from templates.
// Two descriptors over one folder, so that each kind has its own fixture: the route walks address
// a project service and a room's service by the same `{service_id}`.
import type { Module } from '../../module.ts';
import { serviceRoutes } from './routes.ts';
import { servicesTable } from './store.ts';

export const servicesModule: Module = {
  name: 'services',
  routes: serviceRoutes('project'),
  // A spec as rendered with the secret values of its template, for the room server (both kinds share the table).
  sealed: [{ table: servicesTable, columns: [servicesTable.specSealed] }],
};

export const roomServicesModule: Module = {
  name: 'room-services',
  routes: serviceRoutes('room'),
};

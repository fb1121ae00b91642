// Services: project-wide and room-scoped ServiceSpecs, written directly or rendered from templates.
// Two descriptors over one folder, so that each kind has its own fixture: the route walks address
// a project service and a room's service by the same `{service_id}`.
import { fixtureSuffix, type Module } from '../../module.ts';
import { serviceRoutes } from './routes.ts';

const spec = (name: string) => ({ version: 'v1', kind: 'Service', metadata: { name }, container: { image: 'ghcr.io/example/echo:1' } });

export const servicesModule: Module = {
  name: 'services',
  routes: serviceRoutes('project'),
  fixtures: [{
    provides: ['service_id'],
    async create(client) {
      const created = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/services`, { json: spec(`svc-${fixtureSuffix()}`) });
      return { service_id: created.id };
    },
  }],
};

export const roomServicesModule: Module = {
  name: 'room-services',
  routes: serviceRoutes('room'),
  fixtures: [{
    provides: ['service_id'],
    needs: ['room_name'],
    async create(client, have) {
      const path = `/accounts/projects/${client.projectId}/rooms/${encodeURIComponent(have.room_name!)}/services`;
      const created = await client.request<{ id: string }>('POST', path, { json: spec(`room-svc-${fixtureSuffix()}`) });
      return { service_id: created.id };
    },
  }],
};

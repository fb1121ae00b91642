// Secrets of a project and of its rooms, encrypted at rest. Two descriptors over one folder, so that
// each kind has its own fixture for the route walks (which address both by `{secret_id}`).
import { fixtureSuffix, type Module } from '../../module.ts';
import { projectSecretRoutes, roomSecretRoutes } from './routes.ts';

const VALUE = Buffer.from('{"API_KEY":"fixture"}').toString('base64');

export const secretsModule: Module = {
  name: 'secrets',
  routes: projectSecretRoutes,
  fixtures: [{
    provides: ['secret_id'],
    async create(client) {
      const created = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/secrets`, { json: { name: `secret-${fixtureSuffix()}`, type: 'keys', data_base64: VALUE } });
      return { secret_id: created.id };
    },
  }],
};

export const roomSecretsModule: Module = {
  name: 'room-secrets',
  routes: roomSecretRoutes,
  fixtures: [{
    provides: ['secret_id'],
    needs: ['room_name'],
    async create(client, have) {
      const path = `/accounts/projects/${client.projectId}/rooms/${encodeURIComponent(have.room_name!)}/secrets`;
      const created = await client.request<{ id: string }>('POST', path, { json: { name: `room-secret-${fixtureSuffix()}`, type: 'keys', data_base64: VALUE } });
      return { secret_id: created.id };
    },
  }],
};

// Project API keys (a credential kind).
import { fixtureSuffix, type Module } from '../../module.ts';
import { apiKeyRoutes } from './routes.ts';
import { apiKeyVerifier } from './service.ts';

export const apiKeysModule: Module = {
  name: 'api-keys',
  routes: apiKeyRoutes,
  verifiers: (ctx) => [apiKeyVerifier(ctx.db)],
  fixtures: [{
    provides: ['id'],
    async create(client) {
      const key = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/api-keys`, { json: { name: `key-${fixtureSuffix()}` } });
      return { id: key.id };
    },
  }],
};

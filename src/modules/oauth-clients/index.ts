// OAuth clients a project registers for signing its users in.
import { fixtureSuffix, type Module } from '../../module.ts';
import { oauthClientRoutes } from './routes.ts';
import { browserOrigins } from './service.ts';

export const oauthClientsModule: Module = {
  name: 'oauth-clients',
  routes: oauthClientRoutes,
  browserOrigins,
  fixtures: [{
    provides: ['client_id'],
    async create(client) {
      const created = await client.request<{ client_id: string }>('POST', `/accounts/projects/${client.projectId}/oauth/clients`, {
        json: { name: `app-${fixtureSuffix()}`, grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['https://app.example.com/callback'], scope: 'openid profile:read' },
      });
      return { client_id: created.client_id };
    },
  }],
};

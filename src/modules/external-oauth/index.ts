// External OAuth registrations: outside providers a project's or a room's agents get tokens from.
import type { Module } from '../../module.ts';
import { externalOAuthRoutes } from './routes.ts';

const registration = {
  oauth: { authorization_endpoint: 'https://accounts.example.com/authorize', token_endpoint: 'https://accounts.example.com/token' },
  client_id: 'fixture-client',
  client_secret: 'fixture-secret',
};

export const externalOAuthModule: Module = {
  name: 'external-oauth',
  routes: externalOAuthRoutes,
  fixtures: [{
    provides: ['registration_id'],
    async create(client) {
      const created = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/external-oauth`, { json: registration });
      return { registration_id: created.id };
    },
  }, {
    provides: ['room_registration_id'],
    needs: ['room_name'],
    async create(client, have) {
      const created = await client.request<{ id: string }>('POST', `/accounts/projects/${client.projectId}/rooms/${encodeURIComponent(have.room_name!)}/external-oauth`, { json: registration });
      return { room_registration_id: created.id };
    },
  }],
};

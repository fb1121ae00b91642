// OAuth clients a project registers for signing its users in.
import type { Module } from '../../module.ts';
import { oauthClientRoutes } from './routes.ts';
import { browserOrigins } from './service.ts';

export const oauthClientsModule: Module = {
  name: 'oauth-clients',
  routes: oauthClientRoutes,
  browserOrigins,
};

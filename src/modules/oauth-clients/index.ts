// OAuth clients a project registers for signing its users in.
import type { Module } from '../../platform/http/module.ts';
import { oauthClientRoutes } from './routes.ts';

export const oauthClientsModule: Module = { name: 'oauth-clients', routes: oauthClientRoutes };

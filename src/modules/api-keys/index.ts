// Project API keys (a credential kind).
import type { Module } from '../../module.ts';
import { apiKeyRoutes } from './routes.ts';
import { apiKeyVerifier } from './service.ts';

export const apiKeysModule: Module = {
  name: 'api-keys',
  routes: apiKeyRoutes,
  verifiers: (ctx) => [apiKeyVerifier(ctx.db)],
};

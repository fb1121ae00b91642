// Project API keys (a credential kind).
import type { Module } from '../../module.ts';
import { apiKeyRoutes } from './routes.ts';
import { apiKeyVerifier } from './service.ts';
import { apiKeysTable } from './store.ts';

export const apiKeysModule: Module = {
  name: 'api-keys',
  routes: apiKeyRoutes,
  verifiers: (ctx) => [apiKeyVerifier(ctx.db)],
  // A key's secret, which verifies the participant tokens an application signs with it.
  sealed: [{ table: apiKeysTable, columns: [apiKeysTable.secretEncrypted] }],
};

// Secrets of a project and of its rooms, encrypted at rest. Two descriptors over one folder, so that
// each kind has its own fixture for the route walks (which address both by `{secret_id}`).
import type { Module } from '../../module.ts';
import { projectSecretRoutes, roomSecretRoutes } from './routes.ts';
import { secretsTable } from './store.ts';

export const secretsModule: Module = {
  name: 'secrets',
  routes: projectSecretRoutes,
  // Every secret's value, the project's and its rooms' (one table).
  sealed: [{ table: secretsTable, columns: [secretsTable.valueEncrypted] }],
};

export const roomSecretsModule: Module = {
  name: 'room-secrets',
  routes: roomSecretRoutes,
};

// External OAuth registrations: outside providers a project's or a room's agents get tokens from.
import type { Module } from '../../module.ts';
import { externalOAuthRoutes } from './routes.ts';
import { registrationsTable } from './store.ts';

export const externalOAuthModule: Module = {
  name: 'external-oauth',
  routes: externalOAuthRoutes,
  sealed: [{ table: registrationsTable, columns: [registrationsTable.clientSecretEncrypted] }],
};

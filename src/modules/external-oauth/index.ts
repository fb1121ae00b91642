// External OAuth registrations: outside providers a project's or a room's agents get tokens from.
import type { Module } from '../../module.ts';
import { externalOAuthRoutes } from './routes.ts';

export const externalOAuthModule: Module = {
  name: 'external-oauth',
  routes: externalOAuthRoutes,
};

// Users: profiles and personal access tokens (a credential kind).
import type { Module } from '../../platform/http/module.ts';
import { userRoutes } from './routes.ts';
import { personalAccessTokenVerifier } from './service.ts';

export const usersModule: Module = {
  name: 'users',
  routes: userRoutes,
  verifiers: (ctx) => [personalAccessTokenVerifier(ctx.db)],
};

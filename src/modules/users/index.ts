// Users: profiles and personal access tokens (a credential kind).
import type { Module } from '../../module.ts';
import { userRoutes } from './routes.ts';
import { personalAccessTokenVerifier } from './service.ts';

export const usersModule: Module = {
  name: 'users',
  routes: userRoutes,
  verifiers: (ctx) => [personalAccessTokenVerifier(ctx.db)],
  // A profile route addresses a user; the project's admin is the one whose profile they may edit.
};

// Users: profiles, second factors and personal access tokens (a credential kind).
import type { Module } from '../../module.ts';
import { purgeChallenges } from './factors-store.ts';
import { userRoutes } from './routes.ts';
import { userTotpTable } from './tables.ts';
import { personalAccessTokenVerifier } from './service.ts';

export const usersModule: Module = {
  name: 'users',
  routes: userRoutes,
  verifiers: (ctx) => [personalAccessTokenVerifier(ctx.db)],
  // The secrets of authenticator apps, confirmed and waiting for confirmation.
  sealed: [{ table: userTotpTable, columns: [userTotpTable.secret, userTotpTable.pendingSecret] }],
  // WebAuthn challenges nobody answered, a minute past their expiry.
  schedules: () => [{ name: 'users.challenges.purge', cron: '*/10 * * * *', run: async ({ db }, dueAt) => void (await purgeChallenges(db, new Date(dueAt.getTime() - 60_000))) }],
};

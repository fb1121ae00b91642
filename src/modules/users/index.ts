// Users: profiles, second factors and personal access tokens (a credential kind).
import type { Module } from '../../platform/http/module.ts';
import { purgeChallenges } from './factors-store.ts';
import { userRoutes } from './routes.ts';
import { personalAccessTokenVerifier } from './service.ts';

export const usersModule: Module = {
  name: 'users',
  routes: userRoutes,
  verifiers: (ctx) => [personalAccessTokenVerifier(ctx.db)],
  // WebAuthn challenges nobody answered, a minute past their expiry.
  schedules: () => [{ name: 'users.challenges.purge', cron: '*/10 * * * *', run: async ({ db }, dueAt) => void (await purgeChallenges(db, new Date(dueAt.getTime() - 60_000))) }],
  fixtures: [
    // A profile route addresses a user; the project's admin is the one whose profile they may edit.
    { provides: ['user_id'], create: async (client) => ({ user_id: client.userId }) },
    // A passkey is made only by a browser's WebAuthn ceremony after a fresh sign-in, which no
    // fixture credential has: the walks address a passkey id that is nobody's, which every caller
    // must be refused (the passkey tests cover real ones).
    { provides: ['passkey_id'], create: async () => ({ passkey_id: crypto.randomUUID() }) },
  ],
};

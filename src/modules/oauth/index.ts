// The OAuth 2.0 / OpenID Connect authorization server, its sign-in pages, and OAuth access tokens
// as a credential kind of the API.
import type { Module } from '../../module.ts';
import { accessTokenVerifier } from './access-tokens.ts';
import { oauthRoutes } from './routes.ts';
import { purgeExpired } from './store.ts';

export const oauthModule: Module = {
  name: 'oauth',
  routes: oauthRoutes,
  verifiers: (ctx) => [accessTokenVerifier(ctx)],
  // Expired codes, sessions, interactions and emailed secrets, a minute past their expiry.
  schedules: () => [{ name: 'oauth.purge', cron: '*/10 * * * *', run: async ({ db }, dueAt) => void (await purgeExpired(db, new Date(dueAt.getTime() - 60_000))) }],
};

// Participant tokens: minting and validating the tokens that grant room access, and accepting them
// as credentials where a route says so.
import type { Module } from '../../module.ts';
import { participantTokenRoutes } from './routes.ts';
import { participantTokenVerifier } from './service.ts';

export const participantTokensModule: Module = {
  name: 'participant-tokens',
  routes: participantTokenRoutes,
  verifiers: (ctx) => [participantTokenVerifier(ctx)],
};

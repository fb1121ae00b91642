// Participant tokens: minting and validating the tokens that grant room access.
import type { Module } from '../../platform/http/module.ts';
import { participantTokenRoutes } from './routes.ts';

export const participantTokensModule: Module = { name: 'participant-tokens', routes: participantTokenRoutes };

// The one list of the service's modules, in registration order. Adding a resource family is one
// folder under src/modules/ and one line here.
import type { Module } from '../platform/http/module.ts';
import { oauthModule } from '../oauth/index.ts';
import { agentsModule } from './agents/index.ts';
import { apiKeysModule } from './api-keys/index.ts';
import { oauthClientsModule } from './oauth-clients/index.ts';
import { participantTokensModule } from './participant-tokens/index.ts';
import { projectsModule } from './projects/index.ts';
import { roomsModule } from './rooms/index.ts';
import { sessionsModule } from './sessions/index.ts';
import { setupModule } from './setup/index.ts';
import { storageModule } from './storage/index.ts';
import { systemModule } from './system/index.ts';
import { usersModule } from './users/index.ts';
import { webhooksModule } from './webhooks/index.ts';

export const modules: readonly Module[] = [
  systemModule,
  usersModule,
  projectsModule,
  roomsModule,
  agentsModule,
  apiKeysModule,
  storageModule,
  participantTokensModule,
  oauthClientsModule,
  oauthModule,
  webhooksModule,
  sessionsModule,
  setupModule,
];

// The one list of the service's modules, in registration order. Adding a resource family is one
// folder under src/modules/ and one line here.
import type { Module } from '../module.ts';
import { oauthModule } from './oauth/index.ts';
import { agentsModule } from './agents/index.ts';
import { apiKeysModule } from './api-keys/index.ts';
import { auditLogModule } from './audit-log/index.ts';
import { billingModule } from './billing/index.ts';
import { externalOAuthModule } from './external-oauth/index.ts';
import { feedsModule } from './feeds/index.ts';
import { llmLoggersModule } from './llm-loggers/index.ts';
import { llmProxyModule } from './llm-proxy/index.ts';
import { mailboxesModule } from './mailboxes/index.ts';
import { oauthClientsModule } from './oauth-clients/index.ts';
import { participantTokensModule } from './participant-tokens/index.ts';
import { policiesModule } from './policies/index.ts';
import { projectsModule } from './projects/index.ts';
import { repositoriesModule } from './repositories/index.ts';
import { roomServersModule } from './room-servers/index.ts';
import { roomsModule } from './rooms/index.ts';
import { routesModule } from './routes/index.ts';
import { scheduledTasksModule } from './scheduled-tasks/index.ts';
import { roomSecretsModule, secretsModule } from './secrets/index.ts';
import { roomServicesModule, servicesModule } from './services/index.ts';
import { sessionsModule } from './sessions/index.ts';
import { setupModule } from './setup/index.ts';
import { sharesModule } from './shares/index.ts';
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
  repositoriesModule,
  policiesModule,
  externalOAuthModule,
  sharesModule,
  scheduledTasksModule,
  servicesModule,
  roomServicesModule,
  secretsModule,
  roomSecretsModule,
  routesModule,
  mailboxesModule,
  roomServersModule,
  feedsModule,
  llmProxyModule,
  llmLoggersModule,
  billingModule,
  auditLogModule,
  setupModule,
];

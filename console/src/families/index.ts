// The families the console shows, in navigation order and sections. One entry per family (docs/contributing/console.md).
import { agents } from './agents/index.ts';
import { apiKeys } from './api-keys/index.ts';
import { auditLog } from './audit-log/index.ts';
import { billing } from './billing/index.ts';
import { externalOAuth } from './external-oauth/index.ts';
import type { Family } from './family.ts';
import { feeds } from './feeds/index.ts';
import { llmLoggers } from './llm-loggers/index.ts';
import { mailboxes } from './mailboxes/index.ts';
import { members } from './members/index.ts';
import { oauthClients } from './oauth-clients/index.ts';
import { project } from './project/index.ts';
import { repositories } from './repositories/index.ts';
import { rooms } from './rooms/index.ts';
import { routes } from './routes/index.ts';
import { scheduledTasks } from './scheduled-tasks/index.ts';
import { secrets } from './secrets/index.ts';
import { services } from './services/index.ts';
import { sessions } from './sessions/index.ts';
import { shares } from './shares/index.ts';
import { storage } from './storage/index.ts';
import { usage } from './usage/index.ts';
import { webhooks } from './webhooks/index.ts';

/** The project navigation: the project's own page, then the families in sections of related tasks. */
export const navigation: readonly { section?: string; families: readonly Family[] }[] = [
  { families: [project] },
  { section: 'Rooms', families: [rooms, agents, sessions, scheduledTasks, services, storage] },
  { section: 'Access', families: [members, apiKeys, oauthClients, externalOAuth, secrets, shares, auditLog] },
  { section: 'Integrations', families: [webhooks, feeds, llmLoggers, routes, mailboxes, repositories] },
  { section: 'Billing', families: [billing, usage] },
];

export const families: readonly Family[] = navigation.flatMap((group) => group.families);

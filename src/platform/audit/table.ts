// The audit log's table: one row per entry, in order of commit (`seq`); append-only in the database
// (migration 0160), pruned only by the retention schedule.
import { bigint, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../db/columns.ts';

export const auditLogTable = pgTable('audit_log', {
  seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  id: uuid('id').notNull(),
  at: timestamptz('at').notNull().defaultNow(),
  projectId: uuid('project_id'),
  actorType: text('actor_type').notNull(),
  actorId: text('actor_id'),
  actorName: text('actor_name'),
  credentialKind: text('credential_kind'),
  credentialId: text('credential_id'),
  oauthClientId: text('oauth_client_id'),
  action: text('action').notNull(),
  targetType: text('target_type'),
  targetId: text('target_id'),
  outcome: text('outcome').notNull(),
  reason: text('reason'),
  requestId: text('request_id'),
  clientAddress: text('client_address'),
  userAgent: text('user_agent'),
});

export type AuditRow = typeof auditLogTable.$inferSelect;

// The events table: one row per emitted event that some consumer wanted.
import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../db/columns.ts';

export const eventsTable = pgTable('events', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  type: text('type').notNull(),
  data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export type EventRow = typeof eventsTable.$inferSelect;

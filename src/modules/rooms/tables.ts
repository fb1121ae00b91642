// The rooms module's table. Other modules may join on `roomsTable` (read only, e.g. to address a
// room's current name from the id they keep, show it beside a mailbox, or name the room a feed
// subscription writes into); every write goes through the rooms service.
import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';

export const roomsTable = pgTable('rooms', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  name: text('name').notNull(),
  metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
  annotations: jsonb('annotations').$type<Record<string, string>>().notNull().default({}),
  permissions: jsonb('permissions').$type<Record<string, Record<string, unknown>>>().notNull().default({}),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

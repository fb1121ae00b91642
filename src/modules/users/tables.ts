// The users module's tables. Other modules may join on `usersTable` (read only, e.g. to list a
// project's members with their names); every write goes through the users service.
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, timestamptz } from '../../platform/db/columns.ts';

export const usersTable = pgTable('users', {
  id: uuid('id').primaryKey(),
  email: text('email').notNull(),
  firstName: text('first_name').notNull().default(''),
  lastName: text('last_name').notNull().default(''),
  passwordHash: text('password_hash'),
  emailVerifiedAt: timestamptz('email_verified_at'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export const personalAccessTokensTable = pgTable('personal_access_tokens', {
  id: uuid('id').primaryKey(),
  userId: uuid('user_id').notNull(),
  name: text('name').notNull(),
  secretHash: bytea('secret_hash').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  expiresAt: timestamptz('expires_at'),
});

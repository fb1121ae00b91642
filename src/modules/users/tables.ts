// The users module's tables. Other modules may join on `usersTable` (read only, e.g. to list a
// project's members with their names); every write goes through the users service.
import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { bigint, boolean, pgTable, text, uuid } from 'drizzle-orm/pg-core';
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

// Second factors. Other modules may ask whether a user has one (the members list, the admin policy)
// by joining these; every write goes through the users service.

export const userTotpTable = pgTable('user_totp', {
  userId: uuid('user_id').primaryKey(),
  secret: text('secret'),
  pendingSecret: text('pending_secret'),
  lastStep: bigint('last_step', { mode: 'number' }).notNull().default(0),
  enabledAt: timestamptz('enabled_at'),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export const userPasskeysTable = pgTable('user_passkeys', {
  id: uuid('id').primaryKey(),
  userId: uuid('user_id').notNull(),
  credentialId: text('credential_id').notNull(),
  publicKey: bytea('public_key').notNull(),
  signCount: bigint('sign_count', { mode: 'number' }).notNull().default(0),
  transports: text('transports').array().notNull().default([]),
  deviceType: text('device_type').$type<'singleDevice' | 'multiDevice'>().notNull(),
  backedUp: boolean('backed_up').notNull().default(false),
  name: text('name').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  lastUsedAt: timestamptz('last_used_at'),
});

/** A SQL condition: the user whose id is `userId` (a column or value) has a second factor. */
export function hasSecondFactorSql(userId: SQLWrapper): SQL {
  return sql`(exists (select 1 from ${userTotpTable} where ${userTotpTable.userId} = ${userId} and ${userTotpTable.secret} is not null)
    or exists (select 1 from ${userPasskeysTable} where ${userPasskeysTable.userId} = ${userId}))`;
}

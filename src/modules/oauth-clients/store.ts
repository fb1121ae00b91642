// OAuth clients. Management queries are keyed by project; the authorization server looks a client
// up by its globally unique client_id alone (findOAuthClient).
import { eq } from 'drizzle-orm';
import { boolean, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { Db } from '../../platform/db/engine.ts';
import { bytea } from '../users/store.ts';

export const oauthClientsTable = pgTable('oauth_clients', {
  clientId: text('client_id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  name: text('name').notNull().default(''),
  secretHash: bytea('secret_hash'),
  redirectUris: text('redirect_uris').array().notNull().default([]),
  grantTypes: text('grant_types').array().notNull(),
  responseTypes: text('response_types').array().notNull(),
  scope: text('scope').notNull(),
  metadata: jsonb('metadata').$type<Record<string, string>>().notNull().default({}),
  official: boolean('official').notNull().default(false),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});

export type OAuthClientRow = typeof oauthClientsTable.$inferSelect;

/** For the authorization server: any project's client, by id. */
export async function findOAuthClient(db: Db, clientId: string): Promise<OAuthClientRow | undefined> {
  const [row] = await db.select().from(oauthClientsTable).where(eq(oauthClientsTable.clientId, clientId));
  return row;
}

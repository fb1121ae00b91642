// OAuth clients. Management queries are keyed by project; the authorization server looks a client
// up by its globally unique client_id alone (findOAuthClient).
import { and, asc, eq, getTableColumns, ilike, or, sql } from 'drizzle-orm';
import { boolean, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';

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
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type OAuthClientRow = typeof oauthClientsTable.$inferSelect;

/** For the authorization server: any project's client, by id. */
export async function findOAuthClient(db: Db, clientId: string): Promise<OAuthClientRow | undefined> {
  const [row] = await db.select().from(oauthClientsTable).where(eq(oauthClientsTable.clientId, clientId));
  return row;
}

export async function insertOAuthClient(db: Db, client: typeof oauthClientsTable.$inferInsert): Promise<OAuthClientRow> {
  const [row] = await db.insert(oauthClientsTable).values(client).returning();
  return row!;
}

export async function findProjectOAuthClient(db: Db, projectId: string, clientId: string, options: { forUpdate?: boolean } = {}): Promise<OAuthClientRow | undefined> {
  const query = db.select().from(oauthClientsTable).where(and(eq(oauthClientsTable.projectId, projectId), eq(oauthClientsTable.clientId, clientId)));
  const [row] = options.forUpdate ? await query.for('update') : await query;
  return row;
}

export async function listOAuthClients(db: Db, projectId: string, page: Page) {
  const where = and(
    eq(oauthClientsTable.projectId, projectId),
    page.filter ? or(ilike(oauthClientsTable.name, likeContains(page.filter)), ilike(oauthClientsTable.clientId, likeContains(page.filter))) : undefined,
  );
  const rows = await db.select({ ...getTableColumns(oauthClientsTable), total: windowTotal }).from(oauthClientsTable).where(where)
    .orderBy(asc(oauthClientsTable.createdAt), asc(oauthClientsTable.clientId)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, oauthClientsTable, where));
}

export type OAuthClientChanges = Partial<Pick<OAuthClientRow, 'name' | 'redirectUris' | 'grantTypes' | 'responseTypes' | 'scope' | 'metadata'>>;

export async function updateOAuthClient(db: Db, projectId: string, clientId: string, changes: OAuthClientChanges): Promise<OAuthClientRow | undefined> {
  const [row] = await db.update(oauthClientsTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(oauthClientsTable.projectId, projectId), eq(oauthClientsTable.clientId, clientId))).returning();
  return row;
}

export async function deleteOAuthClient(db: Db, projectId: string, clientId: string): Promise<boolean> {
  const rows = await db.delete(oauthClientsTable)
    .where(and(eq(oauthClientsTable.projectId, projectId), eq(oauthClientsTable.clientId, clientId))).returning({ clientId: oauthClientsTable.clientId });
  return rows.length > 0;
}

/**
 * Clients whose redirect URIs or metadata mention an origin (any project): the candidates whose
 * allowed origins the service then checks exactly.
 */
export async function clientsMentioningOrigin(db: Db, origin: string): Promise<OAuthClientRow[]> {
  const prefix = `${origin.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return db.select().from(oauthClientsTable).where(or(
    sql`exists (select 1 from unnest(${oauthClientsTable.redirectUris}) as uri where uri like ${prefix})`,
    sql`${oauthClientsTable.metadata}->>'allowed_origins' like ${likeContains(origin)}`,
  )).limit(100);
}

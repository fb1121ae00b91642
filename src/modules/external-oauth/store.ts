// External OAuth registrations of a project or of one of its rooms. Every query is keyed by the
// project id and the scope: the project (room null) or one room.
import { and, asc, eq, getTableColumns, ilike, isNull, type SQL } from 'drizzle-orm';
import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';

export const registrationsTable = pgTable('external_oauth_registrations', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id'),
  delegatedTo: text('delegated_to').notNull().default(''),
  clientId: text('client_id').notNull(),
  clientSecretEncrypted: text('client_secret_encrypted'),
  oauth: jsonb('oauth').$type<Record<string, unknown>>().notNull().default({}),
  connector: jsonb('connector').$type<Record<string, string> | null>(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type RegistrationRow = typeof registrationsTable.$inferSelect;

/** Where a registration lives: the project (`roomId` null) or one room of it. */
export interface Scope {
  projectId: string;
  roomId: string | null;
}

const inScope = (scope: Scope): SQL => and(
  eq(registrationsTable.projectId, scope.projectId),
  scope.roomId === null ? isNull(registrationsTable.roomId) : eq(registrationsTable.roomId, scope.roomId),
)!;

const byId = (scope: Scope, id: string, delegatedTo: string | undefined) => and(
  inScope(scope),
  eq(registrationsTable.id, id),
  delegatedTo === undefined ? undefined : eq(registrationsTable.delegatedTo, delegatedTo),
);

export type RegistrationFields = Pick<RegistrationRow, 'delegatedTo' | 'clientId' | 'clientSecretEncrypted' | 'oauth' | 'connector'>;

export async function insertRegistration(db: Db, scope: Scope, id: string, fields: RegistrationFields): Promise<RegistrationRow> {
  const [row] = await db.insert(registrationsTable).values({ id, ...scope, ...fields }).returning();
  return row!;
}

/** The registration, locked until the transaction ends. */
export async function lockRegistration(db: Db, scope: Scope, id: string): Promise<RegistrationRow | undefined> {
  const [row] = await db.select().from(registrationsTable).where(byId(scope, id, undefined)).for('update');
  return row;
}

export async function updateRegistration(db: Db, scope: Scope, id: string, fields: RegistrationFields): Promise<RegistrationRow | undefined> {
  const [row] = await db.update(registrationsTable).set({ ...fields, updatedAt: new Date() }).where(byId(scope, id, undefined)).returning();
  return row;
}

/** Deletes the registration; with `delegatedTo`, only when it is delegated to that identity. */
export async function deleteRegistration(db: Db, scope: Scope, id: string, delegatedTo: string | undefined): Promise<boolean> {
  const rows = await db.delete(registrationsTable).where(byId(scope, id, delegatedTo)).returning({ id: registrationsTable.id });
  return rows.length > 0;
}

export async function listRegistrations(db: Db, scope: Scope, page: Page, delegatedTo: string | undefined) {
  const where = and(
    inScope(scope),
    delegatedTo === undefined ? undefined : eq(registrationsTable.delegatedTo, delegatedTo),
    page.filter ? ilike(registrationsTable.clientId, likeContains(page.filter)) : undefined,
  );
  const rows = await db.select({ ...getTableColumns(registrationsTable), total: windowTotal }).from(registrationsTable).where(where)
    .orderBy(asc(registrationsTable.createdAt), asc(registrationsTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, registrationsTable, where));
}

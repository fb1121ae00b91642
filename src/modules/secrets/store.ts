// Secrets of a project or of one room; values are stored encrypted. Every query is keyed by the
// project id and the scope.
import { and, asc, eq, getTableColumns, ilike, inArray, isNull, or, type SQL } from 'drizzle-orm';
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';

export const secretsTable = pgTable('secrets', {
  rowId: uuid('row_id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id'),
  id: text('id').notNull(),
  forIdentity: text('for_identity').notNull().default(''),
  delegatedTo: text('delegated_to').notNull().default(''),
  name: text('name').notNull(),
  type: text('type').notNull(),
  valueEncrypted: text('value_encrypted').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type SecretRow = typeof secretsTable.$inferSelect;

/** Project secrets (room null) or one room's. */
export interface Scope {
  projectId: string;
  roomId: string | null;
}

/** A secret within its scope: its id, and for room secrets the identities ('' for none). */
export interface SecretKey {
  id: string;
  forIdentity: string;
  delegatedTo: string;
}

function inScope(scope: Scope): SQL {
  return and(eq(secretsTable.projectId, scope.projectId), scope.roomId === null ? isNull(secretsTable.roomId) : eq(secretsTable.roomId, scope.roomId))!;
}

function byKey(scope: Scope, key: SecretKey): SQL {
  return and(inScope(scope), eq(secretsTable.id, key.id), eq(secretsTable.forIdentity, key.forIdentity), eq(secretsTable.delegatedTo, key.delegatedTo))!;
}

/** Inserts unless the id or the name is taken; undefined then. */
export async function insertSecret(db: Db, row: typeof secretsTable.$inferInsert): Promise<SecretRow | undefined> {
  const [inserted] = await db.insert(secretsTable).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function findSecret(db: Db, scope: Scope, key: SecretKey): Promise<SecretRow | undefined> {
  const [row] = await db.select().from(secretsTable).where(byKey(scope, key));
  return row;
}

/** Another secret of the scope with this name for the same identities, if any. */
export async function findNameClash(db: Db, scope: Scope, key: SecretKey, name: string): Promise<SecretRow | undefined> {
  const [row] = await db.select().from(secretsTable).where(and(inScope(scope), eq(secretsTable.name, name),
    eq(secretsTable.forIdentity, key.forIdentity), eq(secretsTable.delegatedTo, key.delegatedTo)));
  return row && row.id !== key.id ? row : undefined;
}

export async function listSecrets(db: Db, scope: Scope, page: Page & { forIdentity?: string | undefined }) {
  const where = and(
    inScope(scope),
    page.forIdentity === undefined ? undefined : eq(secretsTable.forIdentity, page.forIdentity),
    page.filter ? ilike(secretsTable.name, likeContains(page.filter)) : undefined,
  );
  const { valueEncrypted: _value, ...columns } = getTableColumns(secretsTable);
  const rows = await db.select({ ...columns, total: windowTotal }).from(secretsTable).where(where)
    .orderBy(asc(secretsTable.name), asc(secretsTable.forIdentity), asc(secretsTable.delegatedTo), asc(secretsTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, secretsTable, where));
}

export async function updateSecret(db: Db, scope: Scope, key: SecretKey, changes: Pick<SecretRow, 'name' | 'type' | 'valueEncrypted'>): Promise<SecretRow | undefined> {
  const [row] = await db.update(secretsTable).set({ ...changes, updatedAt: new Date() }).where(byKey(scope, key)).returning();
  return row;
}

export async function deleteSecret(db: Db, scope: Scope, key: SecretKey): Promise<boolean> {
  const rows = await db.delete(secretsTable).where(byKey(scope, key)).returning({ id: secretsTable.id });
  return rows.length > 0;
}

/**
 * What a room server may read for one identity of a room: the project secrets with these ids, and
 * the room's secrets for the whole room, for that identity, or delegated to it.
 */
export async function secretsForRoom(db: Db, projectId: string, roomId: string, projectSecretIds: readonly string[], identity: string | undefined): Promise<SecretRow[]> {
  const wholeRoom = and(eq(secretsTable.forIdentity, ''), eq(secretsTable.delegatedTo, ''));
  const roomSecrets = and(eq(secretsTable.roomId, roomId), identity ? or(wholeRoom, eq(secretsTable.forIdentity, identity), eq(secretsTable.delegatedTo, identity)) : wholeRoom);
  const projectSecrets = projectSecretIds.length > 0 ? and(isNull(secretsTable.roomId), inArray(secretsTable.id, [...projectSecretIds])) : undefined;
  return db.select().from(secretsTable).where(and(eq(secretsTable.projectId, projectId), or(roomSecrets, projectSecrets)))
    .orderBy(asc(secretsTable.roomId), asc(secretsTable.name), asc(secretsTable.forIdentity), asc(secretsTable.delegatedTo));
}

// Mailboxes: addresses claimed by projects. The address is unique across the deployment; every other
// query is keyed by the project id.
import { and, asc, eq, getTableColumns, ilike, type SQL } from 'drizzle-orm';
import { boolean, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { roomsTable } from '../rooms/tables.ts';

export const mailboxesTable = pgTable('mailboxes', {
  address: text('address').primaryKey(),
  projectId: uuid('project_id').notNull(),
  roomId: uuid('room_id').notNull(),
  queue: text('queue').notNull(),
  public: boolean('public').notNull().default(false),
  annotations: jsonb('annotations').$type<Record<string, string>>().notNull().default({}),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type MailboxRow = typeof mailboxesTable.$inferSelect;
/** A mailbox with the current name of its room. */
export type MailboxWithRoom = MailboxRow & { roomName: string };

const withRoom = { ...getTableColumns(mailboxesTable), roomName: roomsTable.name };

/** Inserts unless the address is claimed (by any project); false then. */
export async function insertMailbox(db: Db, row: typeof mailboxesTable.$inferInsert): Promise<boolean> {
  const inserted = await db.insert(mailboxesTable).values(row).onConflictDoNothing({ target: mailboxesTable.address }).returning({ address: mailboxesTable.address });
  return inserted.length > 0;
}

export async function findMailbox(db: Db, projectId: string, address: string): Promise<MailboxWithRoom | undefined> {
  const [row] = await db.select(withRoom).from(mailboxesTable).innerJoin(roomsTable, eq(roomsTable.id, mailboxesTable.roomId))
    .where(and(eq(mailboxesTable.projectId, projectId), eq(mailboxesTable.address, address)));
  return row;
}

export async function listMailboxes(db: Db, projectId: string, roomId: string | undefined, page: Page) {
  const where: SQL | undefined = and(
    eq(mailboxesTable.projectId, projectId),
    roomId === undefined ? undefined : eq(mailboxesTable.roomId, roomId),
    page.filter ? ilike(mailboxesTable.address, likeContains(page.filter)) : undefined,
  );
  const rows = await db.select({ ...withRoom, total: windowTotal }).from(mailboxesTable).innerJoin(roomsTable, eq(roomsTable.id, mailboxesTable.roomId))
    .where(where).orderBy(asc(mailboxesTable.address)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, mailboxesTable, where));
}

export async function updateMailbox(db: Db, projectId: string, address: string, changes: Pick<MailboxRow, 'roomId' | 'queue' | 'public' | 'annotations'>): Promise<boolean> {
  const rows = await db.update(mailboxesTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(mailboxesTable.projectId, projectId), eq(mailboxesTable.address, address))).returning({ address: mailboxesTable.address });
  return rows.length > 0;
}

export async function deleteMailbox(db: Db, projectId: string, address: string): Promise<boolean> {
  const rows = await db.delete(mailboxesTable).where(and(eq(mailboxesTable.projectId, projectId), eq(mailboxesTable.address, address))).returning({ address: mailboxesTable.address });
  return rows.length > 0;
}

export async function mailboxesOfRoom(db: Db, projectId: string, roomId: string): Promise<MailboxWithRoom[]> {
  return db.select(withRoom).from(mailboxesTable).innerJoin(roomsTable, eq(roomsTable.id, mailboxesTable.roomId))
    .where(and(eq(mailboxesTable.projectId, projectId), eq(mailboxesTable.roomId, roomId))).orderBy(asc(mailboxesTable.address));
}

// Pending invitations to a project (migrations/0070_project_invitations.sql). Every query is keyed by
// the project id, except finding an invitation by the id its link carries.
import { and, asc, eq, ilike, sql } from 'drizzle-orm';
import { integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';

export const invitationsTable = pgTable('project_invitations', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  email: text('email').notNull(),
  roles: text('roles').array().notNull(),
  secretHash: bytea('secret_hash').notNull(),
  invitedBy: uuid('invited_by'),
  sentCount: integer('sent_count').notNull().default(1),
  lastSentAt: timestamptz('last_sent_at').notNull().defaultNow(),
  expiresAt: timestamptz('expires_at').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export type InvitationRow = typeof invitationsTable.$inferSelect;

/** Creates the invitation, or renews the pending one for the same address (new secret, roles and expiry). */
export async function upsertInvitation(db: Db, row: typeof invitationsTable.$inferInsert): Promise<InvitationRow> {
  const [saved] = await db.insert(invitationsTable).values(row)
    .onConflictDoUpdate({
      target: [invitationsTable.projectId, invitationsTable.email],
      set: {
        roles: row.roles, secretHash: row.secretHash, invitedBy: row.invitedBy ?? null, expiresAt: row.expiresAt,
        lastSentAt: sql`now()`, sentCount: sql`${invitationsTable.sentCount} + 1`,
      },
    })
    .returning();
  return saved!;
}

export async function listInvitations(db: Db, projectId: string, page: Page) {
  const where = and(eq(invitationsTable.projectId, projectId), page.filter ? ilike(invitationsTable.email, likeContains(page.filter)) : undefined);
  const rows = await db.select({ row: invitationsTable, total: windowTotal }).from(invitationsTable)
    .where(where)
    .orderBy(asc(invitationsTable.createdAt), asc(invitationsTable.id))
    .limit(page.limit).offset(page.offset);
  return pageResult(rows.map((r) => ({ ...r.row, total: r.total })), page, () => countRows(db, invitationsTable, where));
}

export async function findInvitation(db: Db, projectId: string, id: string): Promise<InvitationRow | undefined> {
  const [row] = await db.select().from(invitationsTable).where(and(eq(invitationsTable.projectId, projectId), eq(invitationsTable.id, id)));
  return row;
}

/** The invitation a link names, in whichever project. */
export async function findInvitationById(db: Db, id: string): Promise<InvitationRow | undefined> {
  const [row] = await db.select().from(invitationsTable).where(eq(invitationsTable.id, id));
  return row;
}

export async function renewInvitation(db: Db, projectId: string, id: string, secretHash: Buffer, expiresAt: Date): Promise<InvitationRow | undefined> {
  const [row] = await db.update(invitationsTable)
    .set({ secretHash, expiresAt, lastSentAt: sql`now()`, sentCount: sql`${invitationsTable.sentCount} + 1` })
    .where(and(eq(invitationsTable.projectId, projectId), eq(invitationsTable.id, id)))
    .returning();
  return row;
}

/** Deletes it; true when it was there (a second accept or revoke finds nothing). */
export async function deleteInvitation(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(invitationsTable).where(and(eq(invitationsTable.projectId, projectId), eq(invitationsTable.id, id))).returning({ id: invitationsTable.id });
  return rows.length > 0;
}

export async function deleteInvitationsFor(db: Db, projectId: string, email: string): Promise<void> {
  await db.delete(invitationsTable).where(and(eq(invitationsTable.projectId, projectId), sql`lower(${invitationsTable.email}) = lower(${email})`));
}

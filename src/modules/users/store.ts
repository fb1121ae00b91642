// Users and their personal access tokens.
import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../platform/db/engine.ts';
import { personalAccessTokensTable, usersTable } from './tables.ts';

export type UserRow = typeof usersTable.$inferSelect;

export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(usersTable).where(eq(usersTable.id, id));
  return row;
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(usersTable).where(sql`lower(${usersTable.email}) = lower(${email})`);
  return row;
}

export async function anyUser(db: Db): Promise<boolean> {
  const rows = await db.select({ id: usersTable.id }).from(usersTable).limit(1);
  return rows.length > 0;
}

export async function insertUser(db: Db, user: typeof usersTable.$inferInsert): Promise<UserRow> {
  const [row] = await db.insert(usersTable).values(user).returning();
  return row!;
}

export async function updateUser(db: Db, id: string, changes: Partial<Pick<UserRow, 'firstName' | 'lastName' | 'passwordHash' | 'emailVerifiedAt'>>): Promise<UserRow | undefined> {
  const [row] = await db.update(usersTable).set({ ...changes, updatedAt: new Date() }).where(eq(usersTable.id, id)).returning();
  return row;
}

export async function insertPersonalAccessToken(db: Db, token: typeof personalAccessTokensTable.$inferInsert): Promise<void> {
  await db.insert(personalAccessTokensTable).values(token);
}

/** A live token with its user; expired tokens are not returned. */
export async function findPersonalAccessToken(db: Db, id: string) {
  const [row] = await db
    .select({ token: personalAccessTokensTable, user: usersTable })
    .from(personalAccessTokensTable)
    .innerJoin(usersTable, eq(usersTable.id, personalAccessTokensTable.userId))
    .where(and(eq(personalAccessTokensTable.id, id), or(isNull(personalAccessTokensTable.expiresAt), gt(personalAccessTokensTable.expiresAt, new Date()))));
  return row;
}

// SQL of second factors: the authenticator app, passkeys, recovery codes and WebAuthn challenges.
// Every step that must happen once (a time step's code, a recovery code, a challenge, a signature
// counter) is one conditional statement, so concurrent requests on any instance cannot both win.
import { and, asc, count, eq, gt, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { userPasskeysTable, userTotpTable } from './tables.ts';

export type TotpRow = typeof userTotpTable.$inferSelect;
export type PasskeyRow = typeof userPasskeysTable.$inferSelect;

export const recoveryCodesTable = pgTable('user_recovery_codes', {
  id: uuid('id').primaryKey(),
  userId: uuid('user_id').notNull(),
  codeHash: bytea('code_hash').notNull(),
  usedAt: timestamptz('used_at'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export const challengesTable = pgTable('webauthn_challenges', {
  id: uuid('id').primaryKey(),
  purpose: text('purpose').$type<ChallengePurpose>().notNull(),
  challenge: text('challenge').notNull(),
  userId: uuid('user_id'),
  flow: text('flow'),
  expiresAt: timestamptz('expires_at').notNull(),
});

export type ChallengePurpose = 'register' | 'authenticate';

// --- authenticator app ----------------------------------------------------------------------------

export async function findTotp(db: Db, userId: string): Promise<TotpRow | undefined> {
  const [row] = await db.select().from(userTotpTable).where(eq(userTotpTable.userId, userId));
  return row;
}

/** Keeps an enrolment waiting for its first code; a confirmed authenticator stays until then. */
export async function setPendingTotp(db: Db, userId: string, pendingSecret: string): Promise<void> {
  await db.insert(userTotpTable).values({ userId, pendingSecret })
    .onConflictDoUpdate({ target: userTotpTable.userId, set: { pendingSecret, updatedAt: new Date() } });
}

/**
 * Makes the pending enrolment the authenticator, if it is still the one that was checked, and
 * records the step of the code that confirmed it (that code cannot sign in afterwards).
 */
export async function confirmTotp(db: Db, userId: string, pendingSecret: string, step: number): Promise<boolean> {
  const rows = await db.update(userTotpTable)
    .set({ secret: pendingSecret, pendingSecret: null, lastStep: step, enabledAt: new Date(), updatedAt: new Date() })
    .where(and(eq(userTotpTable.userId, userId), eq(userTotpTable.pendingSecret, pendingSecret)))
    .returning({ userId: userTotpTable.userId });
  return rows.length > 0;
}

/** Records an accepted code's time step; false when that step or a later one was used already (replay). */
export async function useTotpStep(db: Db, userId: string, step: number): Promise<boolean> {
  const rows = await db.update(userTotpTable).set({ lastStep: step })
    .where(and(eq(userTotpTable.userId, userId), isNotNull(userTotpTable.secret), lt(userTotpTable.lastStep, step)))
    .returning({ userId: userTotpTable.userId });
  return rows.length > 0;
}

export async function deleteTotp(db: Db, userId: string): Promise<boolean> {
  const rows = await db.delete(userTotpTable).where(and(eq(userTotpTable.userId, userId), isNotNull(userTotpTable.secret))).returning({ userId: userTotpTable.userId });
  return rows.length > 0;
}

// --- passkeys -------------------------------------------------------------------------------------

export function listPasskeys(db: Db, userId: string): Promise<PasskeyRow[]> {
  return db.select().from(userPasskeysTable).where(eq(userPasskeysTable.userId, userId)).orderBy(asc(userPasskeysTable.createdAt), asc(userPasskeysTable.id));
}

export async function findPasskeyByCredential(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  const [row] = await db.select().from(userPasskeysTable).where(eq(userPasskeysTable.credentialId, credentialId));
  return row;
}

export async function insertPasskey(db: Db, row: typeof userPasskeysTable.$inferInsert): Promise<PasskeyRow> {
  const [inserted] = await db.insert(userPasskeysTable).values(row).returning();
  return inserted!;
}

export async function renamePasskey(db: Db, userId: string, id: string, name: string): Promise<PasskeyRow | undefined> {
  const [row] = await db.update(userPasskeysTable).set({ name }).where(and(eq(userPasskeysTable.userId, userId), eq(userPasskeysTable.id, id))).returning();
  return row;
}

export async function deletePasskey(db: Db, userId: string, id: string): Promise<PasskeyRow | undefined> {
  const [row] = await db.delete(userPasskeysTable).where(and(eq(userPasskeysTable.userId, userId), eq(userPasskeysTable.id, id))).returning();
  return row;
}

/**
 * Records a use and the authenticator's new signature counter. An authenticator that counts must
 * move its counter forward: a counter that did not (a cloned key, or the same assertion twice at
 * once) matches no row and the use is refused. One that always reports 0 does not count.
 */
export async function usePasskey(db: Db, id: string, seenCount: number, newCount: number): Promise<boolean> {
  const rows = await db.update(userPasskeysTable).set({ signCount: newCount, lastUsedAt: new Date() })
    .where(and(eq(userPasskeysTable.id, id), eq(userPasskeysTable.signCount, seenCount), or(gt(sql`${newCount}::bigint`, userPasskeysTable.signCount), eq(sql`${newCount}::bigint`, 0))))
    .returning({ id: userPasskeysTable.id });
  return rows.length > 0;
}

/** Removes every second factor of a user and its recovery codes; what was removed. */
export async function deleteAllFactors(db: Db, userId: string): Promise<{ totp: boolean; passkeys: number; recoveryCodes: number }> {
  const totp = await db.delete(userTotpTable).where(eq(userTotpTable.userId, userId)).returning({ secret: userTotpTable.secret });
  const passkeys = await db.delete(userPasskeysTable).where(eq(userPasskeysTable.userId, userId)).returning({ id: userPasskeysTable.id });
  const codes = await db.delete(recoveryCodesTable).where(eq(recoveryCodesTable.userId, userId)).returning({ id: recoveryCodesTable.id });
  return { totp: totp.some((row) => row.secret !== null), passkeys: passkeys.length, recoveryCodes: codes.length };
}

// --- recovery codes -------------------------------------------------------------------------------

/** Replaces every recovery code of a user. */
export async function replaceRecoveryCodes(db: Db, userId: string, codes: { id: string; codeHash: Buffer }[]): Promise<void> {
  await db.delete(recoveryCodesTable).where(eq(recoveryCodesTable.userId, userId));
  if (codes.length > 0) await db.insert(recoveryCodesTable).values(codes.map((c) => ({ ...c, userId })));
}

export async function deleteRecoveryCodes(db: Db, userId: string): Promise<void> {
  await db.delete(recoveryCodesTable).where(eq(recoveryCodesTable.userId, userId));
}

/** Uses a recovery code up; false when it is not one of the user's unused codes. */
export async function useRecoveryCode(db: Db, userId: string, codeHash: Buffer): Promise<boolean> {
  const rows = await db.update(recoveryCodesTable).set({ usedAt: new Date() })
    .where(and(eq(recoveryCodesTable.userId, userId), eq(recoveryCodesTable.codeHash, codeHash), isNull(recoveryCodesTable.usedAt)))
    .returning({ id: recoveryCodesTable.id });
  return rows.length > 0;
}

export async function recoveryCodeCounts(db: Db, userId: string): Promise<{ total: number; unused: number; createdAt: Date | null }> {
  const [row] = await db.select({
    total: count(),
    unused: sql<number>`count(*) filter (where ${recoveryCodesTable.usedAt} is null)`,
    createdAt: sql<Date | string | null>`max(${recoveryCodesTable.createdAt})`,
  }).from(recoveryCodesTable).where(eq(recoveryCodesTable.userId, userId));
  const createdAt = row?.createdAt ? new Date(row.createdAt) : null;
  return { total: Number(row?.total ?? 0), unused: Number(row?.unused ?? 0), createdAt };
}

// --- WebAuthn challenges --------------------------------------------------------------------------

export async function insertChallenge(db: Db, row: typeof challengesTable.$inferInsert): Promise<void> {
  await db.insert(challengesTable).values(row);
}

/**
 * Takes a live challenge of this purpose, for this user or sign-in flow, out of the table: true
 * for exactly one caller, once.
 */
export async function takeChallenge(db: Db, purpose: ChallengePurpose, challenge: string, owner: { userId: string } | { flow: string }): Promise<boolean> {
  const rows = await db.delete(challengesTable)
    .where(and(
      eq(challengesTable.purpose, purpose),
      eq(challengesTable.challenge, challenge),
      'userId' in owner ? eq(challengesTable.userId, owner.userId) : eq(challengesTable.flow, owner.flow),
      gt(challengesTable.expiresAt, new Date()),
    ))
    .returning({ id: challengesTable.id });
  return rows.length > 0;
}

export async function purgeChallenges(db: Db, before: Date): Promise<number> {
  const rows = await db.delete(challengesTable).where(lt(challengesTable.expiresAt, before)).returning({ id: challengesTable.id });
  return rows.length;
}

// SQL of the authorization server: oidc-provider's models, single-use email secrets and links to
// upstream identities. Provider models are global (not per project): a grant belongs to a user and a
// client, and the client carries the project.
import { and, desc, eq, gt, isNull, lt, or, sql } from 'drizzle-orm';
import { integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { bytea, timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { preparedPerDb } from '../../platform/db/statements.ts';

export const providerModelsTable = pgTable('oauth_provider_models', {
  model: text('model').notNull(),
  id: text('id').notNull(),
  payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
  grantId: text('grant_id'),
  accountId: text('account_id'),
  uid: text('uid'),
  userCode: text('user_code'),
  expiresAt: timestamptz('expires_at'),
  consumedAt: timestamptz('consumed_at'),
}, (t) => [primaryKey({ columns: [t.model, t.id] })]);

export type ProviderModelRow = typeof providerModelsTable.$inferInsert;

/** Not expired, by the database's clock (the same on every instance). */
const live = () => or(isNull(providerModelsTable.expiresAt), gt(providerModelsTable.expiresAt, sql`now()`));

// Every token the provider issues is an upsert, and every token it reads back a find: both are
// prepared once per handle. The expiry goes in as text (null for none), since a timestamp column's
// encoder cannot take a null placeholder value.
const upsert = preparedPerDb((db) => db.insert(providerModelsTable).values({
  model: sql.placeholder('model'), id: sql.placeholder('id'), payload: sql.placeholder('payload'), grantId: sql.placeholder('grantId'),
  accountId: sql.placeholder('accountId'), uid: sql.placeholder('uid'), userCode: sql.placeholder('userCode'),
  expiresAt: sql`${sql.placeholder('expiresAt')}::timestamptz`,
}).onConflictDoUpdate({
  target: [providerModelsTable.model, providerModelsTable.id],
  set: {
    payload: sql`excluded.payload`, grantId: sql`excluded.grant_id`, accountId: sql`excluded.account_id`, uid: sql`excluded.uid`,
    userCode: sql`excluded.user_code`, expiresAt: sql`excluded.expires_at`,
  },
}).prepare('oauth_model_upsert'));

const byId = preparedPerDb((db) => db.select({ payload: providerModelsTable.payload, consumedAt: providerModelsTable.consumedAt })
  .from(providerModelsTable)
  .where(and(eq(providerModelsTable.model, sql.placeholder('model')), eq(providerModelsTable.id, sql.placeholder('id')), live()))
  .prepare('oauth_model_by_id'));

export async function upsertModel(db: Db, row: ProviderModelRow): Promise<void> {
  // consumed_at is left alone: re-saving a consumed artefact must not make it redeemable again.
  await upsert(db).execute({
    model: row.model, id: row.id, payload: row.payload, grantId: row.grantId ?? null, accountId: row.accountId ?? null,
    uid: row.uid ?? null, userCode: row.userCode ?? null, expiresAt: row.expiresAt?.toISOString() ?? null,
  });
}

export interface StoredModel {
  payload: Record<string, unknown>;
  consumedAt: Date | null;
}

export async function findModel(db: Db, model: string, id: string): Promise<StoredModel | undefined> {
  const [row] = await byId(db).execute({ model, id });
  return row;
}

export async function findModelBy(db: Db, model: string, by: 'uid' | 'userCode', value: string): Promise<StoredModel | undefined> {
  const [row] = await db.select({ payload: providerModelsTable.payload, consumedAt: providerModelsTable.consumedAt })
    .from(providerModelsTable)
    .where(and(eq(providerModelsTable.model, model), eq(providerModelsTable[by], value), live()))
    .limit(1);
  return row;
}

/**
 * Marks an artefact consumed if, and only if, nobody did before: one conditional UPDATE, so of N
 * concurrent redemptions exactly one sees `consumed: true`. The others learn the grant to revoke.
 */
export async function consumeModel(db: Db, model: string, id: string): Promise<{ consumed: boolean; grantId: string | null }> {
  const [won] = await db.update(providerModelsTable).set({ consumedAt: new Date() })
    .where(and(eq(providerModelsTable.model, model), eq(providerModelsTable.id, id), isNull(providerModelsTable.consumedAt)))
    .returning({ grantId: providerModelsTable.grantId });
  if (won) return { consumed: true, grantId: won.grantId };
  const [lost] = await db.select({ grantId: providerModelsTable.grantId }).from(providerModelsTable)
    .where(and(eq(providerModelsTable.model, model), eq(providerModelsTable.id, id)));
  return { consumed: false, grantId: lost?.grantId ?? null };
}

export async function destroyModel(db: Db, model: string, id: string): Promise<void> {
  await db.delete(providerModelsTable).where(and(eq(providerModelsTable.model, model), eq(providerModelsTable.id, id)));
}

export async function destroyByGrant(db: Db, model: string, grantId: string): Promise<void> {
  await db.delete(providerModelsTable).where(and(eq(providerModelsTable.model, model), eq(providerModelsTable.grantId, grantId)));
}

/** Deletes a grant; what it held (its client and account) when there was one. */
export async function destroyGrant(db: Db, grantId: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await db.delete(providerModelsTable).where(and(eq(providerModelsTable.model, 'Grant'), eq(providerModelsTable.id, grantId)))
    .returning({ payload: providerModelsTable.payload });
  return row?.payload;
}

/** Revokes a whole grant: the grant itself and every code and token issued under it; what the grant held, when there was one. */
export async function revokeGrant(db: Db, grantId: string): Promise<Record<string, unknown> | undefined> {
  const rows = await db.delete(providerModelsTable).where(or(
    eq(providerModelsTable.grantId, grantId),
    and(eq(providerModelsTable.model, 'Grant'), eq(providerModelsTable.id, grantId)),
  )).returning({ model: providerModelsTable.model, payload: providerModelsTable.payload });
  return rows.find((row) => row.model === 'Grant')?.payload;
}

/** Signs a user out everywhere: their sessions, grants, codes and refresh tokens. */
export async function revokeAccount(db: Db, accountId: string): Promise<void> {
  await db.delete(providerModelsTable).where(eq(providerModelsTable.accountId, accountId));
}

export async function grantIsLive(db: Db, grantId: string): Promise<boolean> {
  const [row] = await db.select({ id: providerModelsTable.id }).from(providerModelsTable)
    .where(and(eq(providerModelsTable.model, 'Grant'), eq(providerModelsTable.id, grantId), live()));
  return row !== undefined;
}

/** Deletes the provider's records and the emailed secrets that expired before `before`. */
export async function purgeExpired(db: Db, before: Date): Promise<number> {
  const models = await db.delete(providerModelsTable).where(lt(providerModelsTable.expiresAt, before)).returning({ id: providerModelsTable.id });
  const secrets = await db.delete(emailTokensTable).where(lt(emailTokensTable.expiresAt, before)).returning({ id: emailTokensTable.id });
  const pending = await db.delete(pendingFactorsTable).where(lt(pendingFactorsTable.expiresAt, before)).returning({ flow: pendingFactorsTable.flow });
  return models.length + secrets.length + pending.length;
}

// --- single-use secrets sent by email ---------------------------------------------------------

export const emailTokensTable = pgTable('auth_email_tokens', {
  id: uuid('id').primaryKey(),
  purpose: text('purpose').$type<EmailTokenPurpose>().notNull(),
  userId: uuid('user_id').notNull(),
  secretHash: bytea('secret_hash').notNull(),
  flow: text('flow').notNull(),
  passwordHash: text('password_hash'),
  attempts: integer('attempts').notNull().default(0),
  expiresAt: timestamptz('expires_at').notNull(),
  usedAt: timestamptz('used_at'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export type EmailTokenPurpose = 'confirm' | 'reset' | 'code';
export type EmailTokenRow = typeof emailTokensTable.$inferSelect;

export async function insertEmailToken(db: Db, row: typeof emailTokensTable.$inferInsert): Promise<void> {
  await db.insert(emailTokensTable).values(row);
}

/** An unused, unexpired token by id. */
export async function findEmailToken(db: Db, id: string, purpose: EmailTokenPurpose): Promise<EmailTokenRow | undefined> {
  const [row] = await db.select().from(emailTokensTable)
    .where(and(eq(emailTokensTable.id, id), eq(emailTokensTable.purpose, purpose), isNull(emailTokensTable.usedAt), gt(emailTokensTable.expiresAt, new Date())));
  return row;
}

/** The newest unused, unexpired code of a user in one sign-in flow. */
export async function findLatestCode(db: Db, userId: string, flow: string): Promise<EmailTokenRow | undefined> {
  const [row] = await db.select().from(emailTokensTable)
    .where(and(eq(emailTokensTable.userId, userId), eq(emailTokensTable.purpose, 'code'), eq(emailTokensTable.flow, flow), isNull(emailTokensTable.usedAt), gt(emailTokensTable.expiresAt, new Date())))
    .orderBy(desc(emailTokensTable.createdAt))
    .limit(1);
  return row;
}

/** A user's live confirmation links, newest first (a few: each sign-up attempt makes one). */
export function pendingConfirmations(db: Db, userId: string): Promise<EmailTokenRow[]> {
  return db.select().from(emailTokensTable)
    .where(and(eq(emailTokensTable.userId, userId), eq(emailTokensTable.purpose, 'confirm'), isNull(emailTokensTable.usedAt), gt(emailTokensTable.expiresAt, new Date())))
    .orderBy(desc(emailTokensTable.createdAt))
    .limit(3);
}

/** Uses a token up; false when someone else did first (single use under concurrency). */
export async function useEmailToken(db: Db, id: string): Promise<boolean> {
  const rows = await db.update(emailTokensTable).set({ usedAt: new Date() })
    .where(and(eq(emailTokensTable.id, id), isNull(emailTokensTable.usedAt), gt(emailTokensTable.expiresAt, new Date())))
    .returning({ id: emailTokensTable.id });
  return rows.length > 0;
}

/** Counts a wrong guess; the token is used up once it reaches `max`. Returns the attempts so far. */
export async function countFailedAttempt(db: Db, id: string, max: number): Promise<number> {
  const [row] = await db.update(emailTokensTable)
    .set({ attempts: sql`${emailTokensTable.attempts} + 1`, usedAt: sql`case when ${emailTokensTable.attempts} + 1 >= ${max} then now() else ${emailTokensTable.usedAt} end` })
    .where(eq(emailTokensTable.id, id))
    .returning({ attempts: emailTokensTable.attempts });
  return row?.attempts ?? max;
}

/** Retires a user's outstanding tokens of one purpose (a new code or link supersedes the old). */
export async function retireEmailTokens(db: Db, userId: string, purpose: EmailTokenPurpose): Promise<void> {
  await db.update(emailTokensTable).set({ usedAt: new Date() })
    .where(and(eq(emailTokensTable.userId, userId), eq(emailTokensTable.purpose, purpose), isNull(emailTokensTable.usedAt)));
}

// --- upstream identities ------------------------------------------------------------------------

export const userIdentitiesTable = pgTable('user_identities', {
  provider: text('provider').notNull(),
  subject: text('subject').notNull(),
  userId: uuid('user_id').notNull(),
  email: text('email'),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
}, (t) => [primaryKey({ columns: [t.provider, t.subject] })]);

export async function findIdentity(db: Db, provider: string, subject: string): Promise<{ userId: string } | undefined> {
  const [row] = await db.select({ userId: userIdentitiesTable.userId }).from(userIdentitiesTable)
    .where(and(eq(userIdentitiesTable.provider, provider), eq(userIdentitiesTable.subject, subject)));
  return row;
}

export async function linkIdentity(db: Db, row: typeof userIdentitiesTable.$inferInsert): Promise<void> {
  await db.insert(userIdentitiesTable).values(row).onConflictDoNothing();
}

// --- sign-ins waiting for their second factor ---------------------------------------------------

export const pendingFactorsTable = pgTable('signin_pending_factors', {
  flow: text('flow').primaryKey(),
  userId: uuid('user_id').notNull(),
  amr: text('amr').array().notNull(),
  expiresAt: timestamptz('expires_at').notNull(),
});

export type PendingFactor = typeof pendingFactorsTable.$inferSelect;

/** Records that the flow's first factor passed (for this account; a later first factor replaces it). */
export async function setPendingFactor(db: Db, row: PendingFactor): Promise<void> {
  await db.insert(pendingFactorsTable).values(row)
    .onConflictDoUpdate({ target: pendingFactorsTable.flow, set: { userId: row.userId, amr: row.amr, expiresAt: row.expiresAt } });
}

export async function findPendingFactor(db: Db, flow: string): Promise<PendingFactor | undefined> {
  const [row] = await db.select().from(pendingFactorsTable).where(and(eq(pendingFactorsTable.flow, flow), gt(pendingFactorsTable.expiresAt, new Date())));
  return row;
}

/** Ends the wait once the second factor is given: true for exactly one caller. */
export async function takePendingFactor(db: Db, flow: string, userId: string): Promise<boolean> {
  const rows = await db.delete(pendingFactorsTable)
    .where(and(eq(pendingFactorsTable.flow, flow), eq(pendingFactorsTable.userId, userId), gt(pendingFactorsTable.expiresAt, new Date())))
    .returning({ flow: pendingFactorsTable.flow });
  return rows.length > 0;
}

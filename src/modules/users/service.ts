// Rules for users: accounts, passwords, personal access tokens and who may see a profile.
import { randomUUID } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { AppContext } from '../../context.ts';
import type { CredentialVerifier, Principal } from '../../platform/http/auth.ts';
import { apiError, conflict, forbidden, notFound } from '../../platform/http/errors.ts';
import { newPersonalAccessToken, parsePersonalAccessToken, isUuid } from '../../platform/crypto/credentials.ts';
import { hashSecret, secretMatches } from '../../platform/crypto/secrets.ts';
import type { Db } from '../../platform/db/engine.ts';
import * as store from './store.ts';

// Reads and writes other modules (the OAuth server's sign-in, projects) may use; rules stay here.
export { findUserByEmail, findUserById, updateUser, type UserRow } from './store.ts';
// Second factors: the sign-in pages verify them, the projects module asks who has one.
export { createSecondFactors, hasSecondFactor, type SecondFactors } from './factors.ts';

export const PASSWORD_MIN_LENGTH = 8;

export function hashPassword(password: string): Promise<string> {
  if (password.length < PASSWORD_MIN_LENGTH) throw apiError('weak_password', { min: PASSWORD_MIN_LENGTH });
  // @node-rs/argon2 defaults to argon2id with OWASP-recommended cost parameters.
  return hash(password);
}

export async function passwordMatches(user: store.UserRow, password: string): Promise<boolean> {
  if (!user.passwordHash) return false;
  try {
    return await verify(user.passwordHash, password);
  } catch {
    return false;
  }
}

export interface NewUser {
  email: string;
  password?: string | undefined;
  firstName?: string | undefined;
  lastName?: string | undefined;
  emailVerified?: boolean;
}

export async function createUser(db: Db, input: NewUser): Promise<store.UserRow> {
  if (await store.findUserByEmail(db, input.email)) throw conflict('An account with that email already exists', 'already_exists');
  return store.insertUser(db, {
    id: randomUUID(),
    email: input.email,
    firstName: input.firstName ?? '',
    lastName: input.lastName ?? '',
    passwordHash: input.password === undefined ? null : await hashPassword(input.password),
    emailVerifiedAt: input.emailVerified ? new Date() : null,
  });
}

/** A new personal access token (its value, shown once); it never expires unless `expiresAt` says so. */
export async function issuePersonalAccessToken(db: Db, userId: string, name: string, expiresAt?: Date): Promise<string> {
  const token = newPersonalAccessToken(randomUUID());
  await store.insertPersonalAccessToken(db, { id: token.tokenId, userId, name, secretHash: hashSecret(token.secret), expiresAt: expiresAt ?? null });
  return token.value;
}

export function personalAccessTokenVerifier(db: Db): CredentialVerifier {
  return {
    kind: 'user',
    matches: (token) => token.startsWith('atp_'),
    async verify(token) {
      const parsed = parsePersonalAccessToken(token);
      if (!parsed) return undefined;
      const row = await store.findPersonalAccessToken(db, parsed.tokenId);
      if (!row || !secretMatches(parsed.secret, row.token.secretHash)) return undefined;
      return { kind: 'user', credentialId: row.token.id, userId: row.user.id, name: row.user.email } satisfies Principal;
    },
  };
}

/** Resolves `me` and checks that the caller may read this user's profile. */
export async function readableProfile(ctx: AppContext, principal: Principal, userIdParam: string): Promise<store.UserRow> {
  const userId = resolveUserId(principal, userIdParam);
  const isSelf = principal.userId === userId;
  if (!isSelf) {
    const allowed = principal.kind === 'api_key'
      ? (await ctx.auth.memberships.rolesOf(userId, principal.projectId!)) !== undefined
      : principal.kind === 'user' && (await ctx.auth.memberships.sharesProjectWithRole(principal.userId!, userId, ['admin', 'developer']));
    if (!allowed) throw notFound('User');
  }
  const user = await store.findUserById(ctx.db, userId);
  if (!user) throw notFound('User');
  return user;
}

export async function updateOwnProfile(ctx: AppContext, principal: Principal, userIdParam: string, changes: { first_name?: string | undefined; last_name?: string | undefined }): Promise<store.UserRow> {
  const userId = resolveUserId(principal, userIdParam);
  if (principal.userId !== userId) throw forbidden('Only the user may change their own profile');
  const user = await store.updateUser(ctx.db, userId, {
    ...(changes.first_name !== undefined ? { firstName: changes.first_name } : {}),
    ...(changes.last_name !== undefined ? { lastName: changes.last_name } : {}),
  });
  if (!user) throw notFound('User');
  return user;
}

function resolveUserId(principal: Principal, userIdParam: string): string {
  if (userIdParam === 'me') {
    if (!principal.userId) throw notFound('User (an API key acts for a project, not a user)');
    return principal.userId;
  }
  if (!isUuid(userIdParam)) throw notFound('User');
  return userIdParam;
}

/** Whether any account exists yet (an empty database offers the first-run setup). */
export async function hasUsers(db: Db): Promise<boolean> {
  return store.anyUser(db);
}

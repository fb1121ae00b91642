// The claims Atrium states about a user, and which scope releases which. One mapping serves both
// places that answer with claims: the ID token (oidc-provider's findAccount, filtered by the
// library through `SCOPE_CLAIMS`) and /oauth/userinfo (served by Atrium for its JWT access tokens).
import type { UserRow } from '../users/service.ts';

/** oidc-provider's `claims` configuration: the claims each identity scope releases. */
export const SCOPE_CLAIMS = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['name', 'given_name', 'family_name', 'updated_at'],
} as const satisfies Record<string, readonly (keyof UserClaims)[]>;

export interface UserClaims {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  given_name?: string;
  family_name?: string;
  updated_at?: number;
}

/** Everything Atrium states about the user; empty names are left out rather than sent as "". */
export function userClaims(user: UserRow): UserClaims {
  const name = `${user.firstName} ${user.lastName}`.trim();
  return {
    sub: user.id,
    email: user.email,
    email_verified: user.emailVerifiedAt !== null,
    ...(name ? { name } : {}),
    ...(user.firstName ? { given_name: user.firstName } : {}),
    ...(user.lastName ? { family_name: user.lastName } : {}),
    updated_at: Math.floor(user.updatedAt.getTime() / 1000),
  };
}

/** The claims the granted scopes release (`sub` always). */
export function claimsForScopes(user: UserRow, scopes: ReadonlySet<string>): UserClaims {
  const all = userClaims(user);
  const released: UserClaims = { sub: all.sub };
  for (const [scope, names] of Object.entries(SCOPE_CLAIMS)) {
    if (!scopes.has(scope)) continue;
    for (const name of names) if (all[name] !== undefined) Object.assign(released, { [name]: all[name] });
  }
  return released;
}

// How a sign-in proved the user's identity, as the ID token states it: `amr` values of RFC 8176
// and one `acr` value for sign-ins with two factors, which clients can ask for with `acr_values`.
//
//   pwd  a password                 otp  a one-time code (emailed, authenticator app, recovery code)
//   hwk  a passkey bound to one authenticator      swk  a passkey synced between devices
//   mfa  two factors: a second factor after the first, or a passkey with user verification
import type { Interaction } from 'oidc-provider';

/** The `acr` of a sign-in with two factors (OpenID PAPE's multi-factor policy, as Auth0 and others use it). */
export const MFA_ACR = 'http://schemas.openid.net/pape/policies/2007/06/multi-factor';

export type Amr = 'pwd' | 'otp' | 'hwk' | 'swk' | 'mfa';

/** What a finished login records: `amr` in the order the factors were given, and `acr` for two factors. */
export function loginResult(accountId: string, amr: readonly string[]): { login: { accountId: string; amr?: string[]; acr?: string } } {
  const unique = [...new Set(amr)];
  return { login: { accountId, ...(unique.length > 0 ? { amr: unique } : {}), ...(unique.includes('mfa') ? { acr: MFA_ACR } : {}) } };
}

/** Whether the client asked for a sign-in with two factors (`acr_values`). */
export function asksForSecondFactor(params: Interaction['params'] | Record<string, unknown>): boolean {
  const values = params.acr_values;
  return typeof values === 'string' && values.split(' ').includes(MFA_ACR);
}

// The security events of the sign-in pages, recorded in the audit log (docs/audit-log.md) without
// holding up the page: an entry joins the next grouped write. They belong to the deployment (no
// project); the entry names the account, or the address a failed attempt gave, and the OAuth
// client the flow signs in to. Never a password, code or link.
import { auditOrigin } from '../../../platform/http/audit.ts';
import type { AuditOutcome } from '../../../platform/audit/log.ts';
import type { Signin } from './pipeline.ts';

/** Every event, with what it means (the docs list them). */
export const SIGNIN_EVENTS = {
  'sign_in.password': 'Signed in with email and password; failed: a wrong address or password',
  'sign_in.code': 'Signed in with a one-time code sent by email; failed: a wrong or expired code',
  'sign_in.email_link': 'Signed in by the link of a confirmation mail',
  'sign_in.passkey': 'Signed in with a passkey',
  'sign_in.upstream': 'Signed in through an upstream identity provider',
  'sign_in.second_factor': 'Passed the second factor, and so signed in',
  'sign_in.code_requested': 'Asked for a one-time code (mailed when the address has an account)',
  'account.sign_up': 'Signed up (a confirmation mail went out)',
  'account.reset_requested': 'Asked for a password reset link (mailed when the address has an account)',
  'account.password_reset': 'Chose a new password through a reset link (every session signed out)',
  'consent.grant': 'Allowed an application the scopes and claims it asked for',
} as const;

export type SigninEvent = keyof typeof SIGNIN_EVENTS;

/** The method a first factor's `amr` names. */
export const byAmr = { pwd: 'sign_in.password', otp: 'sign_in.code' } as const satisfies Record<string, SigninEvent>;

/** Records one event of this sign-in: by its account once known, else by the address it gave. */
export function recordSignin(s: Signin, action: SigninEvent, outcome: AuditOutcome = 'succeeded', reason?: string): void {
  const { user } = s;
  const clientId = s.flow?.params.client_id;
  const oauthClientId = typeof clientId === 'string' ? clientId : undefined;
  const actor = user
    ? { type: 'user' as const, id: user.id, name: user.email, credentialKind: 'session', oauthClientId }
    : { type: 'anonymous' as const, name: s.email, credentialKind: 'session', oauthClientId };
  const entry = { projectId: null, actor, action, target: { type: 'account', id: user?.id }, outcome, reason, origin: auditOrigin(s.request) };
  void s.kit.ctx.audit.later(entry).catch((error: unknown) => s.request.log.error({ err: error }, 'audit entry of a sign-in not written'));
}

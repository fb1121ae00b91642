// Steps the sign-in forms share: the form came from this browser (CSRF), the flow this browser is
// in and its prompt, the address typed, the attempt budget, the new password, signing in (or going
// on to the second factor), and a passkey's answer.
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { errors, type Interaction } from 'oidc-provider';
import { PASSWORD_MIN_LENGTH, findUserById } from '../../users/service.ts';
import { normaliseEmail } from '../accounts.ts';
import { asksForSecondFactor, loginResult, type Amr } from '../amr.ts';
import { clientBranding } from '../clients.ts';
import type { LimitVerdict } from '../limits.ts';
import type { FlowPage, Page } from '../pages.ts';
import { setPendingFactor } from '../store.ts';
import { expired, finish, redirect, refused, render, view, type Answered, type Signin, type Step } from './pipeline.ts';
import { byAmr, recordSignin } from './audit.ts';

/** How a form shows itself again, with an error. */
export type Again = (s: Signin, error: string, status: number) => Page;

/** A post must come from our own form in this browser (signed double submit, same origin). */
export function checkCsrf(s: Signin) {
  if (!s.kit.csrf.verify(s.request, s.fields._csrf)) return refused(s);
}

/** The interaction this browser is in, if it is the one the URL names. */
export async function loadFlow(s: Signin) {
  try {
    const flow = await s.kit.provider.interactionDetails(s.request.raw, s.reply.raw);
    if (flow.uid === s.uid) s.flow = flow;
  } catch (error) {
    if (!(error instanceof errors.SessionNotFound)) throw error;
  }
}

/** This browser is in the flow; its client's branding. */
export async function requireFlow(s: Signin) {
  if (!s.flow) return expired(s);
  s.branding = await clientBranding(s.kit.ctx.db, s.flow.params.client_id);
}

/** What every sign-in form needs: this browser still at the login prompt of the flow; its branding. */
export async function requireLogin(s: Signin) {
  if (s.flow?.prompt.name !== 'login') return expired(s);
  s.branding = await clientBranding(s.kit.ctx.db, s.flow.params.client_id);
}

export function requireConsent(s: Signin) {
  if (s.flow?.prompt.name !== 'consent') return expired(s);
}

/** The account signed in to the flow, which must still be allowed to authorize (address confirmed). */
export async function requireConfirmedAccount(s: Signin) {
  const accountId = s.flow?.session?.accountId;
  const user = accountId ? await findUserById(s.kit.ctx.db, accountId) : undefined;
  if (!user?.emailVerifiedAt) return expired(s);
  s.user = user;
}

/** Branding of the flow an emailed link names, also when this browser does not hold it (opened elsewhere). */
export async function brandLinkedFlow(s: Signin) {
  const known = s.flow ?? (await s.kit.provider.Interaction.find(s.uid));
  s.branding = await clientBranding(s.kit.ctx.db, known?.params.client_id);
}

/** A page of the flow that needs nothing but the flow: the form itself. */
export const showForm = (form: (p: FlowPage) => Page): Step => function showForm(s) {
  return render(s, form(view(s)));
};

/** A valid address from the form, or the form again. */
export const readEmail = (again: Again): Step => function readEmail(s) {
  s.email = normaliseEmail(s.fields.email);
  if (!s.email) return render(s, again(s, 'Enter a valid email address.', 400));
};

/** A chosen password as long as accounts require (the pages state the same minimum). */
export const checkNewPassword = (again: Again): Step => function checkNewPassword(s) {
  if ((s.fields.password ?? '').length < PASSWORD_MIN_LENGTH) return render(s, again(s, `Choose a password of at least ${PASSWORD_MIN_LENGTH} characters.`, 400));
};

/** Every request that sends mail spends one attempt of the address's and the IP's budgets. */
export const spendMailAttempt = (again: Again): Step => async function spendMailAttempt(s) {
  return overLimit(s, await s.kit.limiter.attempt(s.email!, s.request.ip), again);
};

/** Guesses (passwords, codes, reset links) only look at the budget; the step that judges one counts a failure. */
export const checkGuessBudget = (again: Again): Step => async function checkGuessBudget(s) {
  return overLimit(s, await s.kit.limiter.check(s.email!, s.request.ip), again);
};

function overLimit(s: Signin, verdict: LimitVerdict, again: Again) {
  if (verdict.allowed) return;
  s.reply.header('retry-after', String(verdict.retryAfter));
  return render(s, again(s, `Too many attempts. Try again in ${Math.max(1, Math.ceil(verdict.retryAfter / 60))} minute(s).`, 429));
}

/** Counts a wrong guess against the address and the IP. */
export async function countFailure(s: Signin): Promise<void> {
  await s.kit.limiter.fail(s.email!, s.request.ip);
}

const factorPath = (uid: string) => `/interaction/${encodeURIComponent(uid)}/factor`;

/**
 * After the first factor: when the account has a second factor, or the client asks for two, the
 * flow remembers who passed the first (server-side, until the flow expires) and sends the browser to
 * the factor page. Undefined when one factor is the whole sign-in.
 */
export async function secondFactorStep(s: Signin, flow: Interaction, amr: readonly Amr[]): Promise<Answered | undefined> {
  const user = s.user!;
  if (!asksForSecondFactor(flow.params) && !(await s.kit.factors.hasSecondFactor(user.id))) return undefined;
  await setPendingFactor(s.kit.ctx.db, { flow: flow.uid, userId: user.id, amr: [...amr], expiresAt: new Date(flow.exp * 1000) });
  return redirect(s, factorPath(flow.uid));
}

/** Signs the account the steps established in to the flow (`amr`: how it proved itself), or asks for its second factor. */
export const signIn = (amr: 'pwd' | 'otp'): Step => async function signIn(s) {
  const waiting = await secondFactorStep(s, s.flow!, [amr]);
  if (waiting) return waiting;
  recordSignin(s, byAmr[amr]);
  return finish(s, loginResult(s.user!.id, [amr]));
};

/** A passkey's answer from the form, when it has the shape of one. */
export const readPasskeyAnswer = (again: Again): Step => function readPasskeyAnswer(s) {
  let answer: unknown;
  try {
    answer = JSON.parse(s.fields.response ?? '');
  } catch {
    answer = undefined;
  }
  const shaped = answer as Partial<AuthenticationResponseJSON> | undefined;
  if (typeof shaped?.id !== 'string' || typeof shaped.response !== 'object' || shaped.response === null) {
    return render(s, again(s, 'The passkey\'s answer did not arrive. Try again.', 400));
  }
  s.passkeyAnswer = shaped as AuthenticationResponseJSON;
};

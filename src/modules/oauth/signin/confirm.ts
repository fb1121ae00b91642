// Confirming an address from the emailed link, and asking for the link again. The link may be
// opened in another browser than the one that signed up: it then confirms without signing in.
import type { Api } from '../../../module.ts';
import { loginResult } from '../amr.ts';
import { confirmPage, messagePage } from '../pages.ts';
import { PAGE_ROUTE } from '../respond.ts';
import { appName, finish, linkExpired, pipeline, render, signInPage, view, type Signin, type SigninKit } from './pipeline.ts';
import { EmailForm, FlowParams, PAGE, PAGE_ANSWERS, TokenForm, TokenQuery } from './schemas.ts';
import { brandLinkedFlow, checkCsrf, loadFlow, readEmail, requireLogin, secondFactorStep, spendMailAttempt, type Again } from './steps.ts';
import { recordSignin } from './audit.ts';

// The address is a hidden field of the unconfirmed page, which cannot be shown again without the
// account: a bad address goes back to the sign-in form.
const restart: Again = (s, error, status) => signInPage(s, { error, status });
const again: Again = (s, error, status) => signInPage(s, { email: s.email, error, status });

async function showConfirmation(s: Signin) {
  const token = s.fields.token!;
  const user = await s.kit.signin.peekConfirmation(s.uid, token);
  if (!user) return linkExpired(s, 'This confirmation link is invalid, was already used, or has expired. Sign up or sign in again to get a new one.');
  return render(s, confirmPage({ ...view(s), token, email: user.email }));
}

async function confirmAddress(s: Signin) {
  s.user = await s.kit.signin.confirm(s.uid, s.fields.token ?? '');
  if (!s.user) return linkExpired(s, 'This confirmation link is invalid, was already used, or has expired.');
}

/**
 * Confirmed in the browser that signed up: carry on with the sign-in it started (through the second
 * factor, as every sign-in, when the client asks for two).
 */
async function continueSignin(s: Signin) {
  if (s.flow?.prompt.name === 'login') {
    const waiting = await secondFactorStep(s, s.flow, ['otp']);
    if (waiting) return waiting;
    recordSignin(s, 'sign_in.email_link');
    return finish(s, loginResult(s.user!.id, ['otp']));
  }
  return render(s, messagePage({ title: 'Email confirmed', branding: s.branding, message: 'Your email address is confirmed. Return to the application to sign in.', role: 'status' }));
}

function resendConfirmation(s: Signin) {
  s.kit.signin.resendConfirmation(s.uid, appName(s), s.email!);
  return render(s, messagePage({
    title: 'Check your email',
    branding: s.branding,
    message: `If ${s.email} has an account waiting for confirmation, we sent it a new confirmation link.`,
    role: 'status',
    link: { href: `/interaction/${s.uid}`, text: 'Back to sign in' },
  }));
}

export function confirmRoutes(route: Api, kit: SigninKit): void {
  route.get('/interaction/:uid/confirm', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Email confirmation link', params: FlowParams, querystring: TokenQuery, response: PAGE_ANSWERS },
  }, pipeline(kit, [brandLinkedFlow, showConfirmation]));

  route.post('/interaction/:uid/confirm', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Confirm an email address', params: FlowParams, body: TokenForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, brandLinkedFlow, confirmAddress, continueSignin]));

  route.post('/interaction/:uid/confirm/resend', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Send the confirmation email again', params: FlowParams, body: EmailForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, readEmail(restart), spendMailAttempt(again), resendConfirmation]));
}

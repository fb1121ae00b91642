// Choosing a new password from the emailed link. A new password signs the account out everywhere;
// in the browser that asked for the link, the sign-in carries on.
import type { Api } from '../../../module.ts';
import { messagePage, resetPage } from '../pages.ts';
import { PAGE_ROUTE } from '../respond.ts';
import { linkExpired, pipeline, redirect, render, view, type Signin, type SigninKit } from './pipeline.ts';
import { FlowParams, PAGE, PAGE_ANSWERS, ResetForm, TokenQuery } from './schemas.ts';
import { brandLinkedFlow, checkCsrf, checkGuessBudget, checkNewPassword, loadFlow, type Again } from './steps.ts';
import { recordSignin } from './audit.ts';

const again: Again = (s, error, status) => resetPage({ ...view(s), token: s.fields.token ?? '', email: s.user!.email, error, status });

async function showReset(s: Signin) {
  const token = s.fields.token!;
  const user = await s.kit.signin.peekReset(s.uid, token);
  if (!user) return linkExpired(s, 'This reset link is invalid, was already used, or has expired. Ask for a new one from the sign-in page.');
  return render(s, resetPage({ ...view(s), token, email: user.email }));
}

/** The account the link is for; its address is the budget a guess draws on. */
async function readResetLink(s: Signin) {
  s.user = await s.kit.signin.peekReset(s.uid, s.fields.token ?? '');
  if (!s.user) return linkExpired(s, 'This reset link is invalid, was already used, or has expired.');
  s.email = s.user.email;
}

async function changePassword(s: Signin) {
  if (!(await s.kit.signin.resetPassword(s.uid, s.fields.token ?? '', s.fields.password ?? ''))) return linkExpired(s, 'This reset link was already used.');
  recordSignin(s, 'account.password_reset');
  if (s.flow?.prompt.name === 'login') return redirect(s, `/interaction/${encodeURIComponent(s.uid)}?notice=password-changed`);
  return render(s, messagePage({ title: 'Password changed', branding: s.branding, message: 'Your password was changed and you were signed out everywhere. Return to the application and sign in with your new password.', role: 'status' }));
}

export function resetRoutes(route: Api, kit: SigninKit): void {
  route.get('/interaction/:uid/reset', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Password reset link', params: FlowParams, querystring: TokenQuery, response: PAGE_ANSWERS },
  }, pipeline(kit, [brandLinkedFlow, showReset]));

  route.post('/interaction/:uid/reset', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Choose a new password', params: FlowParams, body: ResetForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, brandLinkedFlow, readResetLink, checkNewPassword(again), checkGuessBudget(again), changePassword]));
}

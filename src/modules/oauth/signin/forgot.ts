// Asking for a password reset link. The answer is the same whether or not the address has an
// account, and the request spends an attempt (it may send mail).
import type { Api } from '../../../module.ts';
import { forgotPage, messagePage } from '../pages.ts';
import { PAGE_ROUTE } from '../respond.ts';
import { appName, pipeline, render, view, type Signin, type SigninKit } from './pipeline.ts';
import { EmailForm, FlowParams, PAGE, PAGE_ANSWERS } from './schemas.ts';
import { checkCsrf, loadFlow, readEmail, requireLogin, showForm, spendMailAttempt, type Again } from './steps.ts';
import { recordSignin } from './audit.ts';

const again: Again = (s, error, status) => forgotPage({ ...view(s), email: s.email ?? s.fields.email, error, status });

function sendResetLink(s: Signin) {
  s.kit.signin.requestReset(s.uid, appName(s), s.email!);
  recordSignin(s, 'account.reset_requested');
  return render(s, messagePage({
    title: 'Check your email',
    branding: s.branding,
    message: `If an account exists for ${s.email}, we sent it a link to choose a new password. The link is valid for one hour.`,
    role: 'status',
    link: { href: `/interaction/${s.uid}`, text: 'Back to sign in' },
  }));
}

export function forgotRoutes(route: Api, kit: SigninKit): void {
  route.get('/interaction/:uid/forgot', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Forgot-password form', params: FlowParams, response: PAGE_ANSWERS },
  }, pipeline(kit, [loadFlow, requireLogin, showForm(forgotPage)]));

  route.post('/interaction/:uid/forgot', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Email a password reset link', params: FlowParams, body: EmailForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, readEmail(again), spendMailAttempt(again), sendResetLink]));
}

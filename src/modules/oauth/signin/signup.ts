// Creating an account: the address must be confirmed by email before it can sign in. The answer is
// the same whether or not the address has an account, and the request spends an attempt (it sends
// mail either way).
import type { Api } from '../../../module.ts';
import { messagePage, signupPage } from '../pages.ts';
import { PAGE_ROUTE } from '../respond.ts';
import { appName, pipeline, render, view, type Signin, type SigninKit } from './pipeline.ts';
import { FlowParams, PAGE, PAGE_ANSWERS, SignupForm } from './schemas.ts';
import { checkCsrf, checkNewPassword, loadFlow, readEmail, requireLogin, showForm, spendMailAttempt, type Again } from './steps.ts';
import { recordSignin } from './audit.ts';

const again: Again = (s, error, status) => signupPage({ ...view(s), email: s.fields.email, firstName: s.fields.first_name, lastName: s.fields.last_name, error, status });

async function signUp(s: Signin) {
  const { first_name: firstName = '', last_name: lastName = '', password = '' } = s.fields;
  await s.kit.signin.signUp(s.uid, appName(s), { email: s.email!, password, firstName: firstName.trim(), lastName: lastName.trim() });
  recordSignin(s, 'account.sign_up');
  return render(s, messagePage({
    title: 'Check your email',
    branding: s.branding,
    message: `We sent a message to ${s.email}. Open the link in it to confirm your address and finish signing in. If you already have an account, the message tells you how to sign in.`,
    role: 'status',
  }));
}

export function signupRoutes(route: Api, kit: SigninKit): void {
  route.get('/interaction/:uid/signup', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Sign-up form', params: FlowParams, response: PAGE_ANSWERS },
  }, pipeline(kit, [loadFlow, requireLogin, showForm(signupPage)]));

  route.post('/interaction/:uid/signup', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Create an account (confirmed by email)', params: FlowParams, body: SignupForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, readEmail(again), checkNewPassword(again), spendMailAttempt(again), signUp]));
}

// Signing in with a one-time code sent by email: asking for one spends an attempt (it sends mail);
// a wrong code counts as a failed guess.
import type { Api } from '../../../module.ts';
import { codeEntryPage, codeRequestPage } from '../pages.ts';
import { PAGE_ROUTE } from '../respond.ts';
import { appName, pipeline, render, view, type Signin, type SigninKit } from './pipeline.ts';
import { CodeForm, EmailForm, FlowParams, PAGE, PAGE_ANSWERS } from './schemas.ts';
import { checkCsrf, checkGuessBudget, countFailure, loadFlow, readEmail, requireLogin, showForm, signIn, spendMailAttempt, type Again } from './steps.ts';
import { recordSignin } from './audit.ts';

const requestAgain: Again = (s, error, status) => codeRequestPage({ ...view(s), email: s.email ?? s.fields.email, error, status });
// The address is a hidden field of the entry form: a bad one means a stale or edited form, so the
// code is asked for afresh, without echoing the address.
const restart: Again = (s, error, status) => codeRequestPage({ ...view(s), error, status });
const entryAgain: Again = (s, error, status) => codeEntryPage({ ...view(s), email: s.email!, error, status });

function sendCode(s: Signin) {
  s.kit.signin.requestCode(s.uid, appName(s), s.email!);
  recordSignin(s, 'sign_in.code_requested');
  return render(s, codeEntryPage({ ...view(s), email: s.email! }));
}

async function verifyCode(s: Signin) {
  const code = (s.fields.code ?? '').replace(/\s+/g, '');
  const user = /^[0-9]{6}$/.test(code) ? await s.kit.signin.verifyCode(s.uid, s.email!, code) : undefined;
  if (!user) {
    await countFailure(s);
    recordSignin(s, 'sign_in.code', 'failed', 'a wrong or expired code');
    return render(s, entryAgain(s, 'That code is not valid or has expired.', 401));
  }
  s.user = user;
}

export function codeRoutes(route: Api, kit: SigninKit): void {
  route.get('/interaction/:uid/code', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Ask for a one-time sign-in code', params: FlowParams, response: PAGE_ANSWERS },
  }, pipeline(kit, [loadFlow, requireLogin, showForm(codeRequestPage)]));

  route.post('/interaction/:uid/code', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Email a one-time sign-in code', params: FlowParams, body: EmailForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, readEmail(requestAgain), spendMailAttempt(requestAgain), sendCode]));

  route.post('/interaction/:uid/code/verify', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Sign in with a one-time code', params: FlowParams, body: CodeForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, readEmail(restart), checkGuessBudget(entryAgain), verifyCode, signIn('otp')]));
}

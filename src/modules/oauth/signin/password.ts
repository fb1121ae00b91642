// Signing in with email and password. A wrong password counts against the address's and the IP's
// budgets; an unconfirmed account is told to confirm (only once the password was right).
import type { Api } from '../../../module.ts';
import { normaliseEmail } from '../accounts.ts';
import { unconfirmedPage } from '../pages.ts';
import { PAGE_ROUTE } from '../respond.ts';
import { pipeline, render, signInPage, view, type Signin, type SigninKit } from './pipeline.ts';
import { FlowParams, PAGE, PAGE_ANSWERS, PasswordForm } from './schemas.ts';
import { checkCsrf, checkGuessBudget, countFailure, loadFlow, requireLogin, signIn, type Again } from './steps.ts';
import { recordSignin } from './audit.ts';

const again: Again = (s, error, status) => signInPage(s, { email: s.email ?? s.fields.email, error, status });

function readCredentials(s: Signin) {
  const email = normaliseEmail(s.fields.email);
  if (!email || !s.fields.password) return render(s, again(s, 'Enter your email address and your password.', 400));
  s.email = email;
}

async function verifyPassword(s: Signin) {
  const checked = await s.kit.signin.checkPassword(s.email!, s.fields.password!);
  if (checked.result === 'invalid') {
    await countFailure(s);
    recordSignin(s, 'sign_in.password', 'failed', 'a wrong address or password');
    return render(s, again(s, 'The email address or password is incorrect.', 401));
  }
  if (checked.result === 'unconfirmed') return render(s, unconfirmedPage({ ...view(s), email: checked.user.email, canResend: s.kit.ctx.config.signin.emailLogin }));
  s.user = checked.user;
}

export function passwordRoutes(route: Api, kit: SigninKit): void {
  route.post('/interaction/:uid/password', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Sign in with email and password', params: FlowParams, body: PasswordForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, readCredentials, checkGuessBudget(again), verifyPassword, signIn('pwd')]));
}

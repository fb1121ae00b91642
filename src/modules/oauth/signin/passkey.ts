// Signing in with a passkey alone (passwordless): a discoverable credential names its account, and
// user verification on the authenticator (PIN, biometrics) makes it two factors. Nothing is typed,
// so the page tells nobody which addresses have accounts. Each challenge costs an attempt of the
// client IP's budget (it writes a row).
import type { Api } from '../../../module.ts';
import { findUserById } from '../../users/service.ts';
import { loginResult } from '../amr.ts';
import { Html, PAGE_ROUTE } from '../respond.ts';
import { finish, json, pipeline, render, signInPage, type Signin, type SigninKit } from './pipeline.ts';
import { CsrfOnly, FlowParams, PAGE, PAGE_ANSWERS, PasskeyForm, PasskeyOptions } from './schemas.ts';
import { checkCsrf, loadFlow, readPasskeyAnswer, requireLogin, type Again } from './steps.ts';
import { recordSignin } from './audit.ts';

const again: Again = (s, error, status) => signInPage(s, { error, status });

async function spendIpAttempt(s: Signin) {
  const verdict = await s.kit.limiter.attemptFromIp(s.request.ip);
  if (verdict.allowed) return;
  s.reply.header('retry-after', String(verdict.retryAfter));
  return render(s, again(s, `Too many attempts. Try again in ${Math.max(1, Math.ceil(verdict.retryAfter / 60))} minute(s).`, 429));
}

async function sendOptions(s: Signin) {
  return json(s, await s.kit.factors.authenticationOptions(s.uid));
}

async function verifyPasskey(s: Signin) {
  const verified = await s.kit.factors.verifyPasskey(s.uid, s.passkeyAnswer!);
  const user = verified ? await findUserById(s.kit.ctx.db, verified.userId) : undefined;
  if (!verified || !user?.emailVerifiedAt) return render(s, again(s, 'That passkey could not sign you in. Try again, or sign in another way.', 401));
  s.user = user;
  s.proof = verified.amr;
}

function signInWithPasskey(s: Signin) {
  recordSignin(s, 'sign_in.passkey');
  return finish(s, loginResult(s.user!.id, [s.proof!, 'mfa']));
}

export function passkeyRoutes(route: Api, kit: SigninKit): void {
  route.post('/interaction/:uid/passkey/options', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Options for signing in with a passkey', params: FlowParams, body: CsrfOnly, response: { 200: PasskeyOptions, '4xx': Html } },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, spendIpAttempt, sendOptions]));

  route.post('/interaction/:uid/passkey', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Sign in with a passkey', params: FlowParams, body: PasskeyForm, response: PAGE_ANSWERS },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, readPasskeyAnswer(again), verifyPasskey, signInWithPasskey]));
}

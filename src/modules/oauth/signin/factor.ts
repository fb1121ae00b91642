// The second step of a sign-in, for accounts with a second factor (and for any account when the
// client asks for two factors): a code of the authenticator app, a passkey, or a recovery code. The
// flow's first factor is kept server-side (signin_pending_factors), tied to this browser by the
// flow's own cookie; wrong codes count against the account in the database.
import type { Api } from '../../../module.ts';
import { findUserById } from '../../users/service.ts';
import { loginResult } from '../amr.ts';
import { recoveryCodePage, secondFactorMissingPage, secondFactorPage } from '../pages.ts';
import { Html, PAGE_ROUTE } from '../respond.ts';
import { findPendingFactor, takePendingFactor } from '../store.ts';
import { expired, finish, json, pipeline, render, view, type Signin, type SigninKit } from './pipeline.ts';
import { CsrfOnly, FactorCodeForm, FlowParams, PAGE, PAGE_ANSWERS, PasskeyForm, PasskeyOptions } from './schemas.ts';
import { checkCsrf, loadFlow, readPasskeyAnswer, requireLogin, type Again } from './steps.ts';
import { recordSignin } from './audit.ts';

/** The flow passed its first factor: for which account, and how. */
async function loadPending(s: Signin) {
  const pending = await findPendingFactor(s.kit.ctx.db, s.uid);
  const user = pending ? await findUserById(s.kit.ctx.db, pending.userId) : undefined;
  if (!pending || !user) return expired(s);
  s.pending = pending;
  s.user = user;
}

/** Which factors the page offers (looked up before any step that may show it again). */
async function offer(s: Signin) {
  s.choices = await s.kit.factors.methods(s.user!.id);
}

const factorAgain: Again = (s, error, status) => secondFactorPage({ ...view(s), ...s.choices!, email: s.user!.email, error, status });
const recoveryAgain: Again = (s, error, status) => recoveryCodePage({ ...view(s), error, status });

function showFactorPage(s: Signin) {
  const methods = s.choices!;
  if (!methods.totp && !methods.passkeys) {
    return render(s, secondFactorMissingPage({ ...view(s), accountUrl: `${s.kit.ctx.config.publicUrl}/console/profile` }));
  }
  return render(s, secondFactorPage({ ...view(s), ...methods, email: s.user!.email }));
}

/** Too many wrong codes lock the account's second factor for the rest of the window. */
const checkLock = (again: Again) => async function checkLock(s: Signin) {
  const state = await s.kit.factors.lockState(s.user!.id);
  if (state.allowed) return;
  s.reply.header('retry-after', String(state.retryAfter));
  return render(s, again(s, `Too many wrong codes. Try again in ${Math.max(1, Math.ceil(state.retryAfter / 60))} minute(s).`, 429));
};

async function verifyTotp(s: Signin) {
  if (!(await s.kit.factors.verifyTotp(s.user!.id, s.fields.code ?? ''))) {
    return render(s, factorAgain(s, 'That code is not valid. Enter the code your authenticator app shows now.', 401));
  }
  s.proof = 'otp';
}

async function useRecoveryCode(s: Signin) {
  if (!(await s.kit.factors.useRecoveryCode(s.user!.id, s.fields.code ?? ''))) {
    return render(s, recoveryAgain(s, 'That recovery code is not valid or was used already.', 401));
  }
  s.proof = 'otp';
}

async function sendPasskeyOptions(s: Signin) {
  return json(s, await s.kit.factors.authenticationOptions(s.uid, s.user!.id));
}

async function verifyPasskey(s: Signin) {
  const verified = await s.kit.factors.verifyPasskey(s.uid, s.passkeyAnswer!, s.user!.id);
  if (!verified) return render(s, factorAgain(s, 'That passkey could not be verified. Try again, or use another factor.', 401));
  s.proof = verified.amr;
}

/** Signs in with both factors: the wait ends once, whichever request gets there first. */
async function completeSignIn(s: Signin) {
  if (!(await takePendingFactor(s.kit.ctx.db, s.uid, s.user!.id))) return expired(s);
  recordSignin(s, 'sign_in.second_factor');
  return finish(s, loginResult(s.user!.id, [...s.pending!.amr, s.proof!, 'mfa']));
}

/** The account has no second factor the client asked for: back to the client, which decides. */
async function returnUnmet(s: Signin) {
  await takePendingFactor(s.kit.ctx.db, s.uid, s.user!.id);
  return finish(s, { error: 'unmet_authentication_requirements', error_description: 'The account has no second factor' }, false);
}

const page = (summary: string) => ({ ...PAGE, summary, params: FlowParams });

export function factorRoutes(route: Api, kit: SigninKit): void {
  route.get('/interaction/:uid/factor', { config: PAGE_ROUTE, schema: { ...page('The second factor of a sign-in'), response: PAGE_ANSWERS } },
    pipeline(kit, [loadFlow, requireLogin, loadPending, offer, showFactorPage]));

  route.post('/interaction/:uid/factor/totp', { config: PAGE_ROUTE, schema: { ...page('Second factor: a code of the authenticator app'), body: FactorCodeForm, response: PAGE_ANSWERS } },
    pipeline(kit, [checkCsrf, loadFlow, requireLogin, loadPending, offer, checkLock(factorAgain), verifyTotp, completeSignIn]));

  route.get('/interaction/:uid/factor/recovery', { config: PAGE_ROUTE, schema: { ...page('Second factor: the recovery code form'), response: PAGE_ANSWERS } },
    pipeline(kit, [loadFlow, requireLogin, loadPending, (s) => render(s, recoveryCodePage(view(s)))]));

  route.post('/interaction/:uid/factor/recovery', { config: PAGE_ROUTE, schema: { ...page('Second factor: a recovery code'), body: FactorCodeForm, response: PAGE_ANSWERS } },
    pipeline(kit, [checkCsrf, loadFlow, requireLogin, loadPending, checkLock(recoveryAgain), useRecoveryCode, completeSignIn]));

  route.post('/interaction/:uid/factor/passkey/options', {
    config: PAGE_ROUTE,
    schema: { ...page('Second factor: options for the account\'s passkeys'), body: CsrfOnly, response: { 200: PasskeyOptions, '4xx': Html } },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, loadPending, sendPasskeyOptions]));

  route.post('/interaction/:uid/factor/passkey', { config: PAGE_ROUTE, schema: { ...page('Second factor: a passkey\'s answer'), body: PasskeyForm, response: PAGE_ANSWERS } },
    pipeline(kit, [checkCsrf, loadFlow, requireLogin, loadPending, offer, readPasskeyAnswer(factorAgain), verifyPasskey, completeSignIn]));

  route.post('/interaction/:uid/factor/abort', { config: PAGE_ROUTE, schema: { ...page('Return to the client without the second factor it asked for'), body: CsrfOnly, response: { '4xx': Html } } },
    pipeline(kit, [checkCsrf, loadFlow, requireLogin, loadPending, returnUnmet]));
}

// The page of a sign-in flow (/interaction/<uid>, where oidc-provider sends the browser): the
// sign-in form at the login prompt, the consent page at the consent prompt.
import type { Api } from '../../../module.ts';
import { normaliseEmail } from '../accounts.ts';
import { consentPage } from '../pages.ts';
import { PAGE_ROUTE } from '../respond.ts';
import { describeScopes } from '../scopes.ts';
import { pipeline, render, signInPage, view, type Signin, type SigninKit } from './pipeline.ts';
import { FlowParams, NoticeQuery, PAGE, PAGE_ANSWERS } from './schemas.ts';
import { loadFlow, requireConfirmedAccount, requireConsent, requireFlow } from './steps.ts';

/** Notices other steps link back to this page with; looked up, never echoed. */
const NOTICES: Record<string, string> = {
  'password-changed': 'Your password was changed. Sign in with your new password.',
  'upstream-failed': 'Signing in with that provider did not complete. Try again, or use another way to sign in.',
};

function showLoginPrompt(s: Signin) {
  const flow = s.flow!;
  if (flow.prompt.name !== 'login') return;
  const notice = s.fields.notice ? NOTICES[s.fields.notice] : undefined;
  return render(s, signInPage(s, { notice, email: normaliseEmail(flow.params.login_hint) }));
}

function showConsent(s: Signin) {
  const scopes = describeScopes((s.flow!.params.scope ?? '').split(' '));
  return render(s, consentPage({ ...view(s), userEmail: s.user!.email, scopes }));
}

export function promptRoutes(route: Api, kit: SigninKit): void {
  route.get('/interaction/:uid', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Sign-in or consent page of an authorization request', params: FlowParams, querystring: NoticeQuery, response: PAGE_ANSWERS },
  }, pipeline(kit, [loadFlow, requireFlow, showLoginPrompt, requireConsent, requireConfirmedAccount, showConsent]));
}

// The page of a sign-in flow (/interaction/<uid>, where oidc-provider sends the browser): the
// sign-in form at the login prompt, the consent page at the consent prompt.
import type { Api } from '../../../module.ts';
import { FIRST_RUN_COOKIE, FIRST_RUN_COOKIE_PATH, firstRunUser } from '../../setup/service.ts';
import { findUserById } from '../../users/service.ts';
import { normaliseEmail } from '../accounts.ts';
import { ATRIUM_CONSOLE_CLIENT_ID } from '../first-party.ts';
import { consentPage } from '../pages.ts';
import { PAGE_ROUTE } from '../respond.ts';
import { describeScopes } from '../scopes.ts';
import { pipeline, render, signInPage, view, type Signin, type SigninKit } from './pipeline.ts';
import { FlowParams, NoticeQuery, PAGE, PAGE_ANSWERS } from './schemas.ts';
import { loadFlow, requireConfirmedAccount, requireConsent, requireFlow, signIn } from './steps.ts';

/** Notices other steps link back to this page with; looked up, never echoed. */
const NOTICES: Record<string, string> = {
  'password-changed': 'Your password was changed. Sign in with your new password.',
  'upstream-failed': 'Signing in with that provider did not complete. Try again, or use another way to sign in.',
};

/** The console's sign-in right after the setup form: the admin it created, whose password was just typed there. */
async function firstRunAdmin(s: Signin) {
  if (s.flow!.prompt.name !== 'login' || s.flow!.params.client_id !== ATRIUM_CONSOLE_CLIENT_ID) return;
  const userId = firstRunUser(s.kit.ctx, s.request.cookies[FIRST_RUN_COOKIE]);
  if (!userId) return;
  s.reply.clearCookie(FIRST_RUN_COOKIE, { path: FIRST_RUN_COOKIE_PATH });
  const user = await findUserById(s.kit.ctx.db, userId);
  if (!user?.emailVerifiedAt) return;
  s.user = user;
  return signIn('pwd')(s);
}

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
  }, pipeline(kit, [loadFlow, requireFlow, firstRunAdmin, showLoginPrompt, requireConsent, requireConfirmedAccount, showConsent]));
}

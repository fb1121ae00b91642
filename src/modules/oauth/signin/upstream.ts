// Signing in through an upstream OpenID Connect provider (upstream.ts holds the relying party):
// leaving for the provider with state kept in an encrypted cookie, and its callback, which signs
// the linked local account in to the flow.
import { Type } from 'typebox';
import type { Api } from '../../../module.ts';
import { UPSTREAM_COOKIE_PATH } from '../upstream.ts';
import { loginResult } from '../amr.ts';
import { errorPage } from '../pages.ts';
import { Html, PAGE_ROUTE } from '../respond.ts';
import { expired, pipeline, redirect, render, signInPage, type Signin, type SigninKit } from './pipeline.ts';
import { CsrfOnly, PAGE, ProviderId, Uid, UpstreamCallbackQuery } from './schemas.ts';
import { checkCsrf, loadFlow, requireLogin, secondFactorStep } from './steps.ts';
import { recordSignin } from './audit.ts';

const providerId = (s: Signin) => (s.request.params as { provider: string }).provider;
const stateCookie = (id: string) => `atrium_upstream_${id.replaceAll('-', '_')}`;
const stateCookiePath = (id: string) => `${UPSTREAM_COOKIE_PATH}/${encodeURIComponent(id)}`;

// The provider's id names a cookie, so one that is not configured is refused before any cookie
// is read or cleared.
function knownProvider(s: Signin) {
  if (!s.kit.upstream.has(providerId(s))) return render(s, errorPage({ message: 'This sign-in method is not available.', status: 404, branding: s.branding }));
}

async function leaveForProvider(s: Signin) {
  const id = providerId(s);
  let started;
  try {
    started = await s.kit.upstream.start(id, s.uid);
  } catch (error) {
    s.request.log.warn({ err: error, provider: id }, 'upstream identity provider unavailable');
    return render(s, signInPage(s, { error: 'That sign-in provider cannot be reached right now. Try again later or use another way to sign in.', status: 502 }));
  }
  s.reply.setCookie(stateCookie(id), s.kit.upstream.sealState(started.state), { path: stateCookiePath(id), httpOnly: true, sameSite: 'lax', secure: s.kit.issuer.startsWith('https:'), maxAge: 600 });
  return redirect(s, started.url.href);
}

/** The state this browser sealed on leaving: it proves this browser started the round trip. */
function openState(s: Signin) {
  const id = providerId(s);
  if (!s.kit.upstream.has(id)) return expired(s);
  s.upstream = s.kit.upstream.openState(s.request.cookies[stateCookie(id)], id);
  s.reply.clearCookie(stateCookie(id), { path: stateCookiePath(id) });
  if (!s.upstream) return expired(s);
  s.uid = s.upstream.flow;
}

const backWithNotice = (s: Signin) => redirect(s, `/interaction/${encodeURIComponent(s.uid)}?notice=upstream-failed`);

function stopOnProviderError(s: Signin) {
  if (s.fields.error) return backWithNotice(s);
}

async function redeemCallback(s: Signin) {
  try {
    s.user = await s.kit.upstream.finish(s.upstream!, new URL(s.request.url, s.kit.issuer));
  } catch (error) {
    s.request.log.warn({ err: error, provider: providerId(s) }, 'upstream sign-in failed');
    return backWithNotice(s);
  }
}

/**
 * The interaction cookie is path-scoped to /interaction and not sent to this callback, so the
 * result is stored on the interaction directly, as interactionResult does. An account with a second
 * factor goes on to the factor page, under /interaction, where the browser's cookie binds it again.
 */
async function signInToFlow(s: Signin) {
  const interaction = await s.kit.provider.Interaction.find(s.uid);
  if (!interaction || interaction.prompt.name !== 'login') return expired(s);
  const waiting = await secondFactorStep(s, interaction, []);
  if (waiting) return waiting;
  interaction.result = loginResult(s.user!.id, []);
  recordSignin(s, 'sign_in.upstream');
  await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
  return redirect(s, interaction.returnTo);
}

export function upstreamRoutes(route: Api, kit: SigninKit): void {
  route.post('/interaction/:uid/upstream/:provider', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Sign in with an upstream identity provider', params: Type.Object({ uid: Uid, provider: ProviderId }), body: CsrfOnly, response: { '4xx': Html } },
  }, pipeline(kit, [checkCsrf, loadFlow, requireLogin, knownProvider, leaveForProvider]));

  route.get('/signin/upstream/:provider/callback', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Redirect URI to register at upstream identity providers', params: Type.Object({ provider: ProviderId }), querystring: UpstreamCallbackQuery, response: { '4xx': Html } },
  }, pipeline(kit, [openState, stopOnProviderError, redeemCallback, signInToFlow]));
}

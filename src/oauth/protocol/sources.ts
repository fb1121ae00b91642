// Pages oidc-provider renders itself, through Atrium's templates (pages.ts): the device flow's code
// entry, confirmation and success pages, sign-out, and the error page of a request that cannot go
// back to its client. The library calls these "sources"; provider.ts plugs them in.
import type { Client, KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../platform/db/engine.ts';
import { clientBranding } from '../clients.ts';
import { deviceConfirmPage, deviceInputPage, deviceSuccessPage, errorPage, logoutPage, messagePage, type Page } from '../pages.ts';

function render(kctx: KoaContextWithOIDC, page: Page): void {
  kctx.type = 'html';
  kctx.status = page.status;
  (kctx.set as (name: string, value: string) => void)('content-security-policy', page.csp);
  kctx.body = page.html;
}

/** How the library stores the browser session and sets its cookie (provider.ts passes its own settings). */
export interface SessionSettings {
  ttl: number;
  cookie: Readonly<Record<string, unknown>>;
}

/**
 * Stores a browser session that was never stored, with its cookie, as the library's session step
 * does. The code entry form keeps its XSRF secret in the session. Shown again after an error, the
 * form is rendered once that step is over, so a session first created by this request is left
 * unstored — and the library then fails to "persist" it, answering 500 to anyone who posts to
 * /oauth/device without a session. Stored here, the form works on its next submission. (Without
 * an error, the form is rendered inside the session step, which stores the session itself.)
 */
async function keepNewSession(kctx: KoaContextWithOIDC, settings: SessionSettings): Promise<void> {
  const { session } = kctx.oidc;
  if (!session || typeof session.exp === 'number') return;
  await session.save(settings.ttl);
  kctx.oidc.cookies.set(kctx.oidc.provider.cookieName('session'), session.id, { ...settings.cookie, expires: new Date(session.exp! * 1000) });
}

export function deviceFlowSources(db: Db, session: SessionSettings) {
  return {
    userCodeInputSource: async (kctx: KoaContextWithOIDC, form: string, out: { user_code?: string } | undefined, err: Error & { userCode?: string } | undefined) => {
      if (err) await keepNewSession(kctx, session);
      let message: string | undefined;
      if (err && (err.userCode || err.name === 'NoCodeError')) message = 'That code is not valid or has expired. Check it and try again.';
      else if (err && err.name === 'AbortedError') message = 'The sign-in request was cancelled.';
      else if (err) message = 'Something went wrong. Start again on your device.';
      render(kctx, deviceInputPage(form, message, out?.user_code));
    },
    userCodeConfirmSource: async (kctx: KoaContextWithOIDC, form: string, client: Client, _deviceInfo: unknown, userCode: string) =>
      render(kctx, deviceConfirmPage(form, await clientBranding(db, client.clientId), userCode)),
    successSource: async (kctx: KoaContextWithOIDC) =>
      render(kctx, deviceSuccessPage(await clientBranding(db, kctx.oidc.client?.clientId))),
  };
}

export const logoutSources = {
  logoutSource: async (kctx: KoaContextWithOIDC, form: string) => render(kctx, logoutPage(form)),
  postLogoutSuccessSource: async (kctx: KoaContextWithOIDC) => render(kctx, messagePage({ title: 'Signed out', message: 'You are signed out of Atrium on this browser.', role: 'status' })),
};

/**
 * The library's default page echoes request details; ours names the problem and stops. It is what
 * an unknown client or an unregistered redirect_uri gets: a page, never a redirect.
 */
export async function renderError(kctx: KoaContextWithOIDC, out: { error: string; error_description?: string }): Promise<void> {
  render(kctx, errorPage({
    title: 'This sign-in request cannot continue',
    message: out.error === 'invalid_client' || out.error === 'invalid_redirect_uri'
      ? 'The application that sent you here is not set up correctly for Atrium sign-in. Nothing was shared with it.'
      : 'The request that brought you here is invalid or has expired. Return to the application and try again.',
    detail: `${out.error}${out.error_description ? `: ${out.error_description}` : ''}`,
    status: kctx.status >= 400 ? kctx.status : 400,
  }));
}

// Pages oidc-provider renders itself, through Atrium's templates (pages.ts): the device flow's code
// entry, confirmation and success pages, sign-out, and the error page of a request that cannot go
// back to its client. The library calls these "sources"; provider.ts plugs them in.
import type { IncomingMessage } from 'node:http';
import type { Client, KoaContextWithOIDC } from 'oidc-provider';
import { denormalize, normalize } from 'oidc-provider/lib/helpers/user_codes.js';
import type { Db } from '../../../platform/db/engine.ts';
import { clientBranding } from '../clients.ts';
import { deviceConfirmPage, deviceInputPage, deviceSuccessPage, errorPage, logoutPage, messagePage, type Page } from '../pages.ts';

function render(kctx: KoaContextWithOIDC, page: Page): void {
  kctx.type = 'html';
  kctx.status = page.status;
  (kctx.set as (name: string, value: string) => void)('content-security-policy', page.csp);
  kctx.body = page.html;
}

/**
 * The code entry form keeps its XSRF secret in the browser session. Shown again after an error to
 * a browser whose session was never stored (it sent no session cookie), the form could not be
 * submitted, and the library would then fail to "persist" the session it has
 * just touched ("persist can only be called on previously persisted Sessions": a 500 to anyone
 * posting to /oauth/device without a session). Such a browser is sent to start again instead,
 * and nothing is stored for the refused request. (Without an error the form is rendered inside the
 * library's session step, which stores the session and sets its cookie.)
 */
function dropUnstoredSession(kctx: KoaContextWithOIDC): boolean {
  const { session } = kctx.oidc;
  if (!session || typeof session.exp === 'number') return false;
  session.touched = false;
  return true;
}

/** How device codes look: eight letters of the library's base-20 alphabet (no vowels), `BCDF-GHJK`. */
export const USER_CODE = { charset: 'base-20', mask: '****-****' } as const;

/** Codes that came in a device link, taken off the request before the library's turn (deviceLinks). */
const linkedCodes = new WeakMap<IncomingMessage, string>();

/**
 * A device link — `/oauth/device?user_code=…`, the verification_uri_complete the CLI prints — is
 * answered by oidc-provider with its own unstyled page that submits the code by script
 * ("Submitting Callback"), and no setting reaches that page. This middleware, in front of the
 * library, takes the code off the query, so the library renders its code-entry source instead, and
 * that source (deviceFlowSources) shows the code from the link on Atrium's confirmation page.
 */
export function deviceLinks(path: string) {
  return async (kctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    const code = kctx.query.user_code;
    if (kctx.method === 'GET' && kctx.path === path && typeof code === 'string' && code !== '') {
      linkedCodes.set(kctx.req, code);
      const rest = new URLSearchParams(kctx.querystring);
      rest.delete('user_code');
      kctx.querystring = rest.toString();
    }
    await next();
  };
}

/**
 * The page for a device link: what the library shows after a code is entered — the application that
 * asks and the code to compare with the device (RFC 8628 §3.3.1) — at once, since the link carried
 * the code; a code that cannot be approved (unknown, expired, used) is shown in the entry form, to
 * correct. The form posts to the library like the one it would have submitted, which checks the
 * code again.
 */
async function deviceLinkPage(kctx: KoaContextWithOIDC, db: Db, form: string, linked: string): Promise<Page> {
  const normalized = normalize(linked);
  const code = normalized ? await kctx.oidc.provider.DeviceCode.findByUserCode(normalized, { ignoreExpiration: true }) : undefined;
  if (!code || code.isExpired || code.error || code.accountId || code.inFlight) {
    return deviceInputPage(form, 'That code is not valid or has expired. Check it and try again.', linked);
  }
  return deviceConfirmPage(form, await clientBranding(db, code.clientId), denormalize(normalized, USER_CODE.mask));
}

export function deviceFlowSources(db: Db) {
  return {
    userCodeInputSource: async (kctx: KoaContextWithOIDC, form: string, out: { user_code?: string } | undefined, err: Error & { userCode?: string } | undefined) => {
      const linked = err ? undefined : linkedCodes.get(kctx.req);
      if (linked !== undefined) {
        render(kctx, await deviceLinkPage(kctx, db, form, linked));
        return;
      }
      if (err && dropUnstoredSession(kctx)) {
        render(kctx, messagePage({
          title: 'Connect a device',
          message: 'This page expired before the code was sent. Enter the code again.',
          role: 'alert',
          status: 400,
          link: { href: kctx.oidc.urlFor('code_verification'), text: 'Enter the code' },
        }));
        return;
      }
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

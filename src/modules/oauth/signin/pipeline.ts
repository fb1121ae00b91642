// How a sign-in page or form is answered: a pipeline of named steps over one request's state, in
// the way oidc-provider builds its endpoints. A step either adds to the state (the flow, its
// branding, the address, the account) or answers — a page, a redirect — and the first answer ends
// the pipeline. Steps several forms share are in steps.ts; each form's file lists its pipeline.
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Interaction, Provider } from 'oidc-provider';
import type { AppContext } from '../../../context.ts';
import type { SecondFactors, UserRow } from '../../users/service.ts';
import type { SigninService } from '../accounts.ts';
import type { Branding } from '../clients.ts';
import type { Csrf } from '../csrf.ts';
import type { AttemptLimiter } from '../limits.ts';
import type { PendingFactor } from '../store.ts';
import { errorPage, loginPage, type FactorChoices, type FlowPage, type Page } from '../pages.ts';
import { sendJson, sendPage } from '../respond.ts';
import type { UpstreamProviders, UpstreamState } from '../upstream.ts';

/** What the sign-in routes share, built once per app (routes.ts). */
export interface SigninKit {
  readonly ctx: AppContext;
  readonly provider: Provider;
  readonly issuer: string;
  readonly signin: SigninService;
  readonly limiter: AttemptLimiter;
  readonly csrf: Csrf;
  readonly upstream: UpstreamProviders;
  readonly factors: SecondFactors;
}

/** Every field a sign-in form posts or a page's query carries; each route's schema admits some. */
export interface SigninFields {
  readonly _csrf?: string | undefined;
  readonly email?: string | undefined;
  readonly password?: string | undefined;
  readonly code?: string | undefined;
  readonly token?: string | undefined;
  readonly first_name?: string | undefined;
  readonly last_name?: string | undefined;
  readonly decision?: string | undefined;
  /** A passkey's answer (the browser's `AuthenticationResponseJSON`, as JSON text). */
  readonly response?: string | undefined;
  readonly notice?: string | undefined;
  readonly error?: string | undefined;
}

/** One request on its way through a pipeline. */
export interface Signin {
  readonly kit: SigninKit;
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  /** The form's body, or the query of a page or link. */
  readonly fields: SigninFields;
  /** The sign-in flow (oidc-provider interaction) the URL names. */
  uid: string;
  /** That flow, when this browser is in it (loadFlow). */
  flow: Interaction | undefined;
  branding: Branding | undefined;
  /** The address the form names, once valid (readEmail), or the address of the link's account. */
  email: string | undefined;
  /** The account the steps so far have established. */
  user: UserRow | undefined;
  /** The upstream sign-in this browser started (its callback only). */
  upstream: UpstreamState | undefined;
  /** The first factor this flow passed, while it waits for the second. */
  pending: PendingFactor | undefined;
  /** A passkey's answer from the form (readPasskeyAnswer). */
  passkeyAnswer: AuthenticationResponseJSON | undefined;
  /** How the second factor was proved (its `amr`), once it was. */
  proof: string | undefined;
  /** The second factors the account can give (the factor page's choices). */
  choices: FactorChoices | undefined;
  csrfToken: string | undefined;
}

/**
 * What a step returns once it has answered (sent a page or a redirect). Not the reply itself: a
 * reply is thenable, so an async step returning it would resolve to nothing.
 */
export interface Answered {
  readonly answered: true;
}
const ANSWERED: Answered = Object.freeze({ answered: true });

/** A step answers or lets the next one run (returns nothing). */
export type Step = (s: Signin) => Promise<Answered | void> | Answered | void;

export function pipeline(kit: SigninKit, steps: readonly Step[]) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const s: Signin = {
      kit,
      request,
      reply,
      fields: ((request.method === 'GET' ? request.query : request.body) ?? {}) as SigninFields,
      uid: (request.params as { uid?: string }).uid ?? '',
      flow: undefined,
      branding: undefined,
      email: undefined,
      user: undefined,
      upstream: undefined,
      pending: undefined,
      passkeyAnswer: undefined,
      proof: undefined,
      choices: undefined,
      csrfToken: undefined,
    };
    for (const step of steps) {
      if ((await step(s)) === ANSWERED) {
        // Resolves once the answer is sent, so Fastify knows the handler answered.
        await reply;
        return;
      }
    }
    throw new Error(`the sign-in pipeline of ${request.routeOptions.url} ended without an answer`);
  };
}

// --- answers ---------------------------------------------------------------------------------------

export function render(s: Signin, page: Page): Answered {
  sendPage(s.reply, page);
  return ANSWERED;
}

/** A JSON answer to a page's script (passkey options). */
export function json(s: Signin, body: unknown): Answered {
  sendJson(s.reply, body);
  return ANSWERED;
}

/** 303: the browser must GET the next page, never re-POST the form (RFC 9700 §4.12). */
export function redirect(s: Signin, url: string): Answered {
  s.reply.redirect(url, 303);
  return ANSWERED;
}

/** What every flow page shows: the flow, its client's branding, this browser's CSRF form token. */
export function view(s: Signin): FlowPage {
  // One token per answer: a browser without a CSRF cookie gets a new one with the first token.
  s.csrfToken ??= s.kit.csrf.token(s.request, s.reply);
  return { uid: s.uid, branding: s.branding, csrf: s.csrfToken };
}

/** The name the mail and pages give the application. */
export const appName = (s: Signin): string => s.branding?.name ?? 'Atrium';

export function signInPage(s: Signin, p: { email?: string | undefined; error?: string; notice?: string | undefined; status?: number } = {}): Page {
  const { passwordLogin, emailLogin } = s.kit.ctx.config.signin;
  return loginPage({ ...view(s), ...p, passwordLogin, emailLogin, upstream: s.kit.upstream.list() });
}

export const expired = (s: Signin): Answered => render(s, errorPage({
  title: 'This sign-in page has expired',
  message: 'This page is out of date, or it was opened in another browser. Return to the application and sign in again.',
  status: 400,
  branding: s.branding,
}));

export const refused = (s: Signin): Answered => render(s, errorPage({
  title: 'Request refused',
  message: 'This form was not submitted from this site or has expired. Go back, reload the page and try again.',
  status: 403,
}));

export const linkExpired = (s: Signin, message: string): Answered => render(s, errorPage({ title: 'This link has expired', message, status: 400, branding: s.branding }));

/** Records the outcome in the interaction and sends the browser back to the authorization endpoint. */
export async function finish(s: Signin, result: Record<string, unknown>, merge = true): Promise<Answered> {
  return redirect(s, await s.kit.provider.interactionResult(s.request.raw, s.reply.raw, result, { mergeWithLastSubmission: merge }));
}

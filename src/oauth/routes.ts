// The authorization server inside the Fastify app: oidc-provider serves /oauth/* and discovery,
// Atrium serves userinfo (for its JWT access tokens), the sign-in and consent pages under
// /interaction/<uid>, upstream identity callbacks, page assets, and the development mail outbox.
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors, type Interaction } from 'oidc-provider';
import { Type } from 'typebox';
import type { Api } from '../platform/http/module.ts';
import type { AppContext } from '../context.ts';
import { forbidden, notFound } from '../platform/http/errors.ts';
import { Uuid } from '../platform/http/schemas.ts';
import { findOutboxMail, listOutbox } from '../platform/mail/mailer.ts';
import { PASSWORD_MIN_LENGTH, findUserById } from '../modules/users/service.ts';
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, createSigninService, normaliseEmail } from './accounts.ts';
import { claimsForScopes } from './claims.ts';
import { ATRIUM_LOGO_SVG, SIGNIN_CSS } from './assets.ts';
import { clientBranding, type Branding } from './clients.ts';
import { Csrf } from './csrf.ts';
import { deriveSigninKeys } from './keys.ts';
import { AttemptLimiter } from './limits.ts';
import * as pages from './pages.ts';
import { ENDPOINTS, createProvider } from './provider.ts';
import { describeScopes } from './scopes.ts';
import { purgeExpired } from './store.ts';
import { UPSTREAM_COOKIE_PATH, UpstreamProviders } from './upstream.ts';

const PURGE_EVERY_MS = 10 * 60_000;

/** Headers on everything the provider and the pages serve. */
const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

// oidc-provider adds the hash of its one inline script (form_post response mode) to script-src.
const PROVIDER_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'";

const NOTICES: Record<string, string> = {
  'password-changed': 'Your password was changed. Sign in with your new password.',
  'upstream-failed': 'Signing in with that provider did not complete. Try again, or use another way to sign in.',
};

const Html = Type.String({ description: 'HTML page' });
const FlowParams = Type.Object({ uid: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }) });
const TokenQuery = Type.Object({ token: Type.String({ maxLength: 200 }) });
const Field = (max: number) => Type.Optional(Type.String({ maxLength: max }));
const CsrfOnly = Type.Object({ _csrf: Field(200) });
const EmailForm = Type.Object({ _csrf: Field(200), email: Field(EMAIL_MAX_LENGTH + 50) });
const PasswordForm = Type.Object({ _csrf: Field(200), email: Field(EMAIL_MAX_LENGTH + 50), password: Field(PASSWORD_MAX_LENGTH) });
const CodeForm = Type.Object({ _csrf: Field(200), email: Field(EMAIL_MAX_LENGTH + 50), code: Field(20) });
const SignupForm = Type.Object({ _csrf: Field(200), email: Field(EMAIL_MAX_LENGTH + 50), password: Field(PASSWORD_MAX_LENGTH), first_name: Field(200), last_name: Field(200) });
const TokenForm = Type.Object({ _csrf: Field(200), token: Field(200) });
const ResetForm = Type.Object({ _csrf: Field(200), token: Field(200), password: Field(PASSWORD_MAX_LENGTH) });
const ConsentForm = Type.Object({ _csrf: Field(200), decision: Type.Optional(Type.Enum(['allow', 'deny'])) });

const UserInfo = Type.Object({
  sub: Type.String(),
  email: Type.Optional(Type.String()),
  email_verified: Type.Optional(Type.Boolean()),
  name: Type.Optional(Type.String()),
  given_name: Type.Optional(Type.String()),
  family_name: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.Integer()),
});

const publicPage = { auth: { permission: 'public' as const } };
const INVALID_EMAIL = 'Enter a valid email address.';
const tags = ['Sign-in pages'];

export async function oauthRoutes(app: Api, ctx: AppContext): Promise<void> {
  const keys = deriveSigninKeys(ctx.config);
  const { provider, issuer } = await createProvider(ctx, keys);
  const signin = createSigninService(ctx, keys.codes);
  const upstream = new UpstreamProviders(ctx);
  const limiter = new AttemptLimiter(ctx.config.signin.limits);
  const csrf = new Csrf(keys.csrf, issuer);
  const { emailLogin } = ctx.config.signin;
  const secureCookies = issuer.startsWith('https:');

  // Expired codes, sessions and interactions are deleted in the background (any instance may do it).
  const purge = setInterval(() => {
    purgeExpired(ctx.db, new Date(Date.now() - 60_000)).catch((error: unknown) => ctx.log.warn({ err: error }, 'oauth purge failed'));
  }, PURGE_EVERY_MS);
  purge.unref();
  app.addHook('onClose', async () => {
    clearInterval(purge);
    await signin.drain();
  });

  // --- the protocol: oidc-provider, which reads its own request bodies ---------------------------
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const handle = provider.callback();
    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.raw.setHeader(name, value);
      reply.raw.setHeader('content-security-policy', PROVIDER_CSP);
      await handle(request.raw, reply.raw);
    };
    scope.route({ method: ['GET', 'POST', 'OPTIONS', 'DELETE', 'PUT'], url: '/oauth/*', handler: forward });
    scope.get('/.well-known/openid-configuration', forward);
    // RFC 8414 metadata of an issuer without a path is at this well-known name; same document.
    scope.get('/.well-known/oauth-authorization-server', (request, reply) => {
      request.raw.url = '/.well-known/openid-configuration';
      return forward(request, reply);
    });

    const userinfo = async (request: FastifyRequest) => {
      const principal = request.principal!;
      if (!principal.userId) throw forbidden('A client credentials token has no user');
      const user = await findUserById(ctx.db, principal.userId);
      if (!user) throw notFound('User');
      return claimsForScopes(user, principal.scopes ?? new Set<string>());
    };
    scope.route({
      method: ['GET', 'POST'],
      url: ENDPOINTS.userinfo,
      config: { auth: { permission: 'authenticated', credentials: ['oauth'], oauthScope: 'openid' } },
      schema: { tags: ['OAuth'], summary: 'OpenID Connect userinfo: claims of the signed-in user, as the token\'s scopes allow', response: { 200: UserInfo } },
      handler: userinfo,
    });
  });

  // --- pages ----------------------------------------------------------------------------------------
  await app.register(async (scope) => {
    await scope.register(cookie);
    await scope.register(formbody, { bodyLimit: 64 * 1024 });
    const route = scope as unknown as Api;

    const send = (reply: FastifyReply, page: pages.Page) => {
      reply.status(page.status).headers(SECURITY_HEADERS).header('cache-control', 'no-store').header('content-security-policy', page.csp).type('text/html; charset=utf-8');
      return reply.send(page.html);
    };
    const expired = (reply: FastifyReply, branding?: Branding) => send(reply, pages.errorPage({
      title: 'This sign-in page has expired',
      message: 'This page is out of date, or it was opened in another browser. Return to the application and sign in again.',
      status: 400,
      branding,
    }));
    const refused = (reply: FastifyReply) => send(reply, pages.errorPage({
      title: 'Request refused',
      message: 'This form was not submitted from this site or has expired. Go back, reload the page and try again.',
      status: 403,
    }));
    const linkExpired = (reply: FastifyReply, branding: Branding | undefined, message: string) => send(reply, pages.errorPage({ title: 'This link has expired', message, status: 400, branding }));

    /**
     * The error to show (Retry-After set) when this address or IP has no attempts left. Forms that send mail
     * spend one on every request ('attempt'); guesses only look ('check') and count failures with limiter.fail.
     */
    function overLimit(request: FastifyRequest, reply: FastifyReply, email: string, limit: 'attempt' | 'check'): string | undefined {
      const verdict = limit === 'attempt' ? limiter.attempt(email, request.ip) : limiter.check(email, request.ip);
      if (verdict.allowed) return undefined;
      reply.header('retry-after', String(verdict.retryAfter));
      return `Too many attempts. Try again in ${Math.max(1, Math.ceil(verdict.retryAfter / 60))} minute(s).`;
    }

    /** The interaction this browser is in, if it is the one the URL names. */
    async function loadFlow(request: FastifyRequest, reply: FastifyReply, uid: string): Promise<Interaction | undefined> {
      try {
        const flow = await provider.interactionDetails(request.raw, reply.raw);
        return flow.uid === uid ? flow : undefined;
      } catch (error) {
        if (error instanceof errors.SessionNotFound) return undefined;
        throw error;
      }
    }

    /** Branding for a flow, also when this browser does not hold it (links opened elsewhere). */
    async function brandingOf(uid: string, flow?: Interaction): Promise<Branding | undefined> {
      const known = flow ?? (await provider.Interaction.find(uid));
      return clientBranding(ctx.db, known?.params.client_id);
    }

    async function finish(request: FastifyRequest, reply: FastifyReply, result: Record<string, unknown>, merge = true) {
      const returnTo = await provider.interactionResult(request.raw, reply.raw, result, { mergeWithLastSubmission: merge });
      // 303: the browser must GET the authorization endpoint, never re-POST credentials (RFC 9700 §4.12).
      return reply.redirect(returnTo, 303);
    }

    const signInPage = (p: pages.FlowPage & { email?: string | undefined; error?: string; notice?: string | undefined; status?: number }) =>
      pages.loginPage({ ...p, emailLogin, upstream: upstream.list() });

    /** What every sign-in form needs: this browser still at the login prompt of the flow the URL names. */
    async function loginView(request: FastifyRequest, reply: FastifyReply, uid: string): Promise<{ done: FastifyReply } | { view: pages.FlowPage }> {
      const flow = await loadFlow(request, reply, uid);
      if (!flow || flow.prompt.name !== 'login') return { done: expired(reply) };
      return { view: { uid, branding: await clientBranding(ctx.db, flow.params.client_id), csrf: csrf.token(request, reply) } };
    }

    const formPage = async (request: FastifyRequest, reply: FastifyReply, uid: string, form: (view: pages.FlowPage) => pages.Page) => {
      const at = await loginView(request, reply, uid);
      return 'done' in at ? at.done : send(reply, form(at.view));
    };

    /** Shared preamble of sign-in form posts: CSRF, a live login prompt in this browser. */
    async function loginPost(request: FastifyRequest, reply: FastifyReply, uid: string, token: string | undefined) {
      if (!csrf.verify(request, token)) return { done: refused(reply) };
      return loginView(request, reply, uid);
    }

    // Where the address is typed into `form`, a bad one is shown there again as typed. Where it is a hidden
    // field of `form`, a bad one means a stale or edited form: `restart` asks for it afresh, without echoing it.
    type Again = pages.FlowPage & { error: string; status: number };
    type EmailPages = { limit: 'attempt' | 'check' } & (
      | { form: (p: Again & { email: string | undefined }) => pages.Page; restart?: undefined }
      | { form: (p: Again & { email: string }) => pages.Page; restart: (p: Again) => pages.Page });

    /** Shared start of the form posts that name an email address: loginPost, a valid address, the attempt limit. */
    async function emailPost(request: FastifyRequest, reply: FastifyReply, uid: string, body: { _csrf?: string | undefined; email?: string | undefined }, options: EmailPages) {
      const pre = await loginPost(request, reply, uid, body._csrf);
      if ('done' in pre) return pre;
      const { view } = pre;
      const email = normaliseEmail(body.email);
      if (!email) {
        const again = { ...view, error: INVALID_EMAIL, status: 400 };
        return { done: send(reply, options.restart ? options.restart(again) : options.form({ ...again, email: body.email })) };
      }
      const limited = overLimit(request, reply, email, options.limit);
      if (limited) return { done: send(reply, options.form({ ...view, email, error: limited, status: 429 })) };
      return { view, email };
    }

    /** Shared preamble of posts from emailed links: the flow may be in another browser, or over. */
    async function linkPost(request: FastifyRequest, reply: FastifyReply, uid: string, token: string | undefined): Promise<{ done: FastifyReply } | { flow: Interaction | undefined; branding: Branding | undefined }> {
      if (!csrf.verify(request, token)) return { done: refused(reply) };
      const flow = await loadFlow(request, reply, uid);
      return { flow, branding: await brandingOf(uid, flow) };
    }

    route.get('/interaction/:uid', {
      config: publicPage,
      schema: { tags, hide: true, summary: 'Sign-in or consent page of an authorization request', params: FlowParams, querystring: Type.Object({ notice: Field(50) }), response: { 200: Html, '4xx': Html } },
    }, async (request, reply) => {
      const { uid } = request.params;
      const flow = await loadFlow(request, reply, uid);
      if (!flow) return expired(reply);
      const branding = await clientBranding(ctx.db, flow.params.client_id);
      if (flow.prompt.name === 'login') {
        const notice = request.query.notice ? NOTICES[request.query.notice] : undefined;
        return send(reply, signInPage({ uid, branding, csrf: csrf.token(request, reply), notice, email: normaliseEmail(flow.params.login_hint) }));
      }
      if (flow.prompt.name === 'consent') {
        const user = flow.session?.accountId ? await findUserById(ctx.db, flow.session.accountId) : undefined;
        if (!user?.emailVerifiedAt) return expired(reply, branding);
        const scopes = describeScopes((flow.params.scope ?? '').split(' '));
        return send(reply, pages.consentPage({ uid, branding, csrf: csrf.token(request, reply), userEmail: user.email, scopes }));
      }
      return expired(reply, branding);
    });

    route.post('/interaction/:uid/consent', {
      config: publicPage,
      schema: { tags, hide: true, summary: 'Allow or deny an application', params: FlowParams, body: ConsentForm, response: { '4xx': Html } },
    }, async (request, reply) => {
      const { uid } = request.params;
      if (!csrf.verify(request, request.body._csrf)) return refused(reply);
      const flow = await loadFlow(request, reply, uid);
      if (!flow || flow.prompt.name !== 'consent') return expired(reply);
      const accountId = flow.session?.accountId;
      const user = accountId ? await findUserById(ctx.db, accountId) : undefined;
      if (!user?.emailVerifiedAt) return expired(reply);
      if (request.body.decision !== 'allow') {
        return finish(request, reply, { error: 'access_denied', error_description: 'The user denied the request' }, false);
      }
      const clientId = flow.params.client_id!;
      const grant = (flow.grantId ? await provider.Grant.find(flow.grantId) : undefined) ?? new provider.Grant({ accountId: user.id, clientId });
      const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = flow.prompt.details;
      if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
      if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
      const grantId = await grant.save();
      return finish(request, reply, { consent: { grantId } });
    });

    // --- email and password ---------------------------------------------------------------------
    if (emailLogin) {
      route.post('/interaction/:uid/password', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Sign in with email and password', params: FlowParams, body: PasswordForm, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const pre = await loginPost(request, reply, uid, request.body._csrf);
        if ('done' in pre) return pre.done;
        const { view } = pre;
        const email = normaliseEmail(request.body.email);
        const password = request.body.password ?? '';
        if (!email || !password) return send(reply, signInPage({ ...view, email: request.body.email, error: 'Enter your email address and your password.', status: 400 }));
        const limited = overLimit(request, reply, email, 'check');
        if (limited) return send(reply, signInPage({ ...view, email, error: limited, status: 429 }));
        const checked = await signin.checkPassword(email, password);
        if (checked.result === 'invalid') {
          limiter.fail(email, request.ip);
          return send(reply, signInPage({ ...view, email, error: 'The email address or password is incorrect.', status: 401 }));
        }
        if (checked.result === 'unconfirmed') return send(reply, pages.unconfirmedPage({ ...view, email: checked.user.email }));
        return finish(request, reply, { login: { accountId: checked.user.id, amr: ['pwd'] } });
      });

      route.post('/interaction/:uid/confirm/resend', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Send the confirmation email again', params: FlowParams, body: EmailForm, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        // The address is a hidden field of the unconfirmed page, which cannot be shown again without the account.
        const post = await emailPost(request, reply, uid, request.body, { limit: 'attempt', form: signInPage, restart: signInPage });
        if ('done' in post) return post.done;
        const { view: { branding }, email } = post;
        signin.resendConfirmation(uid, branding?.name ?? 'Atrium', email);
        return send(reply, pages.messagePage({ title: 'Check your email', branding, message: `If ${email} has an account waiting for confirmation, we sent it a new confirmation link.`, role: 'status', link: { href: `/interaction/${uid}`, text: 'Back to sign in' } }));
      });

      route.get('/interaction/:uid/code', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Ask for a one-time sign-in code', params: FlowParams, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => formPage(request, reply, request.params.uid, pages.codeRequestPage));

      route.post('/interaction/:uid/code', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Email a one-time sign-in code', params: FlowParams, body: EmailForm, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const post = await emailPost(request, reply, uid, request.body, { limit: 'attempt', form: pages.codeRequestPage });
        if ('done' in post) return post.done;
        const { view, email } = post;
        signin.requestCode(uid, view.branding?.name ?? 'Atrium', email);
        return send(reply, pages.codeEntryPage({ ...view, email }));
      });

      route.post('/interaction/:uid/code/verify', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Sign in with a one-time code', params: FlowParams, body: CodeForm, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const post = await emailPost(request, reply, uid, request.body, { limit: 'check', form: pages.codeEntryPage, restart: pages.codeRequestPage });
        if ('done' in post) return post.done;
        const { view, email } = post;
        const code = (request.body.code ?? '').replace(/\s+/g, '');
        const user = /^[0-9]{6}$/.test(code) ? await signin.verifyCode(uid, email, code) : undefined;
        if (!user) {
          limiter.fail(email, request.ip);
          return send(reply, pages.codeEntryPage({ ...view, email, error: 'That code is not valid or has expired.', status: 401 }));
        }
        return finish(request, reply, { login: { accountId: user.id, amr: ['otp'] } });
      });

      route.get('/interaction/:uid/signup', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Sign-up form', params: FlowParams, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => formPage(request, reply, request.params.uid, pages.signupPage));

      route.post('/interaction/:uid/signup', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Create an account (confirmed by email)', params: FlowParams, body: SignupForm, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const pre = await loginPost(request, reply, uid, request.body._csrf);
        if ('done' in pre) return pre.done;
        const { view } = pre;
        const { first_name: firstName = '', last_name: lastName = '', password = '' } = request.body;
        const email = normaliseEmail(request.body.email);
        const again = (error: string, status: number) => send(reply, pages.signupPage({ ...view, email: request.body.email, firstName, lastName, error, status }));
        if (!email) return again(INVALID_EMAIL, 400);
        if (password.length < PASSWORD_MIN_LENGTH) return again(`Choose a password of at least ${PASSWORD_MIN_LENGTH} characters.`, 400);
        const limited = overLimit(request, reply, email, 'attempt');
        if (limited) return again(limited, 429);
        await signin.signUp(uid, view.branding?.name ?? 'Atrium', { email, password, firstName: firstName.trim(), lastName: lastName.trim() });
        return send(reply, pages.messagePage({
          title: 'Check your email',
          branding: view.branding,
          message: `We sent a message to ${email}. Open the link in it to confirm your address and finish signing in. If you already have an account, the message tells you how to sign in.`,
          role: 'status',
        }));
      });

      route.get('/interaction/:uid/confirm', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Email confirmation link', params: FlowParams, querystring: TokenQuery, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const branding = await brandingOf(uid);
        const user = await signin.peekConfirmation(uid, request.query.token);
        if (!user) return linkExpired(reply, branding, 'This confirmation link is invalid, was already used, or has expired. Sign up or sign in again to get a new one.');
        return send(reply, pages.confirmPage({ uid, branding, csrf: csrf.token(request, reply), token: request.query.token, email: user.email }));
      });

      route.post('/interaction/:uid/confirm', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Confirm an email address', params: FlowParams, body: TokenForm, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const pre = await linkPost(request, reply, uid, request.body._csrf);
        if ('done' in pre) return pre.done;
        const { flow, branding } = pre;
        const user = await signin.confirm(uid, request.body.token ?? '');
        if (!user) return linkExpired(reply, branding, 'This confirmation link is invalid, was already used, or has expired.');
        // Confirmed in the browser that signed up: carry on with the sign-in it started.
        if (flow?.prompt.name === 'login') return finish(request, reply, { login: { accountId: user.id, amr: ['otp'] } });
        return send(reply, pages.messagePage({ title: 'Email confirmed', branding, message: 'Your email address is confirmed. Return to the application to sign in.', role: 'status' }));
      });

      route.get('/interaction/:uid/forgot', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Forgot-password form', params: FlowParams, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => formPage(request, reply, request.params.uid, pages.forgotPage));

      route.post('/interaction/:uid/forgot', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Email a password reset link', params: FlowParams, body: EmailForm, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const post = await emailPost(request, reply, uid, request.body, { limit: 'attempt', form: pages.forgotPage });
        if ('done' in post) return post.done;
        const { view: { branding }, email } = post;
        signin.requestReset(uid, branding?.name ?? 'Atrium', email);
        return send(reply, pages.messagePage({
          title: 'Check your email',
          branding,
          message: `If an account exists for ${email}, we sent it a link to choose a new password. The link is valid for one hour.`,
          role: 'status',
          link: { href: `/interaction/${uid}`, text: 'Back to sign in' },
        }));
      });

      route.get('/interaction/:uid/reset', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Password reset link', params: FlowParams, querystring: TokenQuery, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const branding = await brandingOf(uid);
        const user = await signin.peekReset(uid, request.query.token);
        if (!user) return linkExpired(reply, branding, 'This reset link is invalid, was already used, or has expired. Ask for a new one from the sign-in page.');
        return send(reply, pages.resetPage({ uid, branding, csrf: csrf.token(request, reply), token: request.query.token, email: user.email }));
      });

      route.post('/interaction/:uid/reset', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Choose a new password', params: FlowParams, body: ResetForm, response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const { uid } = request.params;
        const pre = await linkPost(request, reply, uid, request.body._csrf);
        if ('done' in pre) return pre.done;
        const { flow, branding } = pre;
        const token = request.body.token ?? '';
        const user = await signin.peekReset(uid, token);
        if (!user) return linkExpired(reply, branding, 'This reset link is invalid, was already used, or has expired.');
        const password = request.body.password ?? '';
        const again = (error: string, status: number) => send(reply, pages.resetPage({ uid, branding, csrf: csrf.token(request, reply), token, email: user.email, error, status }));
        if (password.length < PASSWORD_MIN_LENGTH) return again(`Choose a password of at least ${PASSWORD_MIN_LENGTH} characters.`, 400);
        const limited = overLimit(request, reply, user.email, 'check');
        if (limited) return again(limited, 429);
        if (!(await signin.resetPassword(uid, token, password))) return linkExpired(reply, branding, 'This reset link was already used.');
        if (flow?.prompt.name === 'login') return reply.redirect(`/interaction/${encodeURIComponent(uid)}?notice=password-changed`, 303);
        return send(reply, pages.messagePage({ title: 'Password changed', branding, message: 'Your password was changed and you were signed out everywhere. Return to the application and sign in with your new password.', role: 'status' }));
      });
    }

    // --- upstream identity providers ----------------------------------------------------------------
    if (upstream.list().length > 0) {
      route.post('/interaction/:uid/upstream/:provider', {
        config: publicPage,
        schema: { tags, hide: true, summary: 'Sign in with an upstream identity provider', params: Type.Object({ uid: FlowParams.properties.uid, provider: Type.String({ maxLength: 32 }) }), body: CsrfOnly, response: { '4xx': Html } },
      }, async (request, reply) => {
        const { uid, provider: id } = request.params;
        const pre = await loginPost(request, reply, uid, request.body._csrf);
        if ('done' in pre) return pre.done;
        if (!upstream.has(id)) return send(reply, pages.errorPage({ message: 'This sign-in method is not available.', status: 404, branding: pre.view.branding }));
        let started;
        try {
          started = await upstream.start(id, uid);
        } catch (error) {
          request.log.warn({ err: error, provider: id }, 'upstream identity provider unavailable');
          return send(reply, signInPage({ ...pre.view, error: 'That sign-in provider cannot be reached right now. Try again later or use another way to sign in.', status: 502 }));
        }
        reply.setCookie(upstreamCookie(id), upstream.sealState(started.state), { path: `${UPSTREAM_COOKIE_PATH}/${encodeURIComponent(id)}`, httpOnly: true, sameSite: 'lax', secure: secureCookies, maxAge: 600 });
        return reply.redirect(started.url.href, 303);
      });

      route.get('/signin/upstream/:provider/callback', {
        config: publicPage,
        schema: {
          tags, hide: true, summary: 'Redirect URI to register at upstream identity providers',
          params: Type.Object({ provider: Type.String({ maxLength: 32 }) }),
          querystring: Type.Object({ code: Field(2000), state: Field(2000), iss: Field(2000), error: Field(200), error_description: Field(2000) }),
          response: { '4xx': Html },
        },
      }, async (request, reply) => {
        const { provider: id } = request.params;
        const state = upstream.openState(request.cookies[upstreamCookie(id)], id);
        reply.clearCookie(upstreamCookie(id), { path: `${UPSTREAM_COOKIE_PATH}/${encodeURIComponent(id)}` });
        if (!state) return expired(reply);
        const back = `/interaction/${encodeURIComponent(state.flow)}`;
        if (request.query.error) return reply.redirect(`${back}?notice=upstream-failed`, 303);
        let user;
        try {
          user = await upstream.finish(state, new URL(request.url, issuer));
        } catch (error) {
          request.log.warn({ err: error, provider: id }, 'upstream sign-in failed');
          return reply.redirect(`${back}?notice=upstream-failed`, 303);
        }
        // The state cookie (HttpOnly, encrypted, bound to this provider) proves this browser
        // started the flow; the interaction cookie is path-scoped to /interaction and not sent
        // here, so the result is stored on the interaction directly, as interactionResult does.
        const interaction = await provider.Interaction.find(state.flow);
        if (!interaction || interaction.prompt.name !== 'login') return expired(reply);
        interaction.result = { login: { accountId: user.id } };
        await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
        return reply.redirect(interaction.returnTo, 303);
      });
    }

    // --- assets and the development outbox ------------------------------------------------------------
    route.get(`${pages.ASSETS}/style.css`, {
      config: publicPage,
      schema: { tags, hide: true, summary: 'Sign-in page stylesheet', response: { 200: Type.String() } },
    }, async (_request, reply) => reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(SIGNIN_CSS));

    route.get(`${pages.ASSETS}/logo.svg`, {
      config: publicPage,
      schema: { tags, hide: true, summary: 'Default logo', response: { 200: Type.String() } },
    }, async (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=3600').send(ATRIUM_LOGO_SVG));

    if (ctx.config.mail.transport === 'outbox') {
      ctx.log.info({ url: `${issuer}/dev/mail` }, 'no SMTP server configured: mail is kept in the development outbox');
      route.get('/dev/mail', {
        config: publicPage,
        schema: { tags: ['Development'], summary: 'Development mail outbox (only without SMTP, in development)', response: { 200: Html } },
      }, async (_request, reply) => send(reply, pages.outboxPage(await listOutbox(ctx.db))));

      route.get('/dev/mail/:id', {
        config: publicPage,
        schema: { tags: ['Development'], summary: 'One mail of the development outbox', params: Type.Object({ id: Uuid }), response: { 200: Html, '4xx': Html } },
      }, async (request, reply) => {
        const mail = await findOutboxMail(ctx.db, request.params.id);
        if (!mail) return send(reply, pages.errorPage({ message: 'No such mail.', status: 404 }));
        return send(reply, pages.outboxMailPage({ ...mail, text: mail.textBody }));
      });
    }
  });
}

const upstreamCookie = (id: string) => `atrium_upstream_${id.replaceAll('-', '_')}`;

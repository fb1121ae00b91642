// Helpers for the OAuth suites: clients inserted straight into the table (independent of the
// management API), a cookie-keeping fetch "browser" that fills the real HTML forms, mail readers
// for the development outbox, and openid-client configuration against a test service.
import { randomBytes, randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import { hashSecret } from '../../src/platform/crypto/secrets.ts';
import { listOutbox } from '../../src/platform/mail/mailer.ts';
import { oauthClientsTable } from '../../src/modules/oauth-clients/store.ts';
import type { RunningService } from '../../src/main.ts';
import { createTenant, startTestService, type Engine, type Tenant, type TestService } from './service.ts';

/** Settings that turn email sign-in and the dev outbox on for both engines. */
export const EMAIL_LOGIN_ENV: Record<string, string> = {
  ATRIUM_EMAIL_LOGIN: 'true',
  ATRIUM_DEV_MAILBOX: 'true',
  // Every test signs in from 127.0.0.1; the per-IP budget is tested on its own service.
  ATRIUM_SIGNIN_LIMIT_PER_IP: '100000',
};

export interface TestClient {
  clientId: string;
  /** Empty for public clients. */
  clientSecret: string;
  redirectUri: string;
  projectId: string;
}

export interface ClientOptions {
  name?: string;
  public?: boolean;
  redirectUris?: string[];
  grantTypes?: string[];
  scope?: string;
  metadata?: Record<string, string>;
}

/** Inserts an OAuth client row for a project, the way the management API stores it. */
export async function insertClient(service: RunningService, projectId: string, options: ClientOptions = {}): Promise<TestClient> {
  const clientId = randomBytes(16).toString('hex');
  const secret = options.public ? '' : randomBytes(32).toString('base64url');
  const redirectUris = options.redirectUris ?? [`http://127.0.0.1:9/callback/${clientId}`];
  const grantTypes = options.grantTypes ?? ['authorization_code', 'refresh_token'];
  await service.ctx.db.insert(oauthClientsTable).values({
    clientId,
    projectId,
    name: options.name ?? 'Test App',
    secretHash: options.public ? null : hashSecret(secret),
    redirectUris,
    grantTypes,
    responseTypes: grantTypes.includes('authorization_code') ? ['code'] : [],
    scope: options.scope ?? 'openid profile email offline_access profile:read rooms:connect',
    metadata: { theme: 'auto', ...options.metadata },
  });
  return { clientId, clientSecret: secret, redirectUri: redirectUris[0]!, projectId };
}

/** openid-client configuration for a client of the test service (plain http on loopback). */
export function discover(service: { url: string }, client: Pick<TestClient, 'clientId' | 'clientSecret'>, auth: 'basic' | 'post' = 'basic'): Promise<oidc.Configuration> {
  const authentication = !client.clientSecret ? oidc.None() : auth === 'basic' ? oidc.ClientSecretBasic(client.clientSecret) : oidc.ClientSecretPost(client.clientSecret);
  return oidc.discovery(new URL(service.url), client.clientId, undefined, authentication, { execute: [oidc.allowInsecureRequests] });
}

export interface OAuthService {
  service: TestService;
  tenant: Tenant;
  client: TestClient;
  config: oidc.Configuration;
}

/** A test service with a tenant, one OAuth client of the tenant's project, and that client's openid-client configuration. */
export async function startOAuthService(engine: Engine, options: { env: Record<string, string>; tenant: string; client?: ClientOptions }): Promise<OAuthService> {
  const service = await startTestService(engine, options.env);
  try {
    const tenant = await createTenant(service, options.tenant);
    const client = await insertClient(service, tenant.projectId, options.client);
    return { service, tenant, client, config: await discover(service, client) };
  } catch (error) {
    // The suite's after hook only learns of the service from the result, so stop it here.
    await service.stop();
    throw error;
  }
}

export interface AuthorizationRequest {
  url: URL;
  verifier: string;
  state: string;
  nonce: string;
}

export async function authorizationRequest(config: oidc.Configuration, redirectUri: string, scope: string, extra: Record<string, string> = {}): Promise<AuthorizationRequest> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  return { url, verifier, state, nonce };
}

interface StoredCookie {
  value: string;
  path: string;
}

export interface Page {
  status: number;
  url: string;
  html: string;
  headers: Headers;
}

/** A browser without a browser: a cookie jar per origin, manual redirects and HTML form filling. */
export class FormBrowser {
  readonly base: string;
  readonly #jar = new Map<string, StoredCookie>();
  /** Sent with every request, e.g. the X-Forwarded-For a proxy adds for a remote client. */
  readonly #headers: Record<string, string>;

  constructor(base: string, headers: Record<string, string> = {}) {
    this.base = base;
    this.#headers = headers;
  }

  cookieNames(): string[] {
    return [...this.#jar.keys()].map((k) => k.split('|')[1]!);
  }

  /** Puts a cookie in the jar as a server would have set it (a forged or stale one, say). */
  setCookie(name: string, value: string, path = '/'): void {
    this.#jar.set(`${new URL(this.base).origin}|${name}|${path}`, { value, path });
  }

  #cookieHeader(url: URL): string | undefined {
    // Longer paths first, as browsers send them (RFC 6265, 5.4): a server reading the first of two
    // cookies of one name gets the one closest to the page.
    const pairs = [...this.#jar.entries()].filter(([key, c]) => key.startsWith(`${url.origin}|`)
      && (url.pathname === c.path || url.pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`)))
      .sort(([, a], [, b]) => b.path.length - a.path.length);
    return pairs.length > 0 ? pairs.map(([key, c]) => `${key.split('|')[1]}=${c.value}`).join('; ') : undefined;
  }

  #store(url: URL, response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';').map((s) => s.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      let path = url.pathname.replace(/\/[^/]*$/, '') || '/';
      let expired = false;
      for (const attribute of attributes) {
        const [key, val = ''] = attribute.split('=');
        if (key!.toLowerCase() === 'path') path = val;
        if (key!.toLowerCase() === 'max-age' && Number(val) <= 0) expired = true;
        if (key!.toLowerCase() === 'expires' && Date.parse(val) <= Date.now()) expired = true;
      }
      const key = `${url.origin}|${name}|${path}`;
      if (expired || value === '') this.#jar.delete(key);
      else this.#jar.set(key, { value, path });
    }
  }

  /**
   * One request, no redirect following. A form is sent URL-encoded; a string body is sent as it is
   * (URL-encoded unless `headers` name another content type), for bytes a form cannot produce.
   */
  async request(method: string, target: string | URL, form?: Record<string, string> | string, headers: Record<string, string> = {}): Promise<Page & { location: string | undefined }> {
    const url = new URL(target, this.base);
    const cookie = this.#cookieHeader(url);
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
      headers: {
        accept: 'text/html',
        ...(cookie ? { cookie } : {}),
        ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...this.#headers,
        ...headers,
      },
      ...(form !== undefined ? { body: typeof form === 'string' ? form : new URLSearchParams(form).toString() } : {}),
    });
    this.#store(url, response);
    const location = response.headers.get('location');
    return { status: response.status, url: url.href, html: await response.text(), headers: response.headers, location: location ? new URL(location, url).href : undefined };
  }

  /**
   * Follows redirects from `target` until a page is served, or until a redirect leaves for a URL
   * starting with `stopAt` (the client's redirect_uri), which is returned without being fetched.
   */
  async go(method: string, target: string | URL, form?: Record<string, string>, stopAt?: string): Promise<Page & { redirectedTo?: string }> {
    let response = await this.request(method, target, form);
    for (let hops = 0; response.location && hops < 20; hops++) {
      if (stopAt && response.location.startsWith(stopAt)) return { ...response, redirectedTo: response.location };
      response = await this.request('GET', response.location);
    }
    return response;
  }

  /** Submits the form whose action ends with `actionSuffix` on `page`, with its hidden fields. */
  submit(page: Page, actionSuffix: string, fields: Record<string, string>, stopAt?: string): Promise<Page & { redirectedTo?: string }> {
    const form = findForm(page.html, actionSuffix);
    return this.go('POST', new URL(form.action, page.url), { ...form.hidden, ...fields }, stopAt);
  }
}

/** Decodes the few entities pages.ts produces. */
export function unescapeHtml(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

export function findForm(html: string, actionSuffix: string): { action: string; hidden: Record<string, string> } {
  for (const match of html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)) {
    const action = unescapeHtml(match[1]!);
    if (!action.endsWith(actionSuffix)) continue;
    const hidden: Record<string, string> = {};
    for (const input of match[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[input[1]!] = unescapeHtml(input[2]!);
    return { action, hidden };
  }
  throw new Error(`no form with action …${actionSuffix} in page:\n${html.slice(0, 2000)}`);
}

/** The visible error message of a page, if any. */
export function pageError(html: string): string | undefined {
  const match = /<p class="error" role="alert">([\s\S]*?)<\/p>/.exec(html);
  return match ? unescapeHtml(match[1]!) : undefined;
}

/**
 * Runs the browser part of the authorization code flow: authorize → login form → consent →
 * back to the redirect URI. Returns the callback URL (code, state, iss).
 */
export async function signInAndConsent(browser: FormBrowser, request: AuthorizationRequest, redirectUri: string, email: string, password: string): Promise<URL> {
  const login = await browser.go('GET', request.url, undefined, redirectUri);
  if (login.redirectedTo) return new URL(login.redirectedTo);
  let page: Page & { redirectedTo?: string } = login;
  if (page.html.includes('id="password-form"')) page = await browser.submit(page, '/password', { email, password }, redirectUri);
  if (page.redirectedTo) return new URL(page.redirectedTo);
  if (!page.html.includes('/consent"')) throw new Error(`expected the consent page, got ${page.status}: ${pageError(page.html) ?? page.html.slice(0, 500)}`);
  const done = await browser.submit(page, '/consent', { decision: 'allow' }, redirectUri);
  if (!done.redirectedTo) throw new Error(`expected a redirect to the client, got ${done.status}: ${done.html.slice(0, 500)}`);
  return new URL(done.redirectedTo);
}

/** Waits for a mail to `to` in the development outbox (mail is sent after the response). */
export async function waitForMail(service: RunningService, to: string, subject: RegExp, since = new Date(0)): Promise<{ subject: string; text: string }> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const mail = (await listOutbox(service.ctx.db, 500)).find((m) => m.recipient === to && subject.test(m.subject) && m.createdAt >= since);
    if (mail) return { subject: mail.subject, text: mail.textBody };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no mail to ${to} matching ${subject} within 10 s`);
}

export async function mailCount(service: RunningService, to: string): Promise<number> {
  return (await listOutbox(service.ctx.db, 1000)).filter((m) => m.recipient === to).length;
}

export function linkIn(text: string): string {
  const match = /https?:\/\/\S+/.exec(text);
  if (!match) throw new Error(`no link in mail:\n${text}`);
  return match[0];
}

export function codeIn(text: string): string {
  const match = /\b(\d{6})\b/.exec(text);
  if (!match) throw new Error(`no code in mail:\n${text}`);
  return match[1]!;
}

export const uniqueEmail = (label: string) => `${label}-${randomUUID()}@example.test`;

/** Decodes a JWT's payload without verifying it (assertions on claims). */
export function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** The OAuth error code of an openid-client failure (body error or WWW-Authenticate challenge). */
export function oauthError(error: unknown): string | undefined {
  const e = error as { error?: string; cause?: unknown };
  if (typeof e.error === 'string') return e.error;
  const cause = e.cause as { error?: string } | { parameters?: { error?: string } }[] | undefined;
  if (Array.isArray(cause)) return cause[0]?.parameters?.error;
  return cause?.error;
}

export interface UpstreamAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
}

export interface UpstreamProviderFixture {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who the next sign-in at the upstream provider is (it signs in without asking). */
  nextAccount: UpstreamAccount;
  /** The upstream's sign-in and consent interactions seen so far. */
  logins: number;
  stop(): Promise<void>;
}

/**
 * A second, bare oidc-provider acting as an operator's upstream identity provider. Its interaction
 * pages sign `nextAccount` in and consent at once, so a test drives the whole round trip with fetch.
 */
export async function startUpstreamProvider(port: number, redirectUri: string): Promise<UpstreamProviderFixture> {
  const { default: Provider } = await import('oidc-provider');
  const { createServer } = await import('node:http');
  const { exportJWK, generateKeyPair } = await import('jose');
  const issuer = `http://127.0.0.1:${port}`;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const fixture = {
    issuer,
    clientId: 'atrium-test',
    clientSecret: randomBytes(24).toString('base64url'),
    nextAccount: { sub: 'upstream-user', email: 'upstream@example.test', email_verified: true } as UpstreamAccount,
    logins: 0,
    stop: async () => {},
  };
  const accounts = new Map<string, UpstreamAccount>();
  const provider = new Provider(issuer, {
    clients: [{
      client_id: fixture.clientId,
      client_secret: fixture.clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: 'ES256',
    }],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: 'upstream' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'] },
    features: { devInteractions: { enabled: false } },
    findAccount: async (_ctx: unknown, sub: string) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ ...account }) } : undefined;
    },
    ttl: { AccessToken: 600, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  });
  provider.use(async (ctx, next) => {
    if (!ctx.path.startsWith('/interaction/')) return next();
    const { req, res } = ctx as unknown as { req: import('node:http').IncomingMessage; res: import('node:http').ServerResponse };
    const details = await provider.interactionDetails(req, res);
    let result: Record<string, unknown>;
    if (details.prompt.name === 'login') {
      fixture.logins += 1;
      accounts.set(fixture.nextAccount.sub, fixture.nextAccount);
      result = { login: { accountId: fixture.nextAccount.sub } };
    } else {
      const grant = new provider.Grant({ accountId: details.session!.accountId!, clientId: details.params.client_id! });
      grant.addOIDCScope(details.params.scope ?? 'openid');
      result = { consent: { grantId: await grant.save() } };
    }
    const returnTo = await provider.interactionResult(req, res, result);
    ctx.status = 303;
    (ctx as unknown as { redirect(url: string): void }).redirect(returnTo);
  });
  const server = createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  fixture.stop = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return fixture;
}

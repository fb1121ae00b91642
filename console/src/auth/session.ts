// The console's sign-in: Atrium's own authorization server, as the built-in public client
// `atrium-console` (authorization code + PKCE, src/modules/oauth/first-party.ts). Tokens live in this
// module's memory only, never in storage: a reload signs in again, silently while the browser's
// session at the server lasts. The access token is refreshed shortly before it expires; the
// refresh token ends with that session. Only the PKCE verifier and state cross the redirect, in
// sessionStorage, and are removed when the code is redeemed.
import { BASE_PATH, PUBLIC_URL } from '../config.ts';

const CLIENT_ID = 'atrium-console';
// atrium:user: a first-party token acts as the signed-in user on every route (docs/oauth.md).
const SCOPE = 'openid profile email atrium:user';
const REDIRECT_URI = `${PUBLIC_URL}${BASE_PATH}/callback`;
const SIGNED_OUT_URI = `${PUBLIC_URL}${BASE_PATH}/signed-out`;
const PENDING_KEY = 'atrium-console.signin';
const REFRESH_MARGIN_MS = 60_000;

interface Tokens {
  access: string;
  refresh: string | undefined;
  idToken: string | undefined;
  expiresAt: number;
}

interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  id_token?: string;
  expires_in: number;
}

interface Pending {
  state: string;
  verifier: string;
  returnTo: string;
}

let tokens: Tokens | undefined;
let refreshing: Promise<Tokens> | undefined;

const base64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
const randomString = () => base64url(crypto.getRandomValues(new Uint8Array(32)));

/**
 * Sends the browser to the sign-in page; it comes back to /console/callback. `fresh` asks for a new
 * sign-in even while the browser's session lasts (changing second factors needs a recent one).
 */
export async function signIn(returnTo: string, loginHint?: string, options: { fresh?: boolean } = {}): Promise<never> {
  const pending: Pending = { state: randomString(), verifier: randomString(), returnTo };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const challenge = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier))));
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    state: pending.state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...(loginHint ? { login_hint: loginHint } : {}),
    ...(options.fresh ? { prompt: 'login', max_age: '0' } : {}),
  });
  location.assign(`${PUBLIC_URL}/oauth/authorize?${query}`);
  return new Promise<never>(() => {});
}

export class SignInError extends Error {}

async function tokenRequest(form: Record<string, string>): Promise<Tokens> {
  const response = await fetch(`${PUBLIC_URL}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: CLIENT_ID, ...form }),
  });
  const body = await response.json() as TokenResponse & { error?: string; error_description?: string };
  if (!response.ok) throw new SignInError(body.error_description ?? body.error ?? `The sign-in failed (${response.status})`);
  return { access: body.access_token, refresh: body.refresh_token, idToken: body.id_token ?? tokens?.idToken, expiresAt: Date.now() + body.expires_in * 1000 };
}

/** Redeems the authorization response at /console/callback; resolves to the path to go back to. */
export async function completeSignIn(url: URL): Promise<string> {
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as Pending | null;
  sessionStorage.removeItem(PENDING_KEY);
  const error = url.searchParams.get('error');
  if (error) throw new SignInError(url.searchParams.get('error_description') ?? error);
  const code = url.searchParams.get('code');
  if (!pending || !code || url.searchParams.get('state') !== pending.state) throw new SignInError('This sign-in response does not belong to a sign-in started here.');
  tokens = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: pending.verifier });
  return pending.returnTo;
}

/** A valid access token, refreshed when it is about to expire; signs in again when it cannot be. */
export async function accessToken(): Promise<string> {
  if (!tokens) return signIn(currentPath());
  if (tokens.expiresAt - Date.now() > REFRESH_MARGIN_MS) return tokens.access;
  const refreshToken = tokens.refresh;
  if (!refreshToken) return signIn(currentPath());
  refreshing ??= tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken }).finally(() => { refreshing = undefined; });
  try {
    tokens = await refreshing;
    return tokens.access;
  } catch {
    tokens = undefined;
    return signIn(currentPath());
  }
}

/** Ends the sign-in: revokes the refresh token, then ends the browser's session at the server. */
export async function signOut(): Promise<never> {
  const ended = tokens;
  tokens = undefined;
  if (ended?.refresh) {
    await fetch(`${PUBLIC_URL}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: CLIENT_ID, token: ended.refresh, token_type_hint: 'refresh_token' }),
    }).catch(() => undefined);
  }
  const query = new URLSearchParams({ client_id: CLIENT_ID, post_logout_redirect_uri: SIGNED_OUT_URI, ...(ended?.idToken ? { id_token_hint: ended.idToken } : {}) });
  location.assign(`${PUBLIC_URL}/oauth/logout?${query}`);
  return new Promise<never>(() => {});
}

/** The router path being shown (without /console), to come back to after signing in. */
export function currentPath(): string {
  return location.pathname.slice(BASE_PATH.length) + location.search || '/';
}

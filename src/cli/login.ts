// `atrium login`, `atrium whoami`, `atrium logout`: the CLI signs its user in through the server's
// own authorization server as the built-in public client `atrium-cli` (no registration needed).
//
// - Browser: a one-shot HTTP listener on 127.0.0.1 (ephemeral port) receives the authorization
//   code (RFC 8252 loopback redirect), with PKCE S256 and state.
// - `--device`: the device authorization grant (RFC 8628) for machines without a browser.
// Tokens go to the credential store (credentials.ts), one entry per server.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import * as oidc from 'openid-client';
import { ATRIUM_CLI_CLIENT_ID, ATRIUM_CLI_SCOPE } from '../modules/oauth/first-party.ts';
import { CredentialStore, NotSignedInError, resolveServer, serverKey, tokensFrom, UsageError, type StoredTokens } from './credentials.ts';

const LOGIN_TIMEOUT_MS = 5 * 60_000;


/** The authorization server of an Atrium server, from its discovery document. */
export async function discover(server: string): Promise<oidc.Configuration> {
  const url = new URL(serverKey(server));
  try {
    return await oidc.discovery(url, ATRIUM_CLI_CLIENT_ID, undefined, oidc.None(), {
      // Plain http is what a local server speaks (http://localhost:8000); anywhere else use https.
      ...(url.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
      timeout: 15,
    });
  } catch (error) {
    throw new Error(issuerMismatch(error) ?? `Cannot read the OAuth configuration of ${url.href}: ${describe(error)}`);
  }
}

/**
 * The message for a server whose discovery document names another issuer than the URL it was
 * reached at (http://127.0.0.1:8000 for a server whose ATRIUM_PUBLIC_URL is http://localhost:8000):
 * both values and the two settings that fix it. Undefined for any other error.
 */
export function issuerMismatch(error: unknown): string | undefined {
  const e = error as { code?: string; cause?: { attribute?: string; expected?: string; body?: { issuer?: unknown } } };
  if (e.code !== 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' || e.cause?.attribute !== 'issuer') return undefined;
  const expected = serverKey(String(e.cause.expected));
  const received = typeof e.cause.body?.issuer === 'string' ? e.cause.body.issuer : '(none)';
  return `Issuer mismatch: expected ${expected} (the URL you gave), received ${received} (the server's ATRIUM_PUBLIC_URL). `
    + `Use the server's public URL: --server ${received} or ATRIUM_URL=${received}; `
    + `or, if ${expected} is the right address, start the server with ATRIUM_PUBLIC_URL=${expected}.`;
}

function describe(error: unknown): string {
  const e = error as { error?: string; error_description?: string; message?: string; cause?: { message?: string; code?: string } };
  if (e.error) return e.error_description ? `${e.error}: ${e.error_description}` : e.error;
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message} (${cause})` : String(e.message ?? error);
}

export interface Output {
  write(text: string): void;
}

/** Best effort: the URL is printed anyway, for machines where no browser opens. */
function openBrowser(url: string): void {
  const [command, args] = process.platform === 'darwin' ? ['open', [url]]
    : process.platform === 'win32' ? ['cmd', ['/c', 'start', '""', url.replaceAll('&', '^&')]]
    : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no opener installed
  }
}

const DONE_PAGE = (message: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Atrium CLI</title><style>body{font-family:system-ui,sans-serif;margin:4rem auto;max-width:32rem;text-align:center}@media (prefers-color-scheme:dark){body{background:#111;color:#eee}}</style></head><body><h1>${message}</h1><p>You can close this tab and return to the terminal.</p></body></html>`;

/** Waits for the browser to come back to the loopback listener with our state. */
function awaitCallback(server: Server, redirectUri: string, state: string, timeoutMs: number): Promise<URL> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`No answer from the browser within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    server.on('request', (request, response) => {
      // Resolved against the registered redirect URI, not the Host header, so the token request
      // names exactly the redirect_uri of the authorization request.
      const url = new URL(request.url ?? '/', redirectUri);
      if (url.pathname !== '/callback') {
        response.writeHead(404).end();
        return;
      }
      // Anything on this machine can reach the listener; only the answer to our request counts.
      if (url.searchParams.get('state') !== state) {
        response.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end(DONE_PAGE('This sign-in answer was not expected'));
        return;
      }
      const failed = url.searchParams.has('error');
      response.writeHead(failed ? 400 : 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
        .end(DONE_PAGE(failed ? 'Sign-in did not complete' : 'Signed in to Atrium'));
      clearTimeout(timer);
      resolve(url);
    });
  });
}

export interface LoginOptions {
  server: string;
  /** The loopback listener's port (0 or absent: any free port). */
  port?: number | undefined;
  device?: boolean;
  openBrowser?: boolean;
  timeoutMs?: number;
  store?: CredentialStore;
  out?: Output;
}

async function browserLogin(config: oidc.Configuration, options: LoginOptions, out: Output): Promise<oidc.TokenEndpointResponse> {
  const listener = createServer();
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  try {
    const redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: ATRIUM_CLI_SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      // OpenID Connect grants offline_access (a refresh token that outlives the browser session)
      // only when consent is asked for explicitly.
      prompt: 'consent',
    });
    out.write(`Open this URL in your browser to sign in:\n\n  ${url.href}\n\nWaiting for the browser…\n`);
    if (options.openBrowser !== false) openBrowser(url.href);
    const callback = await awaitCallback(listener, redirectUri, state, options.timeoutMs ?? LOGIN_TIMEOUT_MS);
    return await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
  } finally {
    listener.closeAllConnections();
    listener.close();
  }
}

async function deviceLogin(config: oidc.Configuration, options: LoginOptions, out: Output): Promise<oidc.TokenEndpointResponse> {
  const started = await oidc.initiateDeviceAuthorization(config, { scope: ATRIUM_CLI_SCOPE });
  out.write(`To sign in, open\n\n  ${started.verification_uri}\n\nand enter the code\n\n  ${started.user_code}\n\n`);
  if (started.verification_uri_complete) out.write(`(or open ${started.verification_uri_complete})\n`);
  out.write(`Waiting for approval (the code expires in ${Math.round(started.expires_in / 60)} min)…\n`);
  return oidc.pollDeviceAuthorizationGrant(config, started, undefined, options.timeoutMs ? { signal: AbortSignal.timeout(options.timeoutMs) } : {});
}

interface ProfileBody { id: string; email: string; first_name: string; last_name: string }

async function fetchProfile(server: string, accessToken: string): Promise<{ status: number; profile?: ProfileBody }> {
  const response = await fetch(`${serverKey(server)}/accounts/profiles/me`, { headers: { authorization: `Bearer ${accessToken}` }, signal: AbortSignal.timeout(15_000) });
  if (!response.ok) return { status: response.status };
  return { status: response.status, profile: (await response.json()) as ProfileBody };
}

/** Signs in and stores the tokens; returns the signed-in profile. */
export async function login(options: LoginOptions): Promise<ProfileBody> {
  const out = options.out ?? process.stdout;
  const store = options.store ?? new CredentialStore();
  const config = await discover(options.server);
  const response = options.device ? await deviceLogin(config, options, out) : await browserLogin(config, options, out);
  const tokens = tokensFrom(response, ATRIUM_CLI_CLIENT_ID);
  store.save(options.server, tokens);
  const { profile, status } = await fetchProfile(options.server, tokens.access_token);
  if (!profile) throw new Error(`Signed in, but ${serverKey(options.server)}/accounts/profiles/me answered ${status}`);
  return profile;
}

/** New tokens for stored ones, with their refresh token. */
export async function refreshTokens(server: string, tokens: StoredTokens) {
  const config = await discover(server);
  return oidc.refreshTokenGrant(config, tokens.refresh_token!);
}

/** A valid access token for the server, refreshed when needed. */
export function accessTokenFor(server: string, store = new CredentialStore(), options: { force?: boolean } = {}): Promise<string> {
  return store.accessToken(server, (tokens) => refreshTokens(server, tokens), options);
}

/** The signed-in user's profile; a rejected token is refreshed once before giving up. */
export async function whoami(server: string, store = new CredentialStore()): Promise<ProfileBody> {
  let result = await fetchProfile(server, await accessTokenFor(server, store));
  if (result.status === 401) result = await fetchProfile(server, await accessTokenFor(server, store, { force: true }));
  if (result.status === 401) throw new NotSignedInError(`${serverKey(server)} no longer accepts the stored sign-in. Run: npx atrium login --server ${serverKey(server)}`);
  if (!result.profile) throw new Error(`${serverKey(server)}/accounts/profiles/me answered ${result.status}`);
  return result.profile;
}

/**
 * Revokes the refresh token at the server (which ends the sign-in there) and forgets the stored
 * tokens. The local copy is removed even when the server cannot be reached; the result says so.
 */
export async function logout(server: string, store = new CredentialStore()): Promise<{ signedIn: boolean; revoked: boolean; problem?: string }> {
  const tokens = store.get(server);
  if (!tokens) return { signedIn: false, revoked: false };
  let revoked = false;
  let problem: string | undefined;
  try {
    const config = await discover(server);
    if (tokens.refresh_token) await oidc.tokenRevocation(config, tokens.refresh_token, { token_type_hint: 'refresh_token' });
    revoked = true;
  } catch (error) {
    problem = describe(error);
  }
  store.delete(server);
  return { signedIn: true, revoked, ...(problem ? { problem } : {}) };
}

// ---------------------------------------------------------------------------------------------
// Commands for src/cli/main.ts.

const serverOption = { server: { type: 'string' } } as const;

/** The server a command talks to: --server, ATRIUM_URL, the one stored sign-in, ATRIUM_PUBLIC_URL, or localhost:8000. */
async function chooseServer(flag: string | undefined): Promise<string> {
  return resolveServer(flag);
}

async function reportErrors(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw error;
    process.stderr.write(`atrium: ${error instanceof NotSignedInError || error instanceof UsageError ? error.message : describe(error)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

export function loginCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { ...serverOption, device: { type: 'boolean', default: false }, 'no-browser': { type: 'boolean', default: false }, port: { type: 'string' } }, strict: true });
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!/^\d{1,5}$/.test(values.port!) || port > 65535)) {
    process.stderr.write(`atrium: --port must be a port number, got ${JSON.stringify(values.port)}\n`);
    return Promise.resolve(2);
  }
  return reportErrors(async () => {
    const server = await chooseServer(values.server);
    const profile = await login({ server, device: values.device, openBrowser: !values['no-browser'], port });
    process.stdout.write(`Signed in to ${serverKey(server)} as ${profile.email}\n`);
    return 0;
  });
}

export function whoamiCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { ...serverOption, json: { type: 'boolean', default: false } }, strict: true });
  return reportErrors(async () => {
    const server = await chooseServer(values.server);
    const profile = await whoami(server);
    if (values.json) process.stdout.write(`${JSON.stringify({ server: serverKey(server), ...profile })}\n`);
    else {
      const name = [profile.first_name, profile.last_name].filter(Boolean).join(' ');
      process.stdout.write(`${profile.email}${name ? ` (${name})` : ''}\nUser id: ${profile.id}\nServer:  ${serverKey(server)}\n`);
    }
    return 0;
  });
}

export function logoutCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: serverOption, strict: true });
  return reportErrors(async () => {
    const server = await chooseServer(values.server);
    const result = await logout(server);
    if (!result.signedIn) {
      process.stdout.write(`Not signed in to ${serverKey(server)}\n`);
      return 0;
    }
    if (!result.revoked) {
      process.stderr.write(`atrium: the server did not revoke the sign-in (${result.problem}); the local credentials are removed\n`);
      return 1;
    }
    process.stdout.write(`Signed out of ${serverKey(server)}\n`);
    return 0;
  });
}

/** `atrium token`: a fresh access token for scripts (`curl -H "authorization: Bearer $(atrium token)"`). */
export function tokenCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: serverOption, strict: true });
  return reportErrors(async () => {
    const server = await chooseServer(values.server);
    process.stdout.write(`${await accessTokenFor(server)}\n`);
    return 0;
  });
}

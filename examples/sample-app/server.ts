// Atrium sample app: the five steps of SPEC "OAuth sign-in flow (application side)".
//
//   1. An OAuth client for the project (created here through the API on first start).
//   2. The user signs in through Atrium: authorization code + PKCE (S256) with openid-client.
//   3. This backend decides which rooms the user may enter.
//   4. It mints a participant token for each of them with the project API key.
//   5. It shows the connection info (room URL + token) a room client would connect with.
//
// Run from the repository root:  ATRIUM_API_KEY=ma-… npm run sample-app
// Settings (environment): ATRIUM_URL, ATRIUM_API_KEY, ATRIUM_PROJECT_ID, ATRIUM_ROOMS_URL,
// SAMPLE_APP_PORT, SAMPLE_APP_URL, SAMPLE_APP_CLIENT_ID / SAMPLE_APP_CLIENT_SECRET,
// SAMPLE_APP_STATE, SAMPLE_APP_OPEN_ROOMS. See README.md next to this file.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import * as oidc from 'openid-client';

/**
 * Atrium answered discovery as another issuer than ATRIUM_URL (e.g. http://127.0.0.1:8000 for a
 * server whose public URL is http://localhost:8000): both values and the setting that fixes it.
 */
export function issuerMismatch(error: unknown): string | undefined {
  const e = error as { code?: string; cause?: { attribute?: string; expected?: string; body?: { issuer?: unknown } } };
  if (e.code !== 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' || e.cause?.attribute !== 'issuer') return undefined;
  const expected = String(e.cause.expected).replace(/\/+$/, '');
  const received = typeof e.cause.body?.issuer === 'string' ? e.cause.body.issuer : '(none)';
  return `Issuer mismatch: expected ${expected} (ATRIUM_URL of this app), received ${received} (Atrium's ATRIUM_PUBLIC_URL). `
    + `Set ATRIUM_URL=${received} for this app, or start Atrium with ATRIUM_PUBLIC_URL=${expected}.`;
}

interface Settings {
  atriumUrl: string;
  apiKey: string;
  projectId: string | undefined;
  roomsUrl: string | undefined;
  port: number;
  host: string;
  appUrl: string;
  clientId: string | undefined;
  clientSecret: string | undefined;
  stateFile: string;
  openRooms: string[];
}

function settingsFromEnv(env: NodeJS.ProcessEnv): Settings {
  const apiKey = env.ATRIUM_API_KEY;
  if (!apiKey) throw new Error('ATRIUM_API_KEY is required: a project API key (atrium bootstrap prints one)');
  const port = Number(env.SAMPLE_APP_PORT ?? 3000);
  const host = env.SAMPLE_APP_HOST ?? '127.0.0.1';
  return {
    atriumUrl: (env.ATRIUM_URL ?? env.ATRIUM_PUBLIC_URL ?? 'http://localhost:8000').replace(/\/+$/, ''),
    apiKey,
    projectId: env.ATRIUM_PROJECT_ID || undefined,
    roomsUrl: env.ATRIUM_ROOMS_URL?.replace(/\/+$/, '') || undefined,
    port,
    host,
    appUrl: (env.SAMPLE_APP_URL ?? `http://127.0.0.1:${port}`).replace(/\/+$/, ''),
    clientId: env.SAMPLE_APP_CLIENT_ID || undefined,
    clientSecret: env.SAMPLE_APP_CLIENT_SECRET || undefined,
    stateFile: env.SAMPLE_APP_STATE ?? join(import.meta.dirname, '.state', 'client.json'),
    openRooms: (env.SAMPLE_APP_OPEN_ROOMS ?? 'lobby').split(',').map((s) => s.trim()).filter(Boolean),
  };
}

// ---------------------------------------------------------------------------------------------
// The admin API, called with the project API key (server side only; the key never reaches a browser).

class AtriumError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

async function atrium<T>(settings: Settings, method: string, path: string, options: { json?: unknown; token?: string } = {}): Promise<T> {
  const response = await fetch(`${settings.atriumUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${options.token ?? settings.apiKey}`,
      ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: options.json !== undefined ? JSON.stringify(options.json) : null,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {
      // not JSON: keep the text
    }
    throw new AtriumError(response.status, `${method} ${path}: ${response.status} ${message}`);
  }
  return (text ? JSON.parse(text) : {}) as T;
}

interface StoredClient {
  atrium_url: string;
  project_id: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
}

/** The API key acts for exactly one project; ask Atrium which one unless it was given. */
async function resolveProject(settings: Settings): Promise<string> {
  if (settings.projectId) return settings.projectId;
  const { projects } = await atrium<{ projects: { id: string }[] }>(settings, 'GET', '/accounts/projects');
  if (projects.length !== 1) throw new Error('Set ATRIUM_PROJECT_ID: the API key does not name exactly one project');
  return projects[0]!.id;
}

/**
 * Step 1: the OAuth client. Given through the environment, or reused from the state file, or
 * created now (its secret is only shown at creation, so it is kept in the state file, mode 0600).
 */
async function ensureClient(settings: Settings, projectId: string): Promise<{ clientId: string; clientSecret: string; created: boolean }> {
  const redirectUri = `${settings.appUrl}/callback`;
  if (settings.clientId && settings.clientSecret) return { clientId: settings.clientId, clientSecret: settings.clientSecret, created: false };
  const clientsPath = `/accounts/projects/${projectId}/oauth/clients`;
  let stored: StoredClient | undefined;
  try {
    stored = JSON.parse(readFileSync(settings.stateFile, 'utf8')) as StoredClient;
  } catch {
    stored = undefined;
  }
  if (stored && stored.atrium_url === settings.atriumUrl && stored.project_id === projectId) {
    try {
      const client = await atrium<{ redirect_uris: string[] }>(settings, 'GET', `${clientsPath}/${stored.client_id}`);
      // The app may have moved (another port or host): register the new callback as well.
      if (!client.redirect_uris.includes(redirectUri)) {
        await atrium(settings, 'PUT', `${clientsPath}/${stored.client_id}`, { json: { redirect_uris: [...client.redirect_uris, redirectUri].slice(-20) } });
      }
      return { clientId: stored.client_id, clientSecret: stored.client_secret, created: false };
    } catch (error) {
      if (!(error instanceof AtriumError && error.status === 404)) throw error;
    }
  }
  const client = await atrium<{ client_id: string; client_secret: string }>(settings, 'POST', clientsPath, {
    json: {
      name: 'Atrium sample app',
      grant_types: ['authorization_code'],
      redirect_uris: [redirectUri],
      // Only what the app needs: the user's profile (who signed in) and their project role.
      scope: 'profile:read',
      metadata: { theme: 'auto' },
    },
  });
  mkdirSync(dirname(settings.stateFile), { recursive: true });
  const record: StoredClient = { atrium_url: settings.atriumUrl, project_id: projectId, client_id: client.client_id, client_secret: client.client_secret, redirect_uri: redirectUri };
  writeFileSync(settings.stateFile, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  chmodSync(settings.stateFile, 0o600);
  return { clientId: client.client_id, clientSecret: client.client_secret, created: true };
}

// ---------------------------------------------------------------------------------------------
// Sign-in state. Kept in memory: this is a single-process demo.

interface PendingLogin { state: string; verifier: string; expires: number }
interface User { id: string; email: string; name: string; role: string }
interface Session { user: User; expires: number }

const LOGIN_TTL_MS = 10 * 60_000;
const SESSION_TTL_MS = 8 * 3600_000;

function cookies(request: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out[part.slice(0, eq).trim()] = decodeURIComponent(part.slice(eq + 1).trim());
  }
  return out;
}

function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// ---------------------------------------------------------------------------------------------
// Steps 3–5.

// ApiScopes in the format of the official SDK (@meshagent/meshagent 0.39.9): a surface present with {} is granted with its
// defaults. Project admins and developers get everything (the SDK's ApiScope.full()); other users
// the SDK's ApiScope.userDefault().
const scopeOf = (surfaces: string[]) => Object.fromEntries(surfaces.map((k) => [k, {}]));
const USER_SCOPE = scopeOf(['livekit', 'queues', 'messaging', 'dataset', 'memory', 'sync', 'storage', 'containers', 'developer', 'agents', 'secrets', 'services']);
const FULL_SCOPE = scopeOf([...Object.keys(USER_SCOPE), 'llm', 'admin', 'tunnels']);

interface Room { id: string; name: string; permissions: Record<string, Record<string, unknown>> }
interface RoomChoice { name: string; why: string; scope: Record<string, unknown> }

/**
 * Step 3, this app's policy: admins and developers of the project may enter every room; anyone
 * signed in may enter the open rooms (SAMPLE_APP_OPEN_ROOMS); and a room whose initial permissions
 * name the user is theirs with the access those permissions give.
 */
export function chooseRooms(rooms: Room[], user: Pick<User, 'id' | 'role'>, openRooms: string[]): RoomChoice[] {
  const chosen: RoomChoice[] = [];
  for (const room of rooms) {
    const named = room.permissions[user.id];
    if (named) chosen.push({ name: room.name, why: 'the room permissions name you', scope: named });
    else if (user.role === 'admin' || user.role === 'developer') chosen.push({ name: room.name, why: `you are a project ${user.role}`, scope: FULL_SCOPE });
    else if (openRooms.includes(room.name)) chosen.push({ name: room.name, why: 'open to every signed-in user', scope: USER_SCOPE });
  }
  return chosen;
}

function roomUrl(settings: Settings, roomName: string): string {
  // The SDK's convention (websocketRoomUrl): the API URL with ws(s) and /rooms/<name>.
  const base = settings.roomsUrl ?? `${settings.atriumUrl.replace(/^http/, 'ws')}/rooms`;
  return `${base}/${encodeURIComponent(roomName)}`;
}

interface Connection { room_name: string; room_url: string; jwt: string; why: string; expires_at: string }

async function connectionsFor(settings: Settings, projectId: string, user: User): Promise<Connection[]> {
  const { rooms } = await atrium<{ rooms: Room[] }>(settings, 'GET', `/accounts/projects/${projectId}/rooms?limit=1000`);
  const chosen = chooseRooms(rooms, user, settings.openRooms);
  const ttl = 3600;
  // Step 4: one participant token per room, named after the user, minted with the API key.
  return Promise.all(chosen.map(async (room) => {
    const { token } = await atrium<{ token: string }>(settings, 'POST', `/accounts/projects/${projectId}/participant-tokens`, {
      json: {
        name: user.email,
        grants: [{ name: 'room', scope: room.name }, { name: 'role', scope: 'user' }, { name: 'api', scope: room.scope }],
        expires_in_seconds: ttl,
      },
    });
    return { room_name: room.name, room_url: roomUrl(settings, room.name), jwt: token, why: room.why, expires_at: new Date(Date.now() + ttl * 1000).toISOString() };
  }));
}

// ---------------------------------------------------------------------------------------------
// Pages.

const STYLE = `body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
code,pre{background:#f3f3f3;padding:.1rem .3rem;border-radius:4px}pre{padding:.6rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
ol li.done::marker{color:green}a.button{display:inline-block;padding:.5rem 1rem;background:#2b59c3;color:#fff;border-radius:6px;text-decoration:none}
@media (prefers-color-scheme: dark){body{background:#111;color:#eee}code,pre{background:#222}}`;

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

function steps(done: number): string {
  const names = ['An OAuth client is registered for the project', 'You sign in through Atrium', 'This app picks the rooms you may enter', 'It mints a participant token per room with its API key', 'It shows the connection info a room client uses'];
  return `<ol>${names.map((n, i) => `<li class="${i < done ? 'done' : ''}">${escapeHtml(n)}${i < done ? ' ✓' : ''}</li>`).join('')}</ol>`;
}

export interface SampleApp {
  url: string;
  clientId: string;
  clientCreated: boolean;
  projectId: string;
  close(): Promise<void>;
}

export async function startSampleApp(settings: Settings): Promise<SampleApp> {
  const projectId = await resolveProject(settings);
  const client = await ensureClient(settings, projectId);
  for (const name of settings.openRooms) {
    await atrium(settings, 'POST', `/accounts/projects/${projectId}/rooms`, { json: { name, if_not_exists: true } });
  }
  const redirectUri = `${settings.appUrl}/callback`;
  const secureCookies = settings.appUrl.startsWith('https:');
  const pending = new Map<string, PendingLogin>();
  const sessions = new Map<string, Session>();

  // Discovery happens on first use, so the app starts even while Atrium is still coming up.
  let configuration: Promise<oidc.Configuration> | undefined;
  const oauth = () => {
    configuration ??= oidc.discovery(new URL(settings.atriumUrl), client.clientId, undefined, oidc.ClientSecretBasic(client.clientSecret), {
      // Plain http is only for a local Atrium (the default http://localhost:8000).
      ...(settings.atriumUrl.startsWith('http:') ? { execute: [oidc.allowInsecureRequests] } : {}),
      timeout: 10,
    }).catch((error: unknown) => {
      configuration = undefined;
      throw new Error(issuerMismatch(error) ?? (error as Error).message, { cause: error });
    });
    return configuration;
  };

  const setCookie = (reply: ServerResponse, name: string, value: string, maxAgeMs: number) => {
    const attrs = [`${name}=${encodeURIComponent(value)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax', `Max-Age=${Math.floor(maxAgeMs / 1000)}`];
    if (secureCookies) attrs.push('Secure');
    const previous = reply.getHeader('set-cookie');
    reply.setHeader('set-cookie', [...(Array.isArray(previous) ? previous : previous ? [String(previous)] : []), attrs.join('; ')]);
  };
  const send = (reply: ServerResponse, status: number, html: string) => {
    reply.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer' });
    reply.end(html);
  };
  const redirect = (reply: ServerResponse, location: string) => {
    reply.writeHead(303, { location, 'cache-control': 'no-store' });
    reply.end();
  };
  const sessionOf = (request: IncomingMessage): [string, Session] | undefined => {
    const id = cookies(request).sample_session;
    const session = id ? sessions.get(id) : undefined;
    if (!id || !session) return undefined;
    if (session.expires < Date.now()) {
      sessions.delete(id);
      return undefined;
    }
    return [id, session];
  };

  async function home(request: IncomingMessage, reply: ServerResponse) {
    const found = sessionOf(request);
    if (!found) {
      send(reply, 200, page('Atrium sample app', `${steps(1)}<p>OAuth client <code>${escapeHtml(client.clientId)}</code> of project <code>${escapeHtml(projectId)}</code>.</p><p><a class="button" id="login" href="/login">Sign in with Atrium</a></p>`));
      return;
    }
    const { user } = found[1];
    const connections = await connectionsFor(settings, projectId, user);
    const list = connections.length === 0
      ? '<p>No room is open to you in this project.</p>'
      : connections.map((c) => `<section class="room"><h3>${escapeHtml(c.room_name)}</h3><p>Why: ${escapeHtml(c.why)}</p><p>Room URL: <code class="room-url">${escapeHtml(c.room_url)}</code></p><p>Participant token (expires ${escapeHtml(c.expires_at)}):</p><pre class="token">${escapeHtml(c.jwt)}</pre></section>`).join('');
    send(reply, 200, page('Atrium sample app', `${steps(5)}<p>Signed in as <strong id="user-email">${escapeHtml(user.email)}</strong> (${escapeHtml(user.name || user.id)}), project role: <code>${escapeHtml(user.role)}</code>. <a href="/logout">Sign out</a></p><h2>Your rooms</h2>${list}<p>A room client connects to the room URL with the token, e.g. with the SDK: <code>new WebSocketClientProtocol({ url, token })</code>. Rooms run on a room server, not in Atrium: until <code>ATRIUM_ROOMS_URL</code> points at one, the room URL answers 404 (see <code>docs/room-servers.md</code>).</p><p><a href="/api/rooms">The same as JSON</a></p>`));
  }

  async function login(reply: ServerResponse) {
    const config = await oauth();
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const id = randomBytes(24).toString('base64url');
    pending.set(id, { state, verifier, expires: Date.now() + LOGIN_TTL_MS });
    setCookie(reply, 'sample_login', id, LOGIN_TTL_MS);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'profile:read',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    redirect(reply, url.href);
  }

  async function callback(request: IncomingMessage, reply: ServerResponse) {
    const loginId = cookies(request).sample_login;
    const attempt = loginId ? pending.get(loginId) : undefined;
    if (loginId) pending.delete(loginId);
    setCookie(reply, 'sample_login', '', 0);
    // The token request's redirect_uri is this URL without its query: exactly the registered one.
    const current = new URL(redirectUri);
    current.search = new URL(request.url ?? '/', settings.appUrl).search;
    if (current.searchParams.get('error')) {
      send(reply, 400, page('Sign-in did not complete', `<p>Atrium answered <code>${escapeHtml(current.searchParams.get('error'))}</code>: ${escapeHtml(current.searchParams.get('error_description') ?? '')}</p><p><a href="/">Back</a></p>`));
      return;
    }
    if (!attempt || attempt.expires < Date.now()) {
      send(reply, 400, page('Sign-in expired', '<p>This sign-in was not started here or took too long.</p><p><a href="/login">Try again</a></p>'));
      return;
    }
    const config = await oauth();
    // Checks state, the iss parameter and PKCE; the code is redeemed with the client secret.
    const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: attempt.verifier, expectedState: attempt.state });
    const profile = await atrium<{ id: string; email: string; first_name?: string; last_name?: string }>(settings, 'GET', '/accounts/profiles/me', { token: tokens.access_token });
    let role = 'none';
    try {
      role = (await atrium<{ role: string }>(settings, 'GET', `/accounts/projects/${projectId}/role`, { token: tokens.access_token })).role;
    } catch (error) {
      // Not a member of the project: still signed in, with only the open rooms.
      if (!(error instanceof AtriumError && (error.status === 404 || error.status === 403))) throw error;
    }
    const sessionId = randomBytes(24).toString('base64url');
    const name = [profile.first_name, profile.last_name].filter(Boolean).join(' ');
    sessions.set(sessionId, { user: { id: profile.id, email: profile.email, name, role }, expires: Date.now() + SESSION_TTL_MS });
    setCookie(reply, 'sample_session', sessionId, SESSION_TTL_MS);
    redirect(reply, '/');
  }

  const server = createServer((request, reply) => {
    const path = new URL(request.url ?? '/', settings.appUrl).pathname;
    const handle = async () => {
      if (request.method !== 'GET') return send(reply, 405, page('Method not allowed', ''));
      switch (path) {
        case '/': return home(request, reply);
        case '/login': return login(reply);
        case '/callback': return callback(request, reply);
        case '/logout': {
          const found = sessionOf(request);
          if (found) sessions.delete(found[0]);
          setCookie(reply, 'sample_session', '', 0);
          return redirect(reply, '/');
        }
        case '/api/rooms': {
          const found = sessionOf(request);
          if (!found) {
            reply.writeHead(401, { 'content-type': 'application/json' });
            return reply.end(JSON.stringify({ error: { code: 'unauthorized', message: 'Sign in first' } }));
          }
          reply.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          return reply.end(JSON.stringify({ user: found[1].user, project_id: projectId, rooms: await connectionsFor(settings, projectId, found[1].user) }));
        }
        case '/healthz':
          reply.writeHead(200, { 'content-type': 'application/json' });
          return reply.end(JSON.stringify({ ok: true, client_id: client.clientId, project_id: projectId }));
        default:
          return send(reply, 404, page('Not found', '<p><a href="/">Home</a></p>'));
      }
    };
    handle().catch((error: unknown) => {
      process.stderr.write(`sample-app: ${request.method} ${path}: ${(error as Error).stack ?? String(error)}\n`);
      if (!reply.headersSent) send(reply, 502, page('Something went wrong', `<p>${escapeHtml((error as Error).message)}</p><p><a href="/">Home</a></p>`));
      else reply.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  return {
    url: settings.appUrl,
    clientId: client.clientId,
    clientCreated: client.created,
    projectId,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

if (import.meta.main) {
  try {
    const app = await startSampleApp(settingsFromEnv(process.env));
    process.stdout.write(`${app.clientCreated ? 'Created' : 'Using'} OAuth client ${app.clientId} in project ${app.projectId}\nSample app listening on ${app.url}\n`);
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void app.close().then(() => process.exit(0)));
  } catch (error) {
    process.stderr.write(`sample-app: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

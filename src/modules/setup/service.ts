// First run: while no account exists, whoever holds the setup token (printed by `atrium serve`)
// may create the first admin and their project. The token is derived from the service's secret
// key, so every instance sharing the key accepts the same one and nothing is stored; once an
// account exists the setup is gone, token or not.
import { hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { loadSecretKey } from '../../platform/crypto/secrets.ts';
import { apiError, conflict, forbidden, notFound } from '../../platform/http/errors.ts';
import { createProject } from '../projects/service.ts';
import { createUser, hasUsers, PASSWORD_MIN_LENGTH } from '../users/service.ts';
import type { AuditOrigin } from '../../platform/audit/log.ts';

/** The console page that takes the token. */
export const SETUP_PATH = '/console/setup';

/**
 * The cookie that carries the new admin from the setup form through the console's first sign-in:
 * they have just chosen their password, so the sign-in page does not ask for it again. Sent only to
 * the sign-in pages, readable by no script, and good for one sign-in within a few minutes.
 */
export const FIRST_RUN_COOKIE = 'atrium_first_run';
export const FIRST_RUN_COOKIE_PATH = '/interaction';
const FIRST_RUN_TTL_MS = 5 * 60_000;
const FIRST_RUN_PURPOSE = 'first-run sign-in';

export function setupToken(config: Pick<Config, 'secretKey' | 'dataDir'>): string {
  const master = loadSecretKey(config.secretKey, config.dataDir);
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'atrium first-run setup', 32)).toString('base64url');
}

/** The one-time link to print, or undefined once an account exists. */
export async function setupLink(ctx: AppContext): Promise<string | undefined> {
  if (await hasUsers(ctx.db)) return undefined;
  return `${ctx.config.publicUrl}${SETUP_PATH}?token=${setupToken(ctx.config)}`;
}

function checkToken(ctx: AppContext, token: string): void {
  const expected = Buffer.from(setupToken(ctx.config));
  const given = Buffer.from(token);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw forbidden('The setup token is not valid; use the link `atrium serve` printed');
}

/**
 * 403 for a wrong token, 404 once the setup is done, 409 while the admin it would create could not
 * sign in: the setup makes a password account, so refusing here, before the form, beats an admin
 * who meets "no sign-in method" on the next page.
 */
export async function checkSetup(ctx: AppContext, token: string): Promise<void> {
  checkToken(ctx, token);
  if (await hasUsers(ctx.db)) throw notFound('Setup (an account exists already)');
  if (!ctx.config.signin.passwordLogin) {
    throw conflict('The first admin signs in with the password chosen here, but password sign-in is off on this server (ATRIUM_PASSWORD_LOGIN=false). Set ATRIUM_PASSWORD_LOGIN=true and restart, or create the admin with `atrium bootstrap`');
  }
}

export interface SetupInput {
  token: string;
  email: string;
  password: string;
  first_name?: string | undefined;
  last_name?: string | undefined;
  project_name: string;
}

/** The Set-Cookie value that signs the admin the setup created in to the console's first sign-in. */
export function firstRunCookie(ctx: AppContext, userId: string): string {
  const sealed = ctx.secrets.encrypt(JSON.stringify({ purpose: FIRST_RUN_PURPOSE, userId, expiresAt: Date.now() + FIRST_RUN_TTL_MS }));
  const secure = ctx.config.publicUrl.startsWith('https:') ? '; Secure' : '';
  return `${FIRST_RUN_COOKIE}=${sealed}; Path=${FIRST_RUN_COOKIE_PATH}; Max-Age=${FIRST_RUN_TTL_MS / 1000}; HttpOnly; SameSite=Lax${secure}`;
}

/** The user a first-run cookie names while it is fresh; undefined for anything else. */
export function firstRunUser(ctx: AppContext, value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const ticket = JSON.parse(ctx.secrets.decrypt(value)) as { purpose?: unknown; userId?: unknown; expiresAt?: unknown };
    if (ticket.purpose !== FIRST_RUN_PURPOSE || typeof ticket.userId !== 'string' || typeof ticket.expiresAt !== 'number') return undefined;
    return ticket.expiresAt > Date.now() ? ticket.userId : undefined;
  } catch {
    return undefined;
  }
}

// Two submissions at once on this instance must not both find the database empty.
let running: Promise<unknown> = Promise.resolve();

/** The deployment's audit events of the first run (docs/audit-log.md). */
export const SETUP_EVENTS = { 'deployment.setup': 'The first-run setup created the first admin and their project' } as const;

export function runSetup(ctx: AppContext, input: SetupInput, origin: AuditOrigin): Promise<{ user_id: string; project_id: string }> {
  const setup = running.then(async () => {
    await checkSetup(ctx, input.token);
    if (input.password.length < PASSWORD_MIN_LENGTH) throw apiError('weak_password', { min: PASSWORD_MIN_LENGTH });
    const user = await createUser(ctx.db, {
      email: input.email.trim().toLowerCase(),
      password: input.password,
      firstName: input.first_name?.trim(),
      lastName: input.last_name?.trim(),
      emailVerified: true,
    });
    const project = await createProject(ctx.db, user.id, input.project_name.trim());
    ctx.log.info({ userId: user.id, projectId: project.id }, 'first-run setup created the first admin and project');
    await ctx.audit.write(ctx.db, {
      projectId: null, actor: { type: 'user', id: user.id, name: user.email, credentialKind: 'setup_token' },
      action: 'deployment.setup', target: { type: 'project', id: project.id }, outcome: 'succeeded', origin,
    });
    return { user_id: user.id, project_id: project.id };
  });
  running = setup.catch(() => undefined);
  return setup;
}

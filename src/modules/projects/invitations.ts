// Invitations: adding a member by an email address that has no account yet. The address gets a
// mail with a one-time link; opening it shows a form that creates the account (the link proves the
// address, so it is confirmed at once) and joins the project with the invited roles. Invitations
// are listed, resent (a new link, the old one stops working) and revoked, and they expire.
// Sending is rate-limited per address and per project like the sign-in mail.
import { randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import { hashSecret, secretMatches } from '../../platform/crypto/secrets.ts';
import { badRequest, notFound, tooManyRequests } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { isRole, type Role } from '../../platform/http/roles.ts';
import { createUser, findUserByEmail, findUserById, type UserRow } from '../users/service.ts';
import * as store from './store.ts';
import * as invitations from './invitations-store.ts';

export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

export function invitationView(row: invitations.InvitationRow, now = Date.now()) {
  return {
    id: row.id,
    email: row.email,
    roles: row.roles.filter(isRole),
    status: row.expiresAt.getTime() <= now ? 'expired' as const : 'pending' as const,
    sent_count: row.sentCount,
    last_sent_at: row.lastSentAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    created_at: row.createdAt.toISOString(),
  };
}

// Fixed windows per address and per project, like the sign-in mail (ATRIUM_SIGNIN_LIMIT_*); in this
// instance's memory.
interface Window { count: number; resetAt: number }
const limiters = new WeakMap<AppContext, LRUCache<string, Window>>();

function spendMailBudget(ctx: AppContext, projectId: string, email: string): void {
  const { perAccount, perIp, windowMs } = ctx.config.signin.limits;
  let windows = limiters.get(ctx);
  if (!windows) limiters.set(ctx, windows = new LRUCache({ max: 100_000, ttl: windowMs }));
  const now = Date.now();
  const keys: [string, number][] = [[`a:${email.toLowerCase()}`, perAccount], [`p:${projectId}`, perIp]];
  for (const [key, budget] of keys) {
    const window = windows.get(key);
    if (window && window.resetAt > now && window.count >= budget) throw tooManyRequests(Math.ceil((window.resetAt - now) / 1000));
  }
  for (const [key] of keys) {
    let window = windows.get(key);
    if (!window || window.resetAt <= now) windows.set(key, window = { count: 0, resetAt: now + windowMs });
    window.count += 1;
  }
}

function newLink(ctx: AppContext, id: string): { secretHash: Buffer; url: string } {
  const secret = randomBytes(32).toString('base64url');
  return { secretHash: hashSecret(secret), url: `${ctx.config.publicUrl}/signin/invitation?token=${id}.${secret}` };
}

/** Sends the mail; false when this server has no mail transport (the invitation waits for a resend). */
async function sendInvitation(ctx: AppContext, projectId: string, email: string, url: string, inviter: UserRow | undefined): Promise<boolean> {
  if (ctx.mail.transport === 'none') {
    ctx.log.warn({ projectId }, 'invitation recorded but not mailed: no mail transport (set ATRIUM_SMTP_URL, then resend it)');
    return false;
  }
  const project = await store.findProject(ctx.db, projectId);
  const by = inviter ? `${[inviter.firstName, inviter.lastName].filter(Boolean).join(' ') || inviter.email} invited you` : 'You are invited';
  await ctx.mail.send({
    to: email,
    subject: `Join ${project?.name ?? 'a project'} on Atrium`,
    text: `Hello,\n\n${by} to join the project "${project?.name ?? projectId}" on Atrium.\nOpen this link within ${INVITATION_TTL_MS / 86_400_000} days to create your account and join:\n\n${url}\n\nIf you did not expect this, ignore this email: nothing happens unless you open the link.\n`,
  });
  return true;
}

/** Invites an address without an account (or renews its pending invitation) and sends the link. */
export async function invite(ctx: AppContext, projectId: string, email: string, roles: Role[], invitedBy: string | undefined) {
  if (!(await store.findProject(ctx.db, projectId))) throw notFound('Project');
  spendMailBudget(ctx, projectId, email);
  const id = randomUUID();
  const link = newLink(ctx, id);
  const row = await invitations.upsertInvitation(ctx.db, {
    id, projectId, email, roles, secretHash: link.secretHash, invitedBy: invitedBy ?? null, expiresAt: new Date(Date.now() + INVITATION_TTL_MS),
  });
  // A renewed invitation keeps its id: the link names it.
  const url = row.id === id ? link.url : link.url.replace(`token=${id}.`, `token=${row.id}.`);
  const sent = await sendInvitation(ctx, projectId, row.email, url, invitedBy ? await findInviter(ctx, invitedBy) : undefined);
  return { ...invitationView(row), mail_sent: sent };
}

function findInviter(ctx: AppContext, userId: string): Promise<UserRow | undefined> {
  return findUserById(ctx.db, userId);
}

export async function listInvitations(ctx: AppContext, projectId: string, page: Page) {
  const { items, total } = await invitations.listInvitations(ctx.db, projectId, page);
  const now = Date.now();
  return { invitations: items.map((row) => invitationView(row, now)), total };
}

/** A new link and a fresh expiry; the previous link stops working. */
export async function resendInvitation(ctx: AppContext, projectId: string, id: string, by: string | undefined) {
  const current = await invitations.findInvitation(ctx.db, projectId, id);
  if (!current) throw notFound('Invitation');
  spendMailBudget(ctx, projectId, current.email);
  const link = newLink(ctx, id);
  const row = await invitations.renewInvitation(ctx.db, projectId, id, link.secretHash, new Date(Date.now() + INVITATION_TTL_MS));
  if (!row) throw notFound('Invitation');
  const sent = await sendInvitation(ctx, projectId, row.email, link.url, by ? await findInviter(ctx, by) : undefined);
  return { ...invitationView(row), mail_sent: sent };
}

export async function revokeInvitation(ctx: AppContext, projectId: string, id: string): Promise<void> {
  if (!(await invitations.deleteInvitation(ctx.db, projectId, id))) throw notFound('Invitation');
}

/** A member added at once (a known address) answers for its pending invitation too. */
export async function forgetInvitationsFor(ctx: AppContext, projectId: string, email: string): Promise<void> {
  await invitations.deleteInvitationsFor(ctx.db, projectId, email);
}

const TOKEN_RE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

/** The pending, unexpired invitation a link's token names; 404 for anything else (revoked, used, expired, forged). */
async function invitationOfToken(ctx: AppContext, token: string): Promise<invitations.InvitationRow> {
  const match = TOKEN_RE.exec(token);
  const row = match ? await invitations.findInvitationById(ctx.db, match[1]!) : undefined;
  if (!row || !secretMatches(match![2]!, row.secretHash) || row.expiresAt.getTime() <= Date.now()) throw notFound('Invitation (revoked, used, replaced by a newer link, or expired)');
  return row;
}

/** What the acceptance page shows: the project, the address, and whether it needs a password. */
export async function describeInvitation(ctx: AppContext, token: string) {
  const row = await invitationOfToken(ctx, token);
  const project = await store.findProject(ctx.db, row.projectId);
  if (!project) throw notFound('Invitation');
  const account = await findUserByEmail(ctx.db, row.email);
  return { project_id: project.id, project_name: project.name, email: row.email, roles: row.roles.filter(isRole), account_exists: account !== undefined, expires_at: row.expiresAt.toISOString() };
}

/**
 * Accepts: the address's account is created (confirmed: the link came to that mailbox) unless it
 * exists by now, it joins the project with the invited roles, and the invitation is used up.
 */
export async function acceptInvitation(ctx: AppContext, token: string, input: { password?: string | undefined; first_name?: string | undefined; last_name?: string | undefined }) {
  const row = await invitationOfToken(ctx, token);
  let user = await findUserByEmail(ctx.db, row.email);
  let created = false;
  if (!user) {
    if (!input.password) throw badRequest('password is required to create the account');
    user = await createUser(ctx.db, { email: row.email, password: input.password, firstName: input.first_name ?? '', lastName: input.last_name ?? '', emailVerified: true });
    created = true;
  }
  const userId = user.id;
  await ctx.db.transaction(async (tx) => {
    // Used once: a second accept of the same link finds nothing.
    if (!(await invitations.deleteInvitation(tx, row.projectId, row.id))) throw notFound('Invitation');
    if (!(await store.lockProject(tx, row.projectId))) throw notFound('Project');
    const current = (await store.memberRoles(tx, row.projectId, userId)) ?? [];
    await store.upsertMember(tx, row.projectId, userId, [...new Set([...current.filter(isRole), ...row.roles.filter(isRole)])]);
  });
  ctx.auth.forgetMembership(userId, row.projectId);
  return { project_id: row.projectId, user_id: userId, email: user.email, account_created: created };
}

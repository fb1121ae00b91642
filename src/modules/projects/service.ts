// Rules for projects and their members.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import type { Memberships, Principal } from '../../platform/http/auth.ts';
import { apiError, badRequest, conflict, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { applyLegacyFlags, effectiveRoles, isRole, legacyFlagsOf, primaryRole, PROJECT_ROLES, roleDescription, roleGroup, type LegacyFlags, type Role } from '../../platform/http/roles.ts';
import type { Db } from '../../platform/db/engine.ts';
import { findUserByEmail, findUserById, hasSecondFactor } from '../users/service.ts';
import { forgetInvitationsFor, invitationView, invite } from './invitations.ts';
import * as store from './store.ts';

// `atrium bootstrap` finds the project it made before by owner and name.
export { findProjectByOwnerAndName } from './store.ts';
// The invitee's side, for the invitation page among the sign-in pages (src/modules/oauth/signin/invitation.ts).
export { acceptInvitation, describeInvitation } from './invitations.ts';

export function projectView(project: store.ProjectRow) {
  return {
    id: project.id,
    name: project.name,
    owner_user_id: project.ownerUserId,
    project_key: Buffer.from(project.id.replaceAll('-', ''), 'hex').toString('base64url').replaceAll('-', '.'),
    settings: project.settings,
    enabled: project.enabled,
    admins_need_second_factor: project.adminsNeedSecondFactor,
    created_at: project.createdAt.toISOString(),
  };
}

/**
 * Membership lookups for the platform's auth hook and for other modules' rules. Where the project
 * or the deployment asks a second factor of admins, a member without one keeps the admin role but
 * cannot act with it: they act with their other roles, and an admin action says why it is refused.
 */
export function memberships(ctx: AppContext): Memberships {
  const { db } = ctx;
  const deploymentRequires = ctx.config.signin.adminsNeedSecondFactor;
  return {
    rolesOf: (userId, projectId) => store.memberRoles(db, projectId, userId),
    async accessOf(userId, projectId) {
      const member = await store.memberAccess(db, projectId, userId, deploymentRequires);
      if (!member) return undefined;
      if (!member.required || member.hasSecondFactor || !member.roles.includes('admin')) return { roles: member.roles };
      const others = member.roles.filter((role) => role !== 'admin');
      return { roles: others.length > 0 ? others : ['member'], withheld: { roles: ['admin'], refusal: ADMIN_NEEDS_SECOND_FACTOR } };
    },
    sharesProjectWithRole: (viewerId, userId, roles) => store.sharesProjectWithRole(db, viewerId, userId, roles),
  };
}

const ADMIN_NEEDS_SECOND_FACTOR = apiError('second_factor_required', 'This project requires its admins to have a second factor: add an authenticator app or a passkey on your account page, then try again');

/**
 * Turns the project's second-factor requirement for admins on or off. A user turning it on must
 * have a second factor already, or the change would take their own admin role away at once.
 */
export async function setSigninPolicy(ctx: AppContext, principal: Principal, projectId: string, adminsNeedSecondFactor: boolean): Promise<store.ProjectRow> {
  if (adminsNeedSecondFactor && principal.kind !== 'api_key' && principal.userId && !(await hasSecondFactor(ctx.db, principal.userId))) {
    throw conflict('Add a second factor to your own account before requiring one of the project\'s admins');
  }
  const project = await store.setAdminsNeedSecondFactor(ctx.db, projectId, adminsNeedSecondFactor);
  if (!project) throw notFound('Project');
  return project;
}

/** Creates a project owned by `ownerUserId`, who becomes its first admin. */
export async function createProject(db: Db, ownerUserId: string, name: string, settings: Record<string, unknown> = {}): Promise<store.ProjectRow> {
  return db.transaction(async (tx) => {
    const project = await store.insertProject(tx, { id: randomUUID(), name, ownerUserId, settings });
    await store.upsertMember(tx, project.id, ownerUserId, ['admin']);
    return project;
  });
}

export async function listProjects(ctx: AppContext, principal: Principal): Promise<store.ProjectRow[]> {
  if (principal.projectId) {
    const project = await store.findProject(ctx.db, principal.projectId);
    return project ? [project] : [];
  }
  return store.findProjectsOfUser(ctx.db, principal.userId!);
}

export async function getProject(db: Db, projectId: string): Promise<store.ProjectRow> {
  const project = await store.findProject(db, projectId);
  if (!project) throw notFound('Project');
  return project;
}

export async function replaceSettings(db: Db, projectId: string, settings: Record<string, unknown>): Promise<store.ProjectRow> {
  const project = await store.replaceSettings(db, projectId, settings);
  if (!project) throw notFound('Project');
  return project;
}

export function roleInfo(roles: ReadonlySet<Role>) {
  return { role: primaryRole(new Set(roles)), roles: [...roles], ...legacyFlagsOf(new Set(roles)) };
}

function directRolesFrom(current: readonly string[], input: { roles?: Role[] | undefined } & LegacyFlags): Role[] {
  const base = input.roles ?? current.filter(isRole);
  const roles = applyLegacyFlags(base, input);
  return roles.length > 0 ? roles : ['member'];
}

type MemberAddInput = { user_id?: string | undefined; email?: string | undefined; project_id?: string | undefined; roles?: Role[] | undefined } & LegacyFlags;

/**
 * Adds a member by user id, or by email: a known address is added at once, an unknown one is
 * invited (a mail with a link that creates the account and joins).
 */
export async function addMember(ctx: AppContext, projectId: string, input: MemberAddInput, invitedBy?: string): Promise<{ status: 'added'; user_id: string } | { status: 'invited'; invitation: ReturnType<typeof invitationView> }> {
  if (input.project_id !== undefined && input.project_id !== projectId) throw badRequest('body.project_id does not match the project in the path');
  if ((input.user_id === undefined) === (input.email === undefined)) throw badRequest('give either user_id or email');
  let userId = input.user_id;
  if (userId === undefined) {
    const email = input.email!.trim();
    if (!EMAIL_RE.test(email)) throw badRequest('email is not an email address');
    const user = await findUserByEmail(ctx.db, email);
    if (!user) return { status: 'invited', invitation: await invite(ctx, projectId, email, directRolesFrom([], input), invitedBy) };
    userId = user.id;
    await forgetInvitationsFor(ctx, projectId, email);
  } else if (!(await findUserById(ctx.db, userId))) throw notFound('User');
  const id = userId;
  await ctx.db.transaction(async (tx) => {
    if (!(await store.lockProject(tx, projectId))) throw notFound('Project');
    const current = (await store.memberRoles(tx, projectId, id)) ?? [];
    await store.upsertMember(tx, projectId, id, directRolesFrom(current, input));
    await guardLastAdmin(tx, projectId);
  });
  ctx.auth.forgetMembership(id, projectId);
  return { status: 'added', user_id: id };
}

const EMAIL_RE = /^[^\s@<>"(),;:]+@[^\s@<>"(),;:]+\.[^\s@<>"(),;:]+$/;

export async function updateMember(ctx: AppContext, projectId: string, userId: string, input: { roles?: Role[] | undefined } & LegacyFlags): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    if (!(await store.lockProject(tx, projectId))) throw notFound('Project');
    const current = await store.memberRoles(tx, projectId, userId);
    if (!current) throw notFound('Project user');
    await store.setMemberRoles(tx, projectId, userId, directRolesFrom(current, input));
    await guardLastAdmin(tx, projectId);
  });
  ctx.auth.forgetMembership(userId, projectId);
}

export async function removeMember(ctx: AppContext, projectId: string, userId: string): Promise<void> {
  await ctx.db.transaction(async (tx) => {
    if (!(await store.lockProject(tx, projectId))) throw notFound('Project');
    if (!(await store.deleteMember(tx, projectId, userId))) throw notFound('Project user');
    await guardLastAdmin(tx, projectId);
  });
  ctx.auth.forgetMembership(userId, projectId);
}

/** A project must keep one admin, or nobody could ever manage it again. Throwing rolls back. */
async function guardLastAdmin(db: Db, projectId: string): Promise<void> {
  if ((await store.countAdmins(db, projectId)) === 0) throw apiError('last_admin');
}

export async function listMembers(db: Db, projectId: string, page: Page) {
  const { items, total } = await store.listMembers(db, projectId, page);
  return {
    total,
    users: items.map(({ user, roles, addedAt, secondFactor }) => ({
      id: user.id,
      user_id: user.id,
      email: user.email,
      first_name: user.firstName,
      last_name: user.lastName,
      roles: roles.filter(isRole),
      ...legacyFlagsOf(effectiveRoles(roles)),
      second_factor: secondFactor,
      added_at: addedAt.toISOString(),
    })),
  };
}

/** Every project role in words, for role pickers (the console's, the CLI's). */
export function roleCatalogue() {
  return PROJECT_ROLES.map((name) => ({ name, description: roleDescription(name), group: roleGroup(name) }));
}

// Resource policies: who holds which roles on one resource. Grant, revoke and list direct bindings
// (the /policies/resources/… paths and the SDKs' /iam/…/policy paths share these rules), and the
// bindings the platform reads to decide what a caller may do (src/platform/http/authority.ts).
// Resource types come from the modules' descriptors (ctx.authority); this module knows none of them.
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import type { Db } from '../../platform/db/engine.ts';
import type { Principal, ProjectAccess } from '../../platform/http/auth.ts';
import { badRequest, notFound } from '../../platform/http/errors.ts';
import { openContinuation, sealContinuation } from '../../platform/http/lists.ts';
import type { PolicyBindings, Resource, ResourceType } from '../../platform/http/authority.ts';
import { isProjectApiKey } from '../api-keys/service.ts';
import { findUserByEmail } from '../users/service.ts';
import * as store from './store.ts';

/** The project usersets a subject can name: every member, or every developer, of the project. */
const USERSET_RELATIONS = ['member', 'developer'] as const;

export interface SubjectInput {
  type: string;
  id?: string | null | undefined;
  email?: string | null | undefined;
  object_type?: string | null | undefined;
  relation?: string | null | undefined;
}

/** The resource a policy route names, as its route step found it (the caller may read or change its policy). */
interface PolicyResource {
  type: ResourceType;
  key: store.ResourceKey;
  name: string;
}

function policyResource(type: ResourceType, projectId: string, resource: Resource): PolicyResource {
  return { type, key: { projectId, resourceType: type.type, resourceId: resource.id }, name: resource.name };
}

/** Who a subject is, checked against the project: members, its API keys, its usersets. */
async function resolveSubject(ctx: AppContext, principal: Principal, projectId: string, subject: SubjectInput): Promise<store.StoredSubject> {
  switch (subject.type) {
    case 'user': {
      let userId: string;
      if (subject.id === 'me') {
        if (!principal.userId) throw badRequest('subject.id "me" names the calling user; this credential is not a user');
        userId = principal.userId;
      } else if (subject.id) {
        if (!isUuid(subject.id)) throw badRequest('subject.id must be a user id, or "me"');
        userId = subject.id;
      } else if (subject.email) {
        const user = await findUserByEmail(ctx.db, subject.email);
        if (!user) throw notFound('Project user');
        userId = user.id;
      } else {
        throw badRequest('A user subject needs an id ("me" for yourself) or an email');
      }
      // Only the project's users can hold roles in it; anyone else answers like a missing user.
      if (!(await ctx.auth.memberships.rolesOf(userId, projectId))) throw notFound('Project user');
      return { type: 'user', key: userId, userId };
    }
    case 'service_account': {
      if (!subject.id) throw badRequest('A service account subject needs the id of one of the project\'s API keys');
      if (!isUuid(subject.id) || !(await isProjectApiKey(ctx.db, projectId, subject.id))) throw notFound('Service account');
      return { type: 'service_account', key: subject.id, apiKeyId: subject.id };
    }
    case 'userset': {
      if ((subject.object_type ?? 'project') !== 'project') throw badRequest('A userset subject names the project: object_type "project"');
      if (subject.id && subject.id !== projectId) throw badRequest('A userset subject names this project: its id must be the project id');
      const relation = USERSET_RELATIONS.find((r) => r === subject.relation);
      if (!relation) throw badRequest(`A userset subject needs relation ${USERSET_RELATIONS.map((r) => JSON.stringify(r)).join(' or ')}`);
      return { type: 'userset', key: relation };
    }
    default:
      // Agents act through their service account, which is what policies bind; their module says so.
      throw badRequest((subject.type === 'agent' ? ctx.authority.type('agent')?.withoutPolicy : undefined) ?? 'subject.type must be "user", "service_account" or "userset"');
  }
}

function checkRoles(resource: PolicyResource, roles: readonly string[]): string[] {
  const known = Object.keys(resource.type.policy!.roles);
  const unknown = roles.filter((r) => !known.includes(r));
  if (unknown.length > 0) throw badRequest(`${JSON.stringify(unknown[0])} is not a role of a ${resource.type.type}; its roles: ${known.join(', ')}`);
  return [...new Set(roles)];
}

function resourceView(resource: PolicyResource) {
  return { type: resource.type.type, id: resource.key.resourceId, name: resource.name };
}

interface SubjectDetails {
  email?: string | null;
  firstName?: string | null;
  lastName?: string | null;
}

function subjectView(projectId: string, type: store.SubjectType, key: string, details: SubjectDetails = {}) {
  if (type === 'userset') return { type, id: projectId, object_type: 'project', relation: key };
  if (type === 'user') return { type, id: key, email: details.email ?? null, first_name: details.firstName ?? null, last_name: details.lastName ?? null };
  return { type, id: key };
}

function grantView(resource: PolicyResource, subject: store.StoredSubject, roles: readonly string[]) {
  return { resource: resourceView(resource), subject: subjectView(resource.key.projectId, subject.type, subject.key), direct_roles: [...roles] };
}

export async function grant(ctx: AppContext, principal: Principal, access: ProjectAccess, type: ResourceType, found: Resource, input: { subject: SubjectInput; roles: string[] }) {
  const resource = policyResource(type, access.projectId, found);
  const roles = checkRoles(resource, input.roles);
  const subject = await resolveSubject(ctx, principal, access.projectId, input.subject);
  return grantView(resource, subject, await store.addRoles(ctx.db, resource.key, subject, roles));
}

/** Removes `roles` (all of them when absent) from the subject's binding; revoking what it lacks is no error. */
export async function revoke(ctx: AppContext, principal: Principal, access: ProjectAccess, type: ResourceType, found: Resource, input: { subject: SubjectInput; roles?: string[] | undefined } | null) {
  const resource = policyResource(type, access.projectId, found);
  if (!input) throw badRequest('body.subject is required: the subject whose roles to revoke');
  const revoked = input.roles ? checkRoles(resource, input.roles) : undefined;
  const subject = await resolveSubject(ctx, principal, access.projectId, input.subject);
  const remaining = await ctx.db.transaction(async (tx) => {
    const held = await store.lockRoles(tx, resource.key, subject);
    if (!held) return [];
    const left = revoked ? held.filter((r) => !revoked.includes(r)) : [];
    if (left.length === 0) await store.deleteBinding(tx, resource.key, subject);
    else await store.setRoles(tx, resource.key, subject, left);
    return left;
  });
  return grantView(resource, subject, remaining);
}

/** The direct bindings of one resource, a page at a time (`continuation_token` from the last page). */
export async function listGrants(ctx: AppContext, access: ProjectAccess, type: ResourceType, found: Resource, page: { page_size?: number | undefined; continuation_token?: string | undefined }) {
  const resource = policyResource(type, access.projectId, found);
  const scope = `policies:${access.projectId}:${resource.type.type}:${resource.key.resourceId}`;
  const after = page.continuation_token ? openContinuation<store.Position>(ctx.secrets, scope, page.continuation_token) : undefined;
  const size = page.page_size ?? 100;
  const rows = await store.listBindings(ctx.db, resource.key, size + 1, after);
  const items = rows.slice(0, size);
  const last = items.at(-1);
  return {
    resource: resourceView(resource),
    access_grants: items.map((row) => ({
      resource: resourceView(resource),
      subject: subjectView(access.projectId, row.subjectType, row.subjectKey, row),
      direct_roles: row.roles,
    })),
    continuation_token: rows.length > size && last ? sealContinuation(ctx.secrets, scope, { type: last.subjectType, key: last.subjectKey } satisfies store.Position) : null,
  };
}

/**
 * The bindings as the platform reads them for its decisions (src/platform/http/authority.ts): the
 * roles the caller holds on one resource through its policy — a user's own bindings and those of
 * the project usersets the user belongs to; an API key's bindings as a service account —, and the
 * resources of a type on which it holds some roles. Not cached, so a revocation holds from the next
 * request on.
 */
export function policyBindings(ctx: AppContext): PolicyBindings {
  return {
    async rolesOn(principal, access, resourceType, resourceId) {
      const subjects = subjectsOf(principal, access);
      if (subjects.length === 0) return new Set();
      return store.rolesOfSubjects(ctx.db, { projectId: access.projectId, resourceType, resourceId }, subjects);
    },
    async resourcesWithRoles(principal, access, resourceType, roles) {
      const subjects = subjectsOf(principal, access);
      if (subjects.length === 0) return [];
      return store.resourcesOfSubjects(ctx.db, access.projectId, resourceType, subjects, roles);
    },
  };
}

/** Who the caller is in policies: an API key as its service account; a user as themself and the project usersets they belong to. */
function subjectsOf(principal: Principal, access: ProjectAccess): Pick<store.StoredSubject, 'type' | 'key'>[] {
  if (principal.kind === 'api_key') return [{ type: 'service_account', key: principal.credentialId }];
  if (!principal.userId) return [];
  return [{ type: 'user', key: principal.userId }, ...USERSET_RELATIONS.filter((r) => access.roles.has(r)).map((key) => ({ type: 'userset' as const, key }))];
}

/** Drops every binding of a resource; its family calls this in the transaction that deletes it. */
export async function forgetResource(db: Db, projectId: string, resourceType: string, resourceId: string): Promise<void> {
  await store.deleteResourceBindings(db, { projectId, resourceType, resourceId });
}

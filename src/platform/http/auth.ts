// Authentication and authorization for every route, driven by the `auth` requirement each route
// declares in its config. Credential kinds plug in as verifiers (API keys, personal access tokens,
// OAuth access tokens), so the mechanism knows nothing about how a kind is stored.
//
// Hot path: a verified credential and a user's project roles are cached for a few seconds, so a
// request costs a cache hit, not a database round trip; revocation evicts locally at once and every
// other instance within the cache lifetime.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { LRUCache } from 'lru-cache';
import { ApiError, forbidden, notFound, unauthorized } from './errors.ts';
import { effectiveRoles, isRole, type Role } from './roles.ts';
import { isUuid } from '../crypto/credentials.ts';

export const CREDENTIAL_KINDS = ['api_key', 'user', 'oauth'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export interface Principal {
  kind: CredentialKind;
  /** Id of the credential itself (API key id, token id, OAuth grant id). */
  credentialId: string;
  /** The user acting (personal access tokens, OAuth tokens). */
  userId?: string | undefined;
  /** API keys and OAuth tokens act for one project only. */
  projectId?: string | undefined;
  /** An API key's roles; undefined means the key acts as a project admin. */
  keyRoles?: readonly Role[] | undefined;
  /** OAuth scopes granted to the token. */
  scopes?: ReadonlySet<string> | undefined;
  clientId?: string | undefined;
  /** Human-readable identity (email, key name) used as participant name. */
  name: string;
}

export interface ProjectAccess {
  projectId: string;
  roles: ReadonlySet<Role>;
}

/**
 * What a route requires. `permission` is 'public' (no credential), 'authenticated' (any accepted
 * credential, no project), or a project role, which makes `:project_id` mandatory and checks the
 * caller's roles in that project. OAuth tokens are accepted only by routes naming the scope needed.
 *
 * `project` says where a project role is checked: the path's `:project_id` (the default), the
 * credential's own project (`'credential'`, for protocol endpoints whose paths a standard client fixes,
 * like OTLP's `/v1/traces`: only API keys, which act for exactly one project, are accepted there), or
 * a lookup on the validated request (a `ProjectLookup`, e.g. the project owning a domain).
 */
export interface AuthRequirement {
  permission: 'public' | 'authenticated' | Role;
  credentials?: readonly CredentialKind[];
  oauthScope?: string;
  project?: 'path' | 'credential' | ProjectLookup;
}

/**
 * How a route that has no `:project_id` finds the project it acts in from its validated params and
 * query (an ingress asks which project owns a domain). The caller must hold the route's role there.
 * No project, and a project the caller cannot see, both answer the same 404 (`<what> not found`),
 * so that the lookup tells outsiders nothing.
 */
export interface ProjectLookup {
  what: string;
  resolve(request: FastifyRequest): Promise<string | undefined>;
}

export const DEFAULT_CREDENTIALS: readonly CredentialKind[] = ['api_key', 'user'];

export interface CredentialVerifier {
  kind: CredentialKind;
  /** Cheap syntactic check: does this token look like this kind? */
  matches(token: string): boolean;
  /** Full verification; undefined when the credential is unknown, expired or revoked. */
  verify(token: string): Promise<Principal | undefined>;
}

/**
 * Project membership as the platform needs it, provided by the module that owns projects (so that
 * other modules ask the platform, not that module's store).
 */
export interface Memberships {
  /** A user's direct roles in a project, or undefined when not a member. */
  rolesOf(userId: string, projectId: string): Promise<readonly string[] | undefined>;
  /** Whether `userId` is a member of some project where `viewerId` holds one of `roles`. */
  sharesProjectWithRole(viewerId: string, userId: string, roles: readonly string[]): Promise<boolean>;
}

const NO_MEMBERSHIPS: Memberships = { rolesOf: async () => undefined, sharesProjectWithRole: async () => false };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRequirement;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
    access: ProjectAccess | undefined;
  }
}

interface CachedPrincipal { principal: Principal }
interface CachedRoles { roles: readonly string[] | undefined }

export class Auth {
  readonly #verifiers: CredentialVerifier[] = [];
  readonly #credentials: LRUCache<string, CachedPrincipal>;
  readonly #roleCache: LRUCache<string, CachedRoles>;
  #memberships: Memberships = NO_MEMBERSHIPS;

  constructor(cacheMs: number) {
    this.#credentials = new LRUCache({ max: 50_000, ttl: Math.max(cacheMs, 1) });
    this.#roleCache = new LRUCache({ max: 50_000, ttl: Math.max(cacheMs, 1) });
  }

  addVerifier(verifier: CredentialVerifier): void {
    this.#verifiers.push(verifier);
  }

  setMemberships(memberships: Memberships): void {
    this.#memberships = memberships;
  }

  /** Membership queries, uncached (for rules other than the hot path of the auth hook). */
  get memberships(): Memberships {
    return this.#memberships;
  }

  async authenticate(token: string): Promise<Principal | undefined> {
    const cached = this.#credentials.get(token);
    if (cached) return cached.principal;
    const verifier = this.#verifiers.find((v) => v.matches(token));
    const principal = verifier ? await verifier.verify(token) : undefined;
    if (principal) this.#credentials.set(token, { principal });
    return principal;
  }

  /** Drops a revoked credential from this instance's cache at once. */
  forgetCredential(credentialId: string): void {
    for (const [token, entry] of this.#credentials.entries()) {
      if (entry.principal.credentialId === credentialId) this.#credentials.delete(token);
    }
  }

  forgetMembership(userId: string, projectId: string): void {
    this.#roleCache.delete(`${userId}:${projectId}`);
  }

  async directRoles(userId: string, projectId: string): Promise<readonly string[] | undefined> {
    const key = `${userId}:${projectId}`;
    const cached = this.#roleCache.get(key);
    if (cached) return cached.roles;
    const roles = await this.#memberships.rolesOf(userId, projectId);
    this.#roleCache.set(key, { roles });
    return roles;
  }

  /** The caller's roles in a project; a project the caller cannot see is "not found". */
  async projectAccess(principal: Principal, projectId: string): Promise<ProjectAccess> {
    if (!isUuid(projectId)) throw notFound('Project');
    if (principal.projectId !== undefined && principal.projectId !== projectId) throw notFound('Project');
    if (principal.kind === 'api_key') {
      return { projectId, roles: effectiveRoles(principal.keyRoles ?? ['admin']) };
    }
    const direct = principal.userId ? await this.directRoles(principal.userId, projectId) : undefined;
    if (!direct) throw notFound('Project');
    return { projectId, roles: effectiveRoles(direct) };
  }
}

/** The credential of an `Authorization: Bearer …` header, if the request carries one. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export function validateAuthRequirement(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): string | undefined {
  const auth = (route.config as { auth?: AuthRequirement } | undefined)?.auth;
  const name = `${String(route.method)} ${route.url}`;
  if (!auth) return `${name} declares no auth requirement`;
  const { permission, credentials = DEFAULT_CREDENTIALS, oauthScope, project = 'path' } = auth;
  if (permission !== 'public' && permission !== 'authenticated' && !isRole(permission)) return `${name} has unknown permission ${permission}`;
  if (project === 'credential') {
    if (!isRole(permission)) return `${name} takes its project from the credential but needs no project role`;
    if (route.url.includes(':project_id')) return `${name} takes its project from the credential and from the path`;
    if (credentials.length !== 1 || credentials[0] !== 'api_key') return `${name} takes its project from the credential, which only API keys name`;
  } else if (project !== 'path') {
    if (!isRole(permission) || route.url.includes(':project_id')) return `${name}: a project lookup is for a role on a route without :project_id`;
  } else if (isRole(permission) && !route.url.includes(':project_id')) return `${name} needs a project role but has no :project_id`;
  if (credentials.includes('oauth') !== Boolean(oauthScope)) return `${name}: OAuth tokens are accepted exactly when an oauthScope is named`;
  return undefined;
}

/** Installs the hook that enforces each route's declared requirement before its body is parsed. */
export function installAuth(app: FastifyInstance, auth: Auth): void {
  app.decorateRequest('principal', undefined);
  app.decorateRequest('access', undefined);
  app.addHook('onRequest', async (request) => {
    const requirement = request.routeOptions.config.auth;
    if (!requirement || requirement.permission === 'public') return;
    const token = bearerToken(request);
    if (!token) throw unauthorized();
    const principal = await auth.authenticate(token);
    if (!principal) throw unauthorized('The bearer credential is invalid, expired or revoked');
    const accepted = requirement.credentials ?? DEFAULT_CREDENTIALS;
    if (!accepted.includes(principal.kind)) throw forbidden(`This endpoint does not accept ${principal.kind.replace('_', ' ')} credentials`);
    if (principal.kind === 'oauth' && !principal.scopes?.has(requirement.oauthScope!)) {
      throw forbidden(`The access token lacks the ${requirement.oauthScope} scope`);
    }
    request.principal = principal;
    // A project looked up from the request is found once the request is validated (preHandler below).
    const project = requirement.project ?? 'path';
    if (requirement.permission === 'authenticated' || typeof project === 'object') return;
    const projectId = project === 'credential' ? principal.projectId! : (request.params as Record<string, string>).project_id!;
    request.access = checkRole(await auth.projectAccess(principal, projectId), requirement.permission);
  });
  app.addHook('preHandler', async (request) => {
    const requirement = request.routeOptions.config.auth;
    if (typeof requirement?.project !== 'object' || requirement.permission === 'public' || requirement.permission === 'authenticated') return;
    const { what, resolve } = requirement.project;
    const projectId = await resolve(request);
    if (projectId === undefined) throw notFound(what);
    const access = await auth.projectAccess(request.principal!, projectId).catch((error: unknown) => {
      throw error instanceof ApiError && error.code === 'not_found' ? notFound(what) : error;
    });
    request.access = checkRole(access, requirement.permission);
  });
}

function checkRole(access: ProjectAccess, role: Role): ProjectAccess {
  if (!access.roles.has(role)) throw forbidden(`This requires the ${role} role in the project`);
  return access;
}

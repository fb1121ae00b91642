// Authentication and authorization for every route, driven by the `auth` requirement each route
// declares in its config. Credential kinds plug in as verifiers (API keys, personal access tokens,
// OAuth access tokens, participant tokens), so the mechanism knows nothing about how a kind is stored.
//
// Hot path: a verified credential and a user's project roles are cached for a few seconds, so a
// request costs a cache hit, not a database round trip; revocation evicts locally at once and every
// other instance within the cache lifetime.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { LRUCache } from 'lru-cache';
import { ApiError, forbidden, notFound, unauthorized } from './errors.ts';
import { effectiveRoles, isRole, type Role } from './roles.ts';
import { isUuid } from '../crypto/credentials.ts';

export const CREDENTIAL_KINDS = ['api_key', 'user', 'oauth', 'participant'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

export interface Principal {
  kind: CredentialKind;
  /** Id of the credential itself (API key id, token id, OAuth grant id). */
  credentialId: string;
  /** The user acting (personal access tokens, OAuth tokens). */
  userId?: string | undefined;
  /** API keys, participant tokens and OAuth tokens of a project's client act for one project only. */
  projectId?: string | undefined;
  /**
   * The roles of a credential bound to one project: an API key's (undefined: the key acts as a
   * project admin), or what a participant token's grants amount to.
   */
  keyRoles?: readonly Role[] | undefined;
  /** A participant token's grants, `{name, scope}` as the SDK writes them. */
  grants?: readonly { name: string; scope: unknown }[] | undefined;
  /** The API key that signed a participant token: the token may do no more than the key. */
  signer?: Principal | undefined;
  /** OAuth scopes granted to the token. */
  scopes?: ReadonlySet<string> | undefined;
  clientId?: string | undefined;
  /** When the user signed in (epoch seconds), for credentials that come from a sign-in (OAuth tokens). */
  authTime?: number | undefined;
  /** Human-readable identity (email, key name) used as participant name. */
  name: string;
}

export interface ProjectAccess {
  projectId: string;
  roles: ReadonlySet<Role>;
  /** Roles the caller holds but may not act with now, and the error that says why. */
  withheld?: Withheld | undefined;
}

/** Roles a member holds but may not use until they meet a project's policy (e.g. a second factor). */
export interface Withheld {
  roles: readonly string[];
  refusal: ApiError;
}

/** What a member may act with in a project. */
export interface MemberAccess {
  roles: readonly string[];
  withheld?: Withheld | undefined;
}

/**
 * What a route requires. `permission` is 'public' (no credential), 'authenticated' (any accepted
 * credential, no project), or a project role, which makes `:project_id` mandatory and checks the
 * caller's roles in that project. OAuth tokens are accepted only by routes naming the scope needed.
 *
 * `project` says where a project role is checked: the path's `:project_id` (the default), the
 * credential's own project (`'credential'`, for protocol endpoints whose paths a standard client fixes,
 * like OTLP's `/v1/traces`: only API keys, which act for exactly one project, are accepted there),
 * headers naming it (`ProjectHeaders`), or a lookup on the validated request (a `ProjectLookup`, e.g.
 * the project owning a domain).
 */
export interface AuthRequirement {
  permission: 'public' | 'authenticated' | Role;
  credentials?: readonly CredentialKind[];
  oauthScope?: string;
  project?: 'path' | 'credential' | ProjectHeaders | ProjectLookup;
  /** Headers that may carry the credential itself instead of `Authorization: Bearer` (e.g. `x-api-key`). */
  credentialHeaders?: readonly string[];
  /**
   * The action the route takes on one resource, decided after the project role by the resource
   * types the modules declare (src/platform/http/authority.ts): `{type: 'feed', param: 'feed_id',
   * action: 'publish'}` is the action `feed.publish` on the feed the path names.
   */
  resource?: ResourceRequirement;
  /**
   * The action the caller must itself be allowed on the resource the request binds its own to — the
   * room a service runs in, the feed a logger publishes into — beside the project role. The handler
   * decides it once it knows which resource that is (named by the path or the body, or the one a
   * resource being changed is bound to: `Authority.requireWithin`); the declaration is what the API
   * reference and docs/permissions.md show, and nothing else is required.
   */
  within?: WithinRequirement;
}

/** What `AuthRequirement.within` asks: an action on one resource of a type (`{type: 'room', action: 'connect'}`). */
export interface WithinRequirement {
  readonly type: string;
  readonly action: string;
}

/**
 * What a route takes on which resource: the type (or the path parameter naming it, for routes of
 * every type), the action, and where the request names the resource — a path parameter holding its
 * id (or its name, `by: 'name'`), or a function of the validated request returning its name
 * (undefined: this request names no resource of the type, and the route's project role decides).
 */
export interface ResourceRequirement {
  readonly type: string | { readonly param: string };
  readonly action: string;
  readonly param?: string;
  readonly by?: 'id' | 'name';
  readonly from?: (request: FastifyRequest) => string | undefined;
}

/**
 * Headers naming the project of a route without `:project_id` (the first one present wins), for
 * protocol endpoints whose clients send one (the LLM proxy). A credential bound to one project (API
 * key, participant token) may leave them out; OAuth tokens and personal tokens must send one.
 */
export interface ProjectHeaders {
  headers: readonly string[];
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
  /**
   * The roles a member may act with now, and those withheld by a project policy; undefined when not
   * a member. Without it, a member acts with every role `rolesOf` names.
   */
  accessOf?(userId: string, projectId: string): Promise<MemberAccess | undefined>;
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

/**
 * The caller of a route that declares a credential (any permission but `public`): the auth hook has
 * verified it before the handler runs. A route declared `public` has none, and asking for it there is
 * a mistake in the route, reported as such on its first request (every route is walked by the tests).
 */
export function callerOf(request: FastifyRequest): Principal {
  const { principal } = request;
  if (principal === undefined) throw new Error(`${request.method} ${request.routeOptions.url} asks for its caller, but declares no credential (permission ${declaredPermission(request)})`);
  return principal;
}

/**
 * The caller's access in the route's project, for a route that declares a project role: the auth
 * hook has checked the role in that project before the handler runs.
 */
export function accessOf(request: FastifyRequest): ProjectAccess {
  const { access } = request;
  if (access === undefined) throw new Error(`${request.method} ${request.routeOptions.url} asks for its project access, but declares no project role (permission ${declaredPermission(request)})`);
  return access;
}

const declaredPermission = (request: FastifyRequest) => (request.routeOptions.config as { auth?: AuthRequirement } | undefined)?.auth?.permission ?? 'none';

interface CachedPrincipal { principal: Principal }
interface CachedRoles { access: MemberAccess | undefined }

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
    // Kinds may look alike (OAuth access tokens and participant tokens are both JWTs): the first
    // verifier that accepts the token decides.
    for (const verifier of this.#verifiers) {
      if (!verifier.matches(token)) continue;
      const principal = await verifier.verify(token);
      if (principal) {
        this.#credentials.set(token, { principal });
        return principal;
      }
    }
    return undefined;
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

  async directRoles(userId: string, projectId: string): Promise<MemberAccess | undefined> {
    const key = `${userId}:${projectId}`;
    const cached = this.#roleCache.get(key);
    if (cached) return cached.access;
    const memberships = this.#memberships;
    const access = memberships.accessOf
      ? await memberships.accessOf(userId, projectId)
      : await memberships.rolesOf(userId, projectId).then((roles) => roles && { roles });
    this.#roleCache.set(key, { access });
    return access;
  }

  /** The caller's roles in a project; a project the caller cannot see is "not found". */
  async projectAccess(principal: Principal, projectId: string): Promise<ProjectAccess> {
    if (!isUuid(projectId)) throw notFound('Project');
    if (principal.projectId !== undefined && principal.projectId !== projectId) throw notFound('Project');
    if (principal.kind === 'api_key') {
      return { projectId, roles: effectiveRoles(principal.keyRoles ?? ['admin']) };
    }
    if (principal.kind === 'participant') return { projectId, roles: effectiveRoles(principal.keyRoles ?? []) };
    const member = principal.userId ? await this.directRoles(principal.userId, projectId) : undefined;
    if (!member) throw notFound('Project');
    return { projectId, roles: effectiveRoles(member.roles), withheld: member.withheld };
  }
}

/**
 * The credential of an `Authorization: Bearer …` header, if the request carries one, else of the
 * first of `credentialHeaders` present.
 */
export function bearerToken(request: FastifyRequest, credentialHeaders: readonly string[] = []): string | undefined {
  const header = request.headers.authorization;
  if (header) return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  for (const name of credentialHeaders) {
    const value = request.headers[name];
    if (typeof value === 'string' && /^\S+$/.test(value.trim())) return value.trim();
  }
  return undefined;
}

/** The project named by one of `headers`, or else the credential's own (never an OAuth token's). */
function projectFromHeaders(request: FastifyRequest, principal: Principal, headers: readonly string[]): string {
  const named = headers.map((name) => request.headers[name]).find((value): value is string => typeof value === 'string' && value !== '');
  if (named !== undefined) return named.trim();
  if (principal.projectId !== undefined && principal.kind !== 'oauth') return principal.projectId;
  throw unauthorized(`The ${headers[0]} header must name the project`);
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
  } else if (typeof project === 'object') {
    if ('headers' in project && project.headers.length === 0) return `${name} names no project header`;
    if (!isRole(permission) || route.url.includes(':project_id')) return `${name}: a project found from the request (a lookup or headers) is for a role on a route without :project_id`;
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
    const token = bearerToken(request, requirement.credentialHeaders ?? []);
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
    if (requirement.permission === 'authenticated' || isLookup(project)) return;
    const projectId = project === 'path' ? (request.params as Record<string, string>).project_id!
      : project === 'credential' ? principal.projectId!
        : projectFromHeaders(request, principal, project.headers);
    // Kept on a refused request too: the audit log records refusals of callers acting in the project.
    request.access = await auth.projectAccess(principal, projectId);
    checkRole(request.access, requirement.permission);
  });
  // A project looked up from the validated request: only the routes that declare a lookup get the
  // hook, so every other request skips it.
  app.addHook('onRoute', (route) => {
    const requirement = (route.config as { auth?: AuthRequirement } | undefined)?.auth;
    const project = requirement?.project;
    if (!requirement || !isLookup(project) || !isRole(requirement.permission)) return;
    const { permission } = requirement;
    const { what, resolve } = project;
    const lookup = async (request: FastifyRequest) => {
      const projectId = await resolve(request);
      if (projectId === undefined) throw notFound(what);
      const access = await auth.projectAccess(callerOf(request), projectId).catch((error: unknown) => {
        throw error instanceof ApiError && error.code === 'not_found' ? notFound(what) : error;
      });
      request.access = access;
      checkRole(access, permission);
    };
    route.preHandler = [...[route.preHandler ?? []].flat(), lookup];
  });
}

function isLookup(project: AuthRequirement['project']): project is ProjectLookup {
  return typeof project === 'object' && 'resolve' in project;
}

function checkRole(access: ProjectAccess, role: Role): ProjectAccess {
  if (access.roles.has(role)) return access;
  // A role the caller holds but may not use yet says why, rather than that it is missing.
  if (access.withheld && effectiveRoles(access.withheld.roles).has(role)) throw access.withheld.refusal;
  throw forbidden(`This requires the ${role} role in the project`);
}

// Who may do what to one resource, decided in one place. Each family declares its resource types in
// its module descriptor (`resources`): the actions on a resource and the project roles that allow
// each everywhere, the roles of its resource policy and the actions each allows, what the resource's
// own settings open to every member, which participant-token grants name it, and what a token for it
// may carry. A route names the action it takes (`auth.resource`), and the step installed here decides
// before the handler runs, from those tables: the caller's project roles, its roles on the resource's
// policy, and the grants of its credential — for a participant token never more than its signer may
// do. The same `Authority` answers the rights lists the console reads, list visibility, and the scope
// of every token a caller mints. A route that binds its resource to another one (the room a service
// runs in, the feed a logger publishes into) declares what its caller must be allowed there
// (`auth.within`); the handler asks it once it knows which one that is (`requireWithin`).
//
// Every declared action has a stable name, `<resource type>.<action>` (`feed.publish`), and each
// decision of the step is kept on the request (`decisionOf`): allowed or refused, and why.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { Db } from '../db/engine.ts';
import type { AuthRequirement, Principal, ProjectAccess, ResourceRequirement, WithinRequirement } from './auth.ts';
import { ApiError, badRequest, forbidden, notFound } from './errors.ts';
import { effectiveRoles, isRole, type Role } from './roles.ts';

/** What a lookup finds: the resource's id and name, and whatever else its family keeps on it. */
export interface Resource {
  readonly id: string;
  readonly name: string;
}

/** The scope of a token grant: the surfaces of a participant token's `api` grant (an ApiScope). */
export type Scope = Readonly<Record<string, unknown>>;

export interface ResourceAction {
  /** What the action lets its holder do, in words (docs/permissions.md, the API reference). */
  readonly description: string;
  /** The project roles that allow it on every resource of the type (any one of them). */
  readonly roles: readonly Role[];
}

/** What a resource's own settings give a caller without a project role for it (a feed every member sees). */
export interface OpenAccess<R> {
  /** To whom, in words: "every member, for a feed of visibility project or public". */
  readonly description: string;
  /** The actions it may open (the docs say so). */
  readonly actions: readonly string[];
  /** Only for callers holding no role on the resource's policy: a binding, even `list`, decides for its subject. */
  readonly unlessBound?: boolean;
  /** The actions, and the token scope, this resource opens to this caller; undefined for none. */
  of(resource: R, principal: Principal): { actions: readonly string[]; token?: Scope | undefined } | undefined;
}

/** A participant-token grant that names resources of a type (`{"name": "feed", "scope": "<id or name>"}`). */
export interface NamingGrant<R> {
  readonly description: string;
  /** The actions a grant naming the resource admits: never more than the token's signer may take. */
  readonly actions: readonly string[];
  /** The names a grant's scope may give the resource by. */
  names(resource: R): readonly string[];
  /** How the resource a grant names is found when the token is minted or validated. */
  readonly by: 'id' | 'name' | 'id or name';
  /** The scope that names every resource of the type (`"*"`). */
  readonly every?: string;
}

/** What a token for one resource may carry (a room's participant token): its scope, by how the caller holds the resource. */
export interface TokenTable {
  /** The grant whose scope the table gives (`api`). */
  readonly grant: string;
  /** By project role, strongest first: a caller holding one gets its scope. */
  readonly roles: readonly (readonly [Role, Scope])[];
  /** By role on the resource's policy, strongest first; a role left out mints no token. */
  readonly policy: readonly (readonly [string, Scope])[];
}

export interface ResourceType<R extends Resource = Resource> {
  /** The `{resource_type}` of policy paths and the first half of action names, e.g. `feed`. */
  readonly type: string;
  /** The resource in messages: "Feed not found". */
  readonly label: string;
  /** Every action, `see` among them: without `see` a resource answers 404 rather than 403. */
  readonly actions: Readonly<Record<string, ResourceAction>>;
  /** How routes and grants find a resource in a project: by id, and by name where names are unique. */
  readonly find: {
    readonly id: (db: Db, projectId: string, id: string) => Promise<R | undefined>;
    readonly name?: (db: Db, projectId: string, name: string) => Promise<R | undefined>;
  };
  /**
   * The resource's policy (docs/policies.md): the actions each of its roles allows, and the project
   * roles that read and change it (the actions `read_policy` and `change_policy`).
   */
  readonly policy?: {
    readonly roles: Readonly<Record<string, readonly string[]>>;
    readonly readRole: Role;
    readonly manageRole: Role;
  };
  /** Why resources of this type have no policy, when a caller asks for one. */
  readonly withoutPolicy?: string;
  readonly open?: OpenAccess<R>;
  /** Participant-token grants naming resources of this type, by grant name. */
  readonly grants?: Readonly<Record<string, NamingGrant<R>>>;
  readonly token?: TokenTable;
}

/** Declares a resource type, its lookups typed by the family's own row. */
export function resourceType<R extends Resource>(declaration: ResourceType<R>): ResourceType {
  return declaration as unknown as ResourceType;
}

/** A project role that a surface of a participant-token grant stands for: the `api` grant's `llm` is an LLM proxy user. */
export interface TokenRole {
  readonly grant: string;
  readonly surface: string;
  readonly role: Role;
  /** For an OAuth token, the scope it must also carry to act with the role (the routes that need it name that scope). */
  readonly oauthScope?: string;
  readonly description: string;
}

/** The bindings of resource policies, from the module that keeps them (the policies module). */
export interface PolicyBindings {
  /** The roles the caller holds on one resource through its policy; never cached. */
  rolesOn(principal: Principal, access: ProjectAccess, type: string, id: string): Promise<ReadonlySet<string>>;
  /** The resources of one type on which the caller holds any of `roles`, by id. */
  resourcesWithRoles(principal: Principal, access: ProjectAccess, type: string, roles: readonly string[]): Promise<readonly string[]>;
}

const NO_BINDINGS: PolicyBindings = { rolesOn: async () => new Set(), resourcesWithRoles: async () => [] };

/** How a decision was reached: a project role, a role on the resource's policy, the resource's own settings, or a token's grant. */
export type Via =
  | { readonly kind: 'role'; readonly role: Role }
  | { readonly kind: 'policy'; readonly role: string }
  | { readonly kind: 'open' }
  | { readonly kind: 'grant'; readonly grant: string };

/** One decision: the action's stable name, the resource, allowed or refused, and why. */
export interface Decision {
  /** `<resource type>.<action>`, e.g. `feed.publish`. */
  readonly action: string;
  /** The resource: its id and name once looked up; else (project roles decided) what the request named it by, `key`. */
  readonly resource: { readonly type: string; readonly id?: string | undefined; readonly name?: string | undefined; readonly key?: string | undefined };
  readonly allowed: boolean;
  readonly reason: string;
  readonly via?: Via | undefined;
}

/**
 * A caller acting in one project: its credential and project access, with the roles it holds on
 * each resource's policy read once however many questions one request asks.
 */
export class Actor {
  readonly principal: Principal;
  readonly access: ProjectAccess;
  readonly #bindings: PolicyBindings;
  readonly #held = new Map<string, Promise<ReadonlySet<string>>>();
  /** The actor of a participant token's signing key, whose authority caps the token's. */
  readonly signer: Actor | undefined;
  /** What the caller's route requires of it on the resource the request binds its own to (`AuthRequirement.within`). */
  readonly within: WithinRequirement | undefined;

  constructor(principal: Principal, access: ProjectAccess, bindings: PolicyBindings, within?: WithinRequirement) {
    this.principal = principal;
    this.access = access;
    this.#bindings = bindings;
    this.within = within;
    const { signer } = principal;
    this.signer = signer ? new Actor(signer, { projectId: access.projectId, roles: effectiveRoles(signer.keyRoles ?? ['admin']) }, bindings) : undefined;
  }

  policyRoles(type: string, id: string): Promise<ReadonlySet<string>> {
    const key = `${type}:${id}`;
    let held = this.#held.get(key);
    if (!held) this.#held.set(key, (held = this.#bindings.rolesOn(this.principal, this.access, type, id)));
    return held;
  }
}

/** The stable name of a route's resource action: `feed.publish`, or `{resource_type}.read_policy` for routes of every type. */
export function actionName(requirement: ResourceRequirement): string {
  const type = typeof requirement.type === 'string' ? requirement.type : `{${requirement.type.param}}`;
  return `${type}.${requirement.action}`;
}

declare module 'fastify' {
  interface FastifyRequest {
    decision: Decision | undefined;
    /** The resource the route's step found, so that the handler looks it up once (`resourceOf`). */
    decidedResource: Resource | undefined;
    /** The caller as an actor, so that the step and the handler read its policy roles once (`actorOf`). */
    actor: Actor | undefined;
  }
}

/** The decision the route's resource step made for this request, for hooks that record what happened. */
export function decisionOf(request: FastifyRequest): Decision | undefined {
  return request.decision;
}

const POLICY_ACTIONS = {
  read_policy: (roles: NonNullable<ResourceType['policy']>): ResourceAction => ({ description: 'read its policy', roles: [roles.readRole] }),
  change_policy: (roles: NonNullable<ResourceType['policy']>): ResourceAction => ({ description: 'grant and revoke roles on its policy', roles: [roles.manageRole] }),
};

const NAME = /^[a-z][a-z_]{0,49}$/;

export class Authority {
  readonly #db: Db;
  readonly #types = new Map<string, ResourceType>();
  readonly #tokenRoles: readonly TokenRole[];
  #bindings: PolicyBindings = NO_BINDINGS;

  constructor(db: Db, types: readonly ResourceType[], tokenRoles: readonly TokenRole[] = []) {
    this.#db = db;
    for (const declared of types) {
      const type = withPolicyActions(declared);
      const problem = checkType(type);
      if (problem) throw new Error(`Resource type ${JSON.stringify(declared.type)}: ${problem}`);
      if (this.#types.has(type.type)) throw new Error(`Resource type ${type.type} is declared twice`);
      this.#types.set(type.type, type);
    }
    for (const rule of tokenRoles) {
      if (!isRole(rule.role)) throw new Error(`Token role ${rule.grant}.${rule.surface}: ${rule.role} is not a project role`);
    }
    this.#tokenRoles = tokenRoles;
  }

  setPolicyBindings(bindings: PolicyBindings): void {
    this.#bindings = bindings;
  }

  get types(): readonly ResourceType[] {
    return [...this.#types.values()];
  }

  get tokenRoles(): readonly TokenRole[] {
    return this.#tokenRoles;
  }

  type(name: string): ResourceType | undefined {
    return this.#types.get(name);
  }

  actor(principal: Principal, access: ProjectAccess): Actor {
    return new Actor(principal, access, this.#bindings);
  }

  /** The caller of a route with a project role, as an actor (the same one for the step and the handler). */
  actorOf(request: FastifyRequest): Actor {
    let { actor } = request;
    if (!actor) {
      const { principal, access } = request;
      if (!principal || !access) throw new Error(`${request.method} ${request.routeOptions.url} asks for its actor, but declares no project role`);
      request.actor = actor = new Actor(principal, access, this.#bindings, request.routeOptions.config.auth?.within);
    }
    return actor;
  }

  /** The resource of a type that a path or grant names, or undefined (missing, malformed, another project's). */
  async find(type: ResourceType, projectId: string, by: 'id' | 'name' | 'id or name', key: string): Promise<Resource | undefined> {
    if (by !== 'name') {
      const byId = await type.find.id(this.#db, projectId, key);
      if (byId || by === 'id') return byId;
    }
    return type.find.name?.(this.#db, projectId, key);
  }

  /** Whether project roles alone give the actor `action` on every resource of the type. */
  holdsEverywhere(actor: Pick<Actor, 'principal' | 'access'>, type: ResourceType, action: string): Role | undefined {
    if (actor.principal.kind === 'participant') return undefined;
    return type.actions[action]!.roles.find((role) => actor.access.roles.has(role));
  }

  /** May the actor take `action` on this resource, and why (not). */
  async decide(actor: Actor, type: ResourceType, resource: Resource, action: string): Promise<Decision> {
    const name = `${type.type}.${action}`;
    const subject = { type: type.type, id: resource.id, name: resource.name };
    const decided = (allowed: boolean, reason: string, via?: Via): Decision => ({ action: name, resource: subject, allowed, reason, via });
    const declared = type.actions[action];
    if (!declared) throw new Error(`${name} is not a declared action`);
    const { principal } = actor;
    const { open } = type;
    const opens = () => open?.actions.includes(action) && open.of(resource, principal)?.actions.includes(action);
    if (principal.kind === 'participant') {
      // A token's grants, or what the resource opens to everyone in the project; never beyond its signer.
      const grant = (principal.grants ?? []).find((g) => {
        const rule = type.grants?.[g.name];
        return rule !== undefined && rule.actions.includes(action) && typeof g.scope === 'string' && (g.scope === rule.every || rule.names(resource).includes(g.scope));
      });
      const opened = !grant && open && !open.unlessBound && opens();
      if (!grant && !opened) return decided(false, `no grant of the participant token names this ${type.type} for ${action}`);
      if (actor.signer) {
        const signer = await this.decide(actor.signer, type, resource, action);
        if (!signer.allowed) return decided(false, `the token goes beyond its signing key, which may not: ${signer.reason}`);
      }
      return grant
        ? decided(true, `the participant token's grant ${grant.name}`, { kind: 'grant', grant: grant.name })
        : decided(true, open!.description, { kind: 'open' });
    }
    const role = this.holdsEverywhere(actor, type, action);
    if (role) return decided(true, `the project role ${role}`, { kind: 'role', role });
    if (open && !open.unlessBound && opens()) return decided(true, open.description, { kind: 'open' });
    if (type.policy) {
      const held = await actor.policyRoles(type.type, resource.id);
      const holding = Object.entries(type.policy.roles).find(([r, actions]) => held.has(r) && actions.includes(action));
      if (holding) return decided(true, `the role ${holding[0]} on the ${type.type}'s policy`, { kind: 'policy', role: holding[0] });
      if (open?.unlessBound && held.size === 0 && opens()) return decided(true, open.description, { kind: 'open' });
    }
    return decided(false, `${name} needs ${this.whoMay(type, action)}`);
  }

  /**
   * Refuses (403, naming what would allow it) unless the actor may itself take the action its route
   * declares (`auth.within`) on `resource`, the one the request binds its own to, such as the room a
   * feed subscription writes into: nobody binds one resource to another beyond what they could do
   * there themselves. A route that declares none may not ask: what is required is what is declared.
   */
  async requireWithin(actor: Actor, resource: Resource): Promise<void> {
    const { within } = actor;
    if (!within) throw new Error('requireWithin: the caller\'s route declares no `auth.within`');
    const type = this.#types.get(within.type)!;
    const decision = await this.decide(actor, type, resource, within.action);
    if (!decision.allowed) throw this.#refusal(actor, type, decision, false);
  }

  /** A route's `within` and who may take it, in words (the API reference's "Requires"). */
  requiresWithin(within: WithinRequirement): string {
    return `\`${within.type}.${within.action}\` on its ${within.type}: ${this.whoMay(this.#types.get(within.type)!, within.action, { grants: false })}`;
  }

  /** Who may take an action, in words: "the feed_manager project role, or the publisher or manager role on the feed's policy". */
  whoMay(type: ResourceType, action: string, { grants = true } = {}): string {
    const declared = type.actions[action]!;
    const policy = Object.entries(type.policy?.roles ?? {}).filter(([, actions]) => actions.includes(action)).map(([role]) => role);
    const naming = Object.entries(type.grants ?? {}).filter(([, rule]) => rule.actions.includes(action)).map(([grant]) => grant);
    return [
      declared.roles.length > 0 ? `the ${orList(declared.roles)} project role` : undefined,
      policy.length > 0 ? `the ${orList(policy)} role on the ${type.type}'s policy` : undefined,
      type.open?.actions.includes(action) ? `what the ${type.type}'s own settings give: ${type.open.description}` : undefined,
      grants && naming.length > 0 ? `a participant token's ${orList(naming)} grant` : undefined,
    ].filter(Boolean).join(', or ') || 'a role nobody holds';
  }

  /** A route's resource action and who may take it, in words (the API reference's "Requires"), for the credentials it takes. */
  requires(requirement: ResourceRequirement, credentials: readonly string[]): string {
    const grants = credentials.includes('participant');
    if (typeof requirement.type === 'string') {
      const type = this.#types.get(requirement.type)!;
      const where = requirement.from ? ` (when the request names a ${type.type})` : '';
      return `\`${actionName(requirement)}\`${where}: ${this.whoMay(type, requirement.action, { grants })}`;
    }
    const types = this.types.filter((t) => t.actions[requirement.action]);
    return `\`${actionName(requirement)}\`: ${types.map((t) => `for a ${t.type}, ${this.whoMay(t, requirement.action, { grants })}`).join('; ')}`;
  }

  /** The refusal of a decision: 403 naming what would allow it, or why a role the caller holds does not count yet. */
  #refusal(actor: Actor, type: ResourceType, decision: Decision, grants: boolean): ApiError {
    const { withheld } = actor.access;
    const action = decision.action.slice(type.type.length + 1);
    if (withheld && type.actions[action]!.roles.some((role) => effectiveRoles(withheld.roles).has(role))) return withheld.refusal;
    return forbidden(`This needs ${this.whoMay(type, action, { grants })}`);
  }

  /** The actions the actor may take on a resource it sees (`see` left out): the console's buttons. */
  async rights(actor: Actor, type: ResourceType, resource: Resource): Promise<string[]> {
    const actions = Object.keys(type.actions).filter((action) => action !== 'see');
    const decisions = await Promise.all(actions.map((action) => this.decide(actor, type, resource, action)));
    return actions.filter((_action, i) => decisions[i]!.allowed);
  }

  /** Which resources of a type the actor sees beyond those their own settings open: all of them, or these ids. */
  async visible(actor: Actor, type: ResourceType): Promise<true | readonly string[]> {
    if (this.holdsEverywhere(actor, type, 'see')) return true;
    const roles = Object.entries(type.policy?.roles ?? {}).filter(([, actions]) => actions.includes('see')).map(([role]) => role);
    if (roles.length === 0 || actor.principal.kind === 'participant') return [];
    return this.#bindings.resourcesWithRoles(actor.principal, actor.access, type.type, roles);
  }

  /**
   * What a token for this resource may carry for the actor (`type.token`): the scope of its
   * strongest project role, else of its strongest role on the policy, else what the resource opens
   * to it; undefined when it may have none. Surfaces that stand for a project role (`tokenRoles`)
   * stay only when the actor holds that role.
   */
  async tokenScope(actor: Actor, type: ResourceType, resource: Resource): Promise<Scope | undefined> {
    const table = type.token;
    if (!table || actor.principal.kind === 'participant') return undefined;
    const byRole = this.#roleScope(actor, type);
    if (byRole) return byRole;
    const held = type.policy ? await actor.policyRoles(type.type, resource.id) : new Set<string>();
    let scope = table.policy.find(([role]) => held.has(role))?.[1];
    if (!scope && !(type.open?.unlessBound && held.size > 0)) scope = type.open?.of(resource, actor.principal)?.token;
    return scope && this.withoutUnheldRoles(actor, table.grant, scope);
  }

  /** The scope a token naming no resource may carry: what the actor's project roles give it in every resource with a token table. */
  scopeEverywhere(actor: Actor, grant: string): Scope {
    const scopes = this.types.flatMap((t) => (t.token?.grant === grant ? [t.token.roles.find(([role]) => actor.access.roles.has(role))?.[1] ?? {}] : []));
    const [first, ...rest] = scopes;
    return this.withoutUnheldRoles(actor, grant, rest.reduce((cap, scope) => narrowScope(cap, scope), first ?? {}));
  }

  /** The scope the actor's project roles give it in a token for any resource of the type. */
  #roleScope(actor: Actor, type: ResourceType): Scope | undefined {
    const scope = type.token?.roles.find(([role]) => actor.access.roles.has(role))?.[1];
    return scope && this.withoutUnheldRoles(actor, type.token!.grant, scope);
  }

  /** The type whose resources a participant-token grant of this name names (`room`, `feed`), with its rule. */
  namingGrant(name: string): { type: ResourceType; rule: NamingGrant<Resource> } | undefined {
    for (const type of this.#types.values()) {
      const rule = type.grants?.[name];
      if (rule) return { type, rule };
    }
    return undefined;
  }

  /**
   * Whether the actor may put a grant naming a resource in a token: it may take every action the
   * grant admits there (on every resource, for the scope naming them all). With it, what a token for
   * that resource may carry (`tokenScope`). A caller whose project roles decide names resources that
   * need not exist yet (room servers know their rooms); anyone else names one it finds.
   */
  async mayName(actor: Actor, { type, rule }: { type: ResourceType; rule: NamingGrant<Resource> }, scope: unknown): Promise<{ allowed: boolean; reason: string; scope?: Scope | undefined }> {
    if (typeof scope !== 'string') return { allowed: false, reason: `its scope names a ${type.type} by its ${rule.by}` };
    const everywhere = rule.actions.every((action) => this.holdsEverywhere(actor, type, action));
    if (everywhere) return { allowed: true, reason: 'its project roles', scope: this.#roleScope(actor, type) };
    if (scope === rule.every) return { allowed: false, reason: `every ${type.type} needs ${rule.actions.map((action) => this.whoMay(type, action)).join('; and ')}` };
    const resource = await this.find(type, actor.access.projectId, rule.by, scope);
    if (!resource) return { allowed: false, reason: `there is no such ${type.type}` };
    for (const action of rule.actions) {
      const decision = await this.decide(actor, type, resource, action);
      if (!decision.allowed) return { allowed: false, reason: decision.reason };
    }
    return { allowed: true, reason: 'its access to the resource', scope: await this.tokenScope(actor, type, resource) };
  }

  /**
   * A grant's scope capped: each surface at most as `cap` has it, except those that stand for a
   * project role (`tokenRoles`), which stay exactly for holders of the role.
   */
  capScope(actor: Actor, grant: string, wanted: Scope, cap: Scope): Scope {
    const rules = this.#tokenRoles.filter((rule) => rule.grant === grant);
    const gated = (surface: string) => rules.find((rule) => rule.surface === surface);
    const narrowed = narrowScope(Object.fromEntries(Object.entries(wanted).filter(([surface]) => !gated(surface))), cap);
    return Object.fromEntries(Object.entries(wanted).flatMap(([surface, value]): [string, unknown][] => {
      const rule = gated(surface);
      if (rule) return this.holdsTokenRole(actor, rule) ? [[surface, value]] : [];
      return surface in narrowed ? [[surface, narrowed[surface]]] : [];
    }));
  }

  /**
   * Refuses giving a credential (an API key) project roles the actor does not hold itself, with what
   * they imply (no roles: an admin's), or a narrowed key could mint a stronger one.
   */
  assertRolesWithin(actor: Actor, roles: readonly Role[] | null | undefined): void {
    const wanted = effectiveRoles(roles ?? ['admin']);
    if (![...wanted].every((role) => actor.access.roles.has(role))) throw forbidden('A key cannot be given roles its creator does not hold');
  }

  /** Whether the actor holds the project role a surface stands for (with the OAuth scope, for OAuth tokens). */
  holdsTokenRole(actor: Actor, rule: TokenRole): boolean {
    const { principal, access } = actor;
    if (!access.roles.has(rule.role)) return false;
    return principal.kind !== 'oauth' || rule.oauthScope === undefined || principal.scopes?.has(rule.oauthScope) === true;
  }

  withoutUnheldRoles(actor: Actor, grant: string, scope: Scope): Scope {
    const unheld = this.#tokenRoles.filter((rule) => rule.grant === grant && rule.surface in scope && !this.holdsTokenRole(actor, rule));
    if (unheld.length === 0) return scope;
    return Object.fromEntries(Object.entries(scope).filter(([surface]) => !unheld.some((rule) => rule.surface === surface)));
  }

  /** The problem with a route's resource requirement, or undefined. */
  check(route: Pick<RouteOptions, 'method' | 'url' | 'config'>): string | undefined {
    const auth = (route.config as { auth?: AuthRequirement } | undefined)?.auth;
    const name = `${String(route.method)} ${route.url}`;
    const { within } = auth ?? {};
    if (within && !this.#types.get(within.type)?.actions[within.action]) return `${name}: within names ${within.type}.${within.action}, which no module declares`;
    if (within && !isRole(auth!.permission)) return `${name}: within is for a route with a project role`;
    const requirement = auth?.resource;
    if (!requirement) return undefined;
    const params = [...route.url.matchAll(/(?<!:):([A-Za-z0-9_]+)/g)].map((m) => m[1]);
    if ((requirement.param === undefined) === (requirement.from === undefined)) return `${name}: a resource is named by a path parameter or found from the request, one of the two`;
    if (requirement.param !== undefined && !params.includes(requirement.param)) return `${name}: the resource's parameter ${requirement.param} is not in the path`;
    if (typeof requirement.type !== 'string') {
      if (!params.includes(requirement.type.param)) return `${name}: the resource type's parameter ${requirement.type.param} is not in the path`;
      return undefined;
    }
    const type = this.#types.get(requirement.type);
    if (!type) return `${name}: no module declares the resource type ${requirement.type}`;
    if (!type.actions[requirement.action]) return `${name}: ${actionName(requirement)} is not an action of a ${type.type}`;
    if ((requirement.by === 'name' || requirement.from) && !type.find.name) return `${name}: a ${type.type} cannot be found by name`;
    return undefined;
  }

  /** The resource type a request's requirement names; 400 for one the path names that takes no such action. */
  #typeOf(request: FastifyRequest, requirement: ResourceRequirement): ResourceType {
    if (typeof requirement.type === 'string') return this.#types.get(requirement.type)!;
    const named = (request.params as Record<string, string>)[requirement.type.param]!;
    const type = this.#types.get(named);
    if (type?.actions[requirement.action]) return type;
    if (type?.withoutPolicy) throw badRequest(type.withoutPolicy);
    const takers = this.types.filter((t) => t.actions[requirement.action]).map((t) => t.type);
    throw badRequest(`${requirement.type.param} must be one of ${takers.join(', ')}`);
  }

  /**
   * The route step: decides the route's action for the caller before the handler runs, and keeps
   * the decision on the request. A resource the caller may not see is "not found" (404), like a
   * missing one; one it sees but may not act on is 403. When project roles decide, nothing is
   * looked up: the handler finds the resource itself (`resourceOf`).
   */
  decideRequest(request: FastifyRequest, requirement: ResourceRequirement): Promise<void> | undefined {
    const type = this.#typeOf(request, requirement);
    const key = requirement.from ? requirement.from(request) : (request.params as Record<string, string>)[requirement.param!];
    if (key === undefined) return undefined;
    const { action } = requirement;
    // Project roles read straight off the request: when they decide, no actor is made on the hot path.
    const { principal, access } = request;
    const caller = principal && access ? { principal, access } : undefined;
    const role = caller && this.holdsEverywhere(caller, type, action);
    if (caller && role && this.holdsEverywhere(caller, type, 'see')) {
      request.decision = { action: `${type.type}.${action}`, resource: { type: type.type, key }, allowed: true, reason: `the project role ${role}`, via: { kind: 'role', role } };
      return undefined;
    }
    return this.#decideOnResource(request, this.actorOf(request), type, requirement, key);
  }

  async #decideOnResource(request: FastifyRequest, actor: Actor, type: ResourceType, requirement: ResourceRequirement, key: string): Promise<void> {
    const { action } = requirement;
    const resource = await this.find(type, actor.access.projectId, requirement.from || requirement.by === 'name' ? 'name' : 'id', key);
    const seen = resource && (action === 'see' ? undefined : await this.decide(actor, type, resource, 'see'));
    if (!resource || seen?.allowed === false) {
      request.decision = { action: `${type.type}.${action}`, resource: { type: type.type, key }, allowed: false, reason: resource ? `the caller cannot see it: ${seen!.reason}` : 'no such resource' };
      throw notFound(type.label);
    }
    const decision = await this.decide(actor, type, resource, action);
    request.decision = decision;
    // A participant token's grants are worth naming only where the route takes participant tokens.
    const grants = request.routeOptions.config.auth?.credentials?.includes('participant') ?? false;
    if (!decision.allowed) throw action === 'see' ? notFound(type.label) : this.#refusal(actor, type, decision, grants);
    request.decidedResource = resource;
  }

  /**
   * The resource of a route that declares one, as its step found it, or else as its path names it
   * (404 when there is none): the handler looks it up at most once.
   */
  async resourceOf<R extends Resource>(request: FastifyRequest): Promise<R> {
    const known = request.decidedResource;
    if (known) return known as R;
    const requirement = request.routeOptions.config.auth?.resource;
    if (!requirement) throw new Error(`${request.method} ${request.routeOptions.url} asks for its resource, but declares none`);
    const type = this.#typeOf(request, requirement);
    const key = requirement.from ? requirement.from(request) : (request.params as Record<string, string>)[requirement.param!];
    const resource = key === undefined ? undefined : await this.find(type, request.access!.projectId, requirement.from || requirement.by === 'name' ? 'name' : 'id', key);
    if (!resource) throw notFound(type.label);
    request.decidedResource = resource;
    return resource as R;
  }

  /** The resource type of a route that declares one (for routes of every type, the one its path names). */
  typeOf(request: FastifyRequest): ResourceType {
    const requirement = request.routeOptions.config.auth?.resource;
    if (!requirement) throw new Error(`${request.method} ${request.routeOptions.url} asks for its resource type, but declares none`);
    return this.#typeOf(request, requirement);
  }
}

/**
 * Installs the resource step on every route that declares `auth.resource` (and only there), and
 * records a refusal by the credential check before it (no credential, another kind, a project role
 * missing) as that route's decision too.
 */
export function installAuthority(app: FastifyInstance, authority: Authority): void {
  // Request decorations rather than maps keyed by request: nothing for the collector to trace per request.
  app.decorateRequest('decision', undefined);
  app.decorateRequest('decidedResource', undefined);
  app.decorateRequest('actor', undefined);
  app.addHook('onRoute', (route) => {
    const requirement = (route.config as { auth?: AuthRequirement } | undefined)?.auth?.resource;
    if (!requirement) return;
    const refusedEarlier = (request: FastifyRequest, _reply: unknown, error: Error, done: () => void) => {
      const status = error instanceof ApiError ? error.status : 0;
      if (request.decision === undefined && [401, 403, 404].includes(status)) {
        const params = (request.params ?? {}) as Record<string, string | undefined>;
        const type = typeof requirement.type === 'string' ? requirement.type : params[requirement.type.param] ?? `{${requirement.type.param}}`;
        const key = requirement.param === undefined ? undefined : params[requirement.param];
        request.decision = { action: `${type}.${requirement.action}`, resource: { type, key }, allowed: false, reason: error.message };
      }
      done();
    };
    route.onError = [...[route.onError ?? []].flat(), refusedEarlier];
    // Written with `done`: when project roles decide, nothing waits, and the request skips a promise.
    const step = (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
      let waiting;
      try {
        waiting = authority.decideRequest(request, requirement);
      } catch (error) {
        done(error as Error);
        return;
      }
      if (waiting) waiting.then(() => done(), done);
      else done();
    };
    route.preHandler = [...[route.preHandler ?? []].flat(), step];
  });
}

/**
 * The narrower of two scopes, surface by surface: a surface in both, in its narrower form (`{}`
 * is a surface with the SDK's defaults, its widest; two different forms give the cap's).
 */
export function narrowScope(wanted: Scope, cap: Scope): Scope {
  const narrowed: Record<string, unknown> = {};
  for (const [surface, value] of Object.entries(wanted)) {
    if (!(surface in cap)) continue;
    const limit = cap[surface];
    narrowed[surface] = isWidest(limit) ? value : limit;
  }
  return narrowed;
}

const isWidest = (value: unknown) => value !== null && typeof value === 'object' && Object.keys(value).length === 0;

function orList(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

function withPolicyActions(type: ResourceType): ResourceType {
  if (!type.policy) return type;
  return { ...type, actions: { ...type.actions, read_policy: POLICY_ACTIONS.read_policy(type.policy), change_policy: POLICY_ACTIONS.change_policy(type.policy) } };
}

function checkType(type: ResourceType): string | undefined {
  if (!NAME.test(type.type)) return 'the type must be lower-case letters and _';
  if (!type.actions.see) return 'every type declares `see`, without which its resources are not found';
  for (const [action, declared] of Object.entries(type.actions)) {
    if (!NAME.test(action)) return `action ${JSON.stringify(action)} must be lower-case letters and _`;
    const unknown = declared.roles.find((role) => !isRole(role));
    if (unknown) return `action ${action} names ${unknown}, which is not a project role`;
  }
  const known = (actions: readonly string[]) => actions.find((a) => !type.actions[a]);
  const opened = known(type.open?.actions ?? []);
  if (opened) return `its own settings open ${opened}, which is not an action of the type`;
  for (const [role, actions] of Object.entries(type.policy?.roles ?? {})) {
    if (!NAME.test(role)) return `policy role ${JSON.stringify(role)} must be lower-case letters and _`;
    const unknown = known(actions);
    if (unknown) return `policy role ${role} allows ${unknown}, which is not an action of the type`;
  }
  if (type.policy && Object.keys(type.policy.roles).length === 0) return 'a policy needs roles';
  for (const [grant, rule] of Object.entries(type.grants ?? {})) {
    const unknown = known(rule.actions);
    if (unknown) return `grant ${grant} admits ${unknown}, which is not an action of the type`;
    if (rule.by !== 'id' && !type.find.name) return `grant ${grant} names resources by name, which the type cannot find`;
  }
  for (const [role] of type.token?.policy ?? []) {
    if (!type.policy?.roles[role]) return `the token table names ${role}, which is not a role of the policy`;
  }
  return undefined;
}

// The kinds of resource that resource policies can name. A policy binds subjects (users, service
// accounts, usersets of the project) to roles on one resource: a room, a repository, a feed… The
// policies module keeps the bindings and serves the policy routes; each family plugs its resource
// type in through its module descriptor (`policyResources`) and enforces what its roles mean, so
// the policies module knows no family and a family knows only the policies service.
import type { Db } from '../db/engine.ts';
import type { Role } from './roles.ts';

export interface PolicyResourceType {
  /** The `{resource_type}` of policy paths, e.g. `room`. */
  readonly type: string;
  /**
   * The roles a subject can hold on one resource of this type, each with what it lets the holder
   * do, in words generated from the table the family enforces (docs/permissions.md shows them).
   */
  readonly roles: Readonly<Record<string, string>>;
  /** The project role that reads the policies of resources of this type. */
  readonly readRole: Role;
  /** The project role that grants and revokes roles on resources of this type. */
  readonly manageRole: Role;
  /**
   * The resource with this id in this project, or undefined when there is none: missing, of
   * another project, or not even a well-formed id of this type (policy paths take any text).
   */
  find(db: Db, projectId: string, resourceId: string): Promise<{ id: string; name: string } | undefined>;
}

const NAME = /^[a-z][a-z_]{0,49}$/;

/** Every module's policy resource types, by type; their names and roles are checked at boot. */
export class PolicyResourceTypes {
  readonly #byType = new Map<string, PolicyResourceType>();

  constructor(types: readonly PolicyResourceType[]) {
    for (const type of types) {
      if (!NAME.test(type.type)) throw new Error(`Policy resource type ${JSON.stringify(type.type)} must be lower-case letters and _`);
      if (this.#byType.has(type.type)) throw new Error(`Policy resource type ${type.type} is declared twice`);
      const roles = Object.keys(type.roles);
      if (roles.length === 0 || !roles.every((role) => NAME.test(role))) throw new Error(`Policy resource type ${type.type} needs roles of lower-case letters and _`);
      this.#byType.set(type.type, type);
    }
  }

  get(type: string): PolicyResourceType | undefined {
    return this.#byType.get(type);
  }

  get all(): readonly PolicyResourceType[] {
    return [...this.#byType.values()];
  }
}

// Project roles, what each one implies, and the legacy permission flags that map onto them.

/**
 * What a role is about, for role pickers: the sections of the console's navigation where its
 * resources are (docs/console.md).
 */
export const ROLE_GROUPS = ['Project', 'Rooms', 'Access', 'Integrations', 'Billing'] as const;
type RoleGroup = (typeof ROLE_GROUPS)[number];

interface RoleEntry { description: string; group: RoleGroup; implies: string[] }

/** The three roles of each resource family, `<family>_creator | _inventory | _manager`. */
const family = <F extends string>(name: F, plural: string, group: RoleGroup) => ({
  [`${name}_creator`]: { description: `Creates ${plural}.`, group, implies: [] },
  [`${name}_inventory`]: { description: `Lists and reads ${plural}.`, group, implies: [] },
  [`${name}_manager`]: { description: `Updates and deletes ${plural}.`, group, implies: [`${name}_inventory`] },
}) as Record<`${F}_${'creator' | 'inventory' | 'manager'}`, RoleEntry>;

/**
 * Every project role: what it is for and the roles it brings along (transitively). Every project
 * user is a `member`; admins hold everything; developers hold the roles of building on a project.
 */
const ROLE_TABLE = {
  admin: { description: 'Manages the project: settings, users, API keys; holds every other role.', group: 'Project', implies: [] },
  developer: { description: 'Builds on the project: rooms, agents, storage, participant tokens, webhooks, and every resource family.', group: 'Project', implies: [] },
  member: { description: 'Every project user: reads the project, its rooms and agents, connects, downloads files.', group: 'Project', implies: [] },
  room_creator: { description: 'Creates rooms.', group: 'Rooms', implies: [] },
  agent_creator: { description: 'Creates managed agents.', group: 'Rooms', implies: [] },
  llm_proxy_user: { description: 'Uses the LLM proxy (and, as in the earlier variant, manages OAuth clients).', group: 'Integrations', implies: ['oauth_client_creator', 'oauth_client_inventory', 'oauth_client_manager'] },
  oauth_client_creator: { description: 'Registers OAuth clients.', group: 'Access', implies: [] },
  oauth_client_inventory: { description: 'Lists and reads OAuth clients.', group: 'Access', implies: [] },
  oauth_client_manager: { description: 'Updates and deletes OAuth clients.', group: 'Access', implies: [] },
  room_server: { description: 'A room server: reads the configuration of rooms (services, secrets, mailboxes, routes) and reports sessions and telemetry.', group: 'Rooms', implies: [] },
  session_inventory: { description: 'Lists and reads room sessions and their telemetry.', group: 'Rooms', implies: [] },
  usage_reporter: { description: 'Reads usage reports and transactions.', group: 'Billing', implies: [] },
  audit_reader: { description: 'Reads the project\'s audit log.', group: 'Project', implies: [] },
  billing_manager: { description: 'Manages billing: auto-recharge, checkout, subscriptions; reads usage.', group: 'Billing', implies: ['usage_reporter'] },
  ...family('service', 'services', 'Rooms'),
  ...family('secret', 'secrets', 'Access'),
  ...family('route', 'routes', 'Integrations'),
  ...family('repository', 'repositories', 'Integrations'),
  ...family('external_oauth', 'external OAuth registrations', 'Access'),
  ...family('share', 'shares', 'Access'),
  ...family('mailbox', 'mailboxes', 'Integrations'),
  ...family('feed', 'feeds', 'Integrations'),
  ...family('feed_subscription', 'feed subscriptions', 'Integrations'),
  ...family('llm_logger', 'LLM loggers', 'Integrations'),
  ...family('scheduled_task', 'scheduled tasks', 'Rooms'),
} satisfies Record<string, RoleEntry>;

export type Role = keyof typeof ROLE_TABLE;

export const PROJECT_ROLES = Object.keys(ROLE_TABLE) as Role[];

/** Roles a developer holds besides its own: building on a project, not administering it (nor reading who did). */
const DEVELOPER_ROLES = PROJECT_ROLES.filter((r) => !['admin', 'developer', 'billing_manager', 'audit_reader'].includes(r));

/** Roles a role brings along directly (effectiveRoles follows them transitively). */
const IMPLIES = new Map<Role, readonly Role[]>(PROJECT_ROLES.map((role) => {
  const implied = role === 'admin' ? PROJECT_ROLES : role === 'developer' ? DEVELOPER_ROLES : ROLE_TABLE[role].implies as Role[];
  return [role, ['member', ...implied]];
}));

export function roleDescription(role: Role): string {
  return ROLE_TABLE[role].description;
}

/** The section of the console a role is about (ROLE_GROUPS). */
export function roleGroup(role: Role): RoleGroup {
  return ROLE_TABLE[role].group as RoleGroup;
}

export function isRole(value: string): value is Role {
  return (PROJECT_ROLES as readonly string[]).includes(value);
}

const expanded = new Map<string, ReadonlySet<Role>>();

/**
 * Direct roles plus everything they imply, transitively (a developer is an LLM proxy user, who may
 * manage OAuth clients). Asked on every request with one of a few role lists: each list is expanded
 * once, and the same read-only set returned afterwards.
 */
export function effectiveRoles(direct: readonly string[]): ReadonlySet<Role> {
  const key = direct.join(',');
  let roles = expanded.get(key);
  if (!roles) {
    roles = expand(direct);
    // Role lists come from a small vocabulary; the bound only guards against odd stored data.
    if (expanded.size < 1000) expanded.set(key, roles);
  }
  return roles;
}

function expand(direct: readonly string[]): Set<Role> {
  const roles = new Set<Role>(['member']);
  const pending = direct.filter(isRole);
  for (let role = pending.pop(); role !== undefined; role = pending.pop()) {
    if (roles.has(role) && role !== 'member') continue;
    roles.add(role);
    pending.push(...IMPLIES.get(role)!.filter((implied) => !roles.has(implied)));
  }
  return roles;
}

export interface LegacyFlags {
  is_admin?: boolean | null | undefined;
  is_developer?: boolean | null | undefined;
  can_create_rooms?: boolean | null | undefined;
  can_create_agents?: boolean | null | undefined;
  can_use_llm_proxy?: boolean | null | undefined;
}

const FLAG_ROLES: [keyof LegacyFlags, Role][] = [
  ['is_admin', 'admin'],
  ['is_developer', 'developer'],
  ['can_create_rooms', 'room_creator'],
  ['can_create_agents', 'agent_creator'],
  ['can_use_llm_proxy', 'llm_proxy_user'],
];

/** Applies legacy flags to a set of direct roles: true adds the role, false removes it, absent keeps it. */
export function applyLegacyFlags(direct: readonly Role[], flags: LegacyFlags): Role[] {
  const roles = new Set(direct);
  for (const [flag, role] of FLAG_ROLES) {
    if (flags[flag] === true) roles.add(role);
    if (flags[flag] === false) roles.delete(role);
  }
  return [...roles];
}

export function legacyFlagsOf(roles: ReadonlySet<Role>): Required<{ [K in keyof LegacyFlags]: boolean }> {
  return {
    is_admin: roles.has('admin'),
    is_developer: roles.has('developer'),
    can_create_rooms: roles.has('room_creator'),
    can_create_agents: roles.has('agent_creator'),
    can_use_llm_proxy: roles.has('llm_proxy_user'),
  };
}

/** The coarse role the official SDK understands (`GET …/role`). */
export function primaryRole(roles: ReadonlySet<Role>): 'admin' | 'developer' | 'member' {
  if (roles.has('admin')) return 'admin';
  if (roles.has('developer')) return 'developer';
  return 'member';
}

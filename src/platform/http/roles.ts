// Project roles, what each one implies, and the legacy permission flags that map onto them.

/** The three roles of each resource family, `<family>_creator | _inventory | _manager`. */
const family = <F extends string>(name: F, plural: string) => ({
  [`${name}_creator`]: { description: `Creates ${plural}.`, implies: [] },
  [`${name}_inventory`]: { description: `Lists and reads ${plural}.`, implies: [] },
  [`${name}_manager`]: { description: `Updates and deletes ${plural}.`, implies: [`${name}_inventory`] },
}) as Record<`${F}_${'creator' | 'inventory' | 'manager'}`, { description: string; implies: string[] }>;

/**
 * Every project role: what it is for and the roles it brings along (transitively). Every project
 * user is a `member`; admins hold everything; developers hold the roles of building on a project.
 */
const ROLE_TABLE = {
  admin: { description: 'Manages the project: settings, users, API keys; holds every other role.', implies: [] },
  developer: { description: 'Builds on the project: rooms, agents, storage, participant tokens, webhooks, and every resource family.', implies: [] },
  member: { description: 'Every project user: reads the project, its rooms and agents, connects, downloads files.', implies: [] },
  room_creator: { description: 'Creates rooms.', implies: [] },
  agent_creator: { description: 'Creates managed agents.', implies: [] },
  llm_proxy_user: { description: 'Uses the LLM proxy (and, as in the earlier variant, manages OAuth clients).', implies: ['oauth_client_creator', 'oauth_client_inventory', 'oauth_client_manager'] },
  oauth_client_creator: { description: 'Registers OAuth clients.', implies: [] },
  oauth_client_inventory: { description: 'Lists and reads OAuth clients.', implies: [] },
  oauth_client_manager: { description: 'Updates and deletes OAuth clients.', implies: [] },
  room_server: { description: 'A room server: reads the configuration of rooms (services, secrets, mailboxes, routes) and reports sessions and telemetry.', implies: [] },
  session_inventory: { description: 'Lists and reads room sessions and their telemetry.', implies: [] },
  usage_reporter: { description: 'Reads usage reports and transactions.', implies: [] },
  audit_reader: { description: 'Reads the project\'s audit log.', implies: [] },
  billing_manager: { description: 'Manages billing: auto-recharge, checkout, subscriptions; reads usage.', implies: ['usage_reporter'] },
  ...family('service', 'services'),
  ...family('secret', 'secrets'),
  ...family('route', 'routes'),
  ...family('repository', 'repositories'),
  ...family('external_oauth', 'external OAuth registrations'),
  ...family('share', 'shares'),
  ...family('mailbox', 'mailboxes'),
  ...family('feed', 'feeds'),
  ...family('feed_subscription', 'feed subscriptions'),
  ...family('llm_logger', 'LLM loggers'),
  ...family('scheduled_task', 'scheduled tasks'),
};

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

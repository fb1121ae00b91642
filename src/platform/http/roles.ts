// Project roles, what each one implies, and the legacy permission flags that map onto them.

export const PROJECT_ROLES = [
  'admin',
  'developer',
  'member',
  'room_creator',
  'agent_creator',
  'llm_proxy_user',
  'oauth_client_creator',
  'oauth_client_inventory',
  'oauth_client_manager',
] as const;

export type Role = (typeof PROJECT_ROLES)[number];

const OAUTH_CLIENT_ROLES: Role[] = ['oauth_client_creator', 'oauth_client_inventory', 'oauth_client_manager'];

/** Roles a role brings along. Every project user is a `member`; admins hold everything. */
const IMPLIES: Record<Role, readonly Role[]> = {
  admin: PROJECT_ROLES,
  developer: ['developer', 'member', 'room_creator', 'agent_creator', 'llm_proxy_user', 'oauth_client_inventory', 'oauth_client_manager'],
  member: ['member'],
  room_creator: ['member', 'room_creator'],
  agent_creator: ['member', 'agent_creator'],
  // SPEC: the earlier variant gates OAuth client management by can_use_llm_proxy.
  llm_proxy_user: ['member', 'llm_proxy_user', ...OAUTH_CLIENT_ROLES],
  oauth_client_creator: ['member', 'oauth_client_creator'],
  oauth_client_inventory: ['member', 'oauth_client_inventory'],
  oauth_client_manager: ['member', 'oauth_client_manager'],
};

export function isRole(value: string): value is Role {
  return (PROJECT_ROLES as readonly string[]).includes(value);
}

/** Direct roles plus everything they imply, transitively (a developer is an LLM proxy user, who may manage OAuth clients). */
export function effectiveRoles(direct: readonly string[]): Set<Role> {
  const roles = new Set<Role>(['member']);
  const pending = direct.filter(isRole);
  for (let role = pending.pop(); role !== undefined; role = pending.pop()) {
    if (roles.has(role) && role !== 'member') continue;
    roles.add(role);
    pending.push(...IMPLIES[role].filter((implied) => !roles.has(implied)));
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

export function legacyFlagsOf(roles: Set<Role>): Required<{ [K in keyof LegacyFlags]: boolean }> {
  return {
    is_admin: roles.has('admin'),
    is_developer: roles.has('developer'),
    can_create_rooms: roles.has('room_creator'),
    can_create_agents: roles.has('agent_creator'),
    can_use_llm_proxy: roles.has('llm_proxy_user'),
  };
}

/** The coarse role the official SDK understands (`GET …/role`). */
export function primaryRole(roles: Set<Role>): 'admin' | 'developer' | 'member' {
  if (roles.has('admin')) return 'admin';
  if (roles.has('developer')) return 'developer';
  return 'member';
}

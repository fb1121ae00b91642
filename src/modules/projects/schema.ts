import { Type } from 'typebox';
import { PROJECT_ROLES } from '../../platform/http/roles.ts';
import { CountOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { JsonObject, Name, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const RoleName = Type.Enum(PROJECT_ROLES, { description: 'A project role' });

export const Project = Type.Object({
  id: Type.String(),
  name: Type.String(),
  owner_user_id: Type.Union([Type.String(), Type.Null()]),
  project_key: Type.String({ description: 'Short form of the project id' }),
  settings: JsonObject(),
  enabled: Type.Boolean(),
  created_at: Timestamp,
}, { $id: 'Project' });

export const ProjectCreate = Type.Object({
  name: Name,
  settings: Type.Optional(Type.Union([JsonObject('Free-form project settings'), Type.Null()])),
});

export const ProjectList = Type.Object({ projects: Type.Array(Project) });

export const ProjectStatus = Type.Object({ enabled: Type.Boolean() });

export const ProjectRoleInfo = Type.Object({
  role: Type.Union([Type.Literal('admin'), Type.Literal('developer'), Type.Literal('member')]),
  roles: Type.Array(RoleName, { description: 'Every role the caller holds, implied ones included' }),
  is_admin: Type.Boolean(),
  is_developer: Type.Boolean(),
  can_create_rooms: Type.Boolean(),
  can_create_agents: Type.Boolean(),
  can_use_llm_proxy: Type.Boolean(),
});

const LegacyFlagProps = {
  is_admin: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  is_developer: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  can_create_rooms: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  can_create_agents: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  can_use_llm_proxy: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
};

export const MemberAdd = Type.Object({
  user_id: Uuid,
  project_id: Type.Optional(Uuid),
  roles: Type.Optional(Type.Array(RoleName, { maxItems: 20, uniqueItems: true })),
  ...LegacyFlagProps,
});

export const MemberUpdate = Type.Object({
  roles: Type.Optional(Type.Array(RoleName, { maxItems: 20, uniqueItems: true })),
  ...LegacyFlagProps,
});

export const Member = Type.Object({
  id: Type.String({ description: 'The user id' }),
  user_id: Type.String(),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  roles: Type.Array(RoleName, { description: 'Roles granted directly' }),
  is_admin: Type.Boolean(),
  is_developer: Type.Boolean(),
  can_create_rooms: Type.Boolean(),
  can_create_agents: Type.Boolean(),
  can_use_llm_proxy: Type.Boolean(),
  added_at: Timestamp,
});

export const MemberList = ListOf('users', Member);
export const MemberListQuery = Type.Object(CountOffsetQuery);

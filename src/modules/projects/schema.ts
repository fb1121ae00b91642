import { Type } from 'typebox';
import { PROJECT_ROLES, ROLE_GROUPS } from '../../platform/http/roles.ts';
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
  admins_need_second_factor: Type.Boolean({ description: 'Members with the admin role must have a second factor to act as admins (docs/sign-in.md)' }),
  created_at: Timestamp,
}, { $id: 'Project' });

export const SigninPolicy = Type.Object({
  admins_need_second_factor: Type.Boolean({ description: 'Require a second factor (authenticator app or passkey) of the project\'s admins' }),
});

export const ProjectCreate = Type.Object({
  name: Name,
  settings: Type.Optional(Type.Union([JsonObject('Free-form project settings'), Type.Null()])),
});

export const ProjectList = Type.Object({ projects: Type.Array(Project) });

export const ProjectStatus = Type.Object({ enabled: Type.Boolean() });

export const RoleCatalogue = Type.Object({
  roles: Type.Array(Type.Object({
    name: RoleName,
    description: Type.String({ description: 'What a holder of the role may do' }),
    group: Type.Enum(ROLE_GROUPS, { description: 'The part of the project the role is about, as the console groups its pages' }),
  })),
});

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
  user_id: Type.Optional(Uuid),
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Add by email instead of user_id: a known address is added at once, an unknown one is invited', examples: ['new.member@example.com'] })),
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
  second_factor: Type.Boolean({ description: 'Whether the user has a second factor (authenticator app or passkey)' }),
  added_at: Timestamp,
});

export const MemberList = ListOf('users', Member);
export const MemberListQuery = Type.Object(CountOffsetQuery);

export const Invitation = Type.Object({
  id: Type.String(),
  email: Type.String(),
  roles: Type.Array(RoleName, { description: 'The roles the invitee gets on joining' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('expired')]),
  sent_count: Type.Integer({ description: 'How many times the invitation was issued (sent or resent)' }),
  mail_sent: Type.Optional(Type.Boolean({ description: 'In the answer to an invite or resend: false when this server has no mail transport (set ATRIUM_SMTP_URL, then resend)' })),
  last_sent_at: Timestamp,
  expires_at: Timestamp,
  created_at: Timestamp,
}, { $id: 'Invitation' });

export const MemberAddResult = Type.Object({
  ok: Type.Boolean(),
  status: Type.Union([Type.Literal('added'), Type.Literal('invited')], { description: '`added`: the user is a member now; `invited`: an invitation mail went to the address' }),
  user_id: Type.Optional(Type.String()),
  invitation: Type.Optional(Invitation),
});

export const InvitationList = ListOf('invitations', Invitation);

export const InvitationToken = Type.String({ maxLength: 200, description: 'The token of the invitation link' });

export const InvitationInfo = Type.Object({
  project_id: Type.String(),
  project_name: Type.String(),
  email: Type.String(),
  roles: Type.Array(RoleName),
  account_exists: Type.Boolean({ description: 'When true, accepting joins the existing account and needs no password' }),
  expires_at: Timestamp,
});

export const InvitationAccept = Type.Object({
  token: InvitationToken,
  password: Type.Optional(Type.String({ maxLength: 1024, description: 'Required when the address has no account yet' })),
  first_name: Type.Optional(Type.String({ maxLength: 200 })),
  last_name: Type.Optional(Type.String({ maxLength: 200 })),
});

export const InvitationAccepted = Type.Object({
  project_id: Type.String(),
  user_id: Type.String(),
  email: Type.String(),
  account_created: Type.Boolean(),
});

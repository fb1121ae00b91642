import { Type } from 'typebox';
import { PageTokenQuery, TokenPageOf } from '../../platform/http/lists.ts';
import { Uuid } from '../../platform/http/schemas.ts';

const text = (maxLength: number, description?: string) => Type.Union([Type.String({ maxLength, ...(description ? { description } : {}) }), Type.Null()]);

export const PolicyParams = Type.Object({
  project_id: Uuid,
  resource_type: Type.String({ minLength: 1, maxLength: 50, description: 'room, repository, … (docs/permissions.md lists them)' }),
  resource_id: Type.String({ minLength: 1, maxLength: 200, description: 'The id of the resource' }),
});

/** An AccessSubject of the SDKs; read-only fields they may echo back (names) are accepted and ignored. */
const Subject = Type.Object({
  type: Type.String({ maxLength: 50, description: '`user`, `service_account` (a project API key) or `userset`' }),
  id: Type.Optional(text(200, 'A user id or `me`; an API key id; for a userset the project id (optional)')),
  email: Type.Optional(text(320, 'A user by email, instead of the id')),
  name: Type.Optional(text(200)),
  first_name: Type.Optional(text(200)),
  last_name: Type.Optional(text(200)),
  object_type: Type.Optional(text(50, 'Usersets: `project`')),
  relation: Type.Optional(text(50, 'Usersets: `member` or `developer`')),
});

const Roles = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { minItems: 1, maxItems: 20, description });

const example = { subject: { type: 'userset', object_type: 'project', relation: 'member' }, roles: ['viewer'] };

export const GrantBody = Type.Object({
  subject: Subject,
  roles: Roles('Roles to add; the resource type\'s roles are listed in docs/permissions.md'),
  invite_redirect_url: Type.Optional(text(2000, 'Accepted for SDK compatibility; no invitation is sent')),
}, { examples: [example] });

// A DELETE without a body reaches the resource checks first (404 before 400), like other routes.
export const RevokeBody = Type.Union([Type.Object({
  subject: Subject,
  roles: Type.Optional(Roles('Roles to remove; absent removes them all')),
}, { examples: [example] }), Type.Null()], { description: 'The subject, and the roles to remove' });

const AccessResource = Type.Object({ type: Type.String(), id: Type.String(), name: Type.String() });

const SubjectView = Type.Object({
  type: Type.String(),
  id: Type.String(),
  email: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  first_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  last_name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  object_type: Type.Optional(Type.String()),
  relation: Type.Optional(Type.String()),
});

export const RoleGrant = Type.Object({ resource: AccessResource, subject: SubjectView, direct_roles: Type.Array(Type.String()) });

export const PolicyQuery = Type.Object(PageTokenQuery);

export const Policy = Type.Object({ resource: AccessResource, ...TokenPageOf('access_grants', RoleGrant).properties });

export const Rights = Type.Object({
  resource: AccessResource,
  rights: Type.Array(Type.String(), { description: 'The actions the caller may take, `see` left out (it sees the resource, or the answer is 404)' }),
});

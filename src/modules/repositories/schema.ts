import { Type } from 'typebox';
import { CountOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { CLOSED, Description, StringMap, Timestamp, Uuid } from '../../platform/http/schemas.ts';

export const REPOSITORY_ACTIONS = ['pull', 'push'] as const;
export type RepositoryAction = (typeof REPOSITORY_ACTIONS)[number];

const RepositoryName = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'An OCI repository name (distribution spec): lower-case components of letters and digits, separated inside by `.`, `_`, `__` or dashes, joined by `/`. Unique in the project.',
});

export const Repository = Type.Object({
  id: Type.String(),
  project_id: Type.String(),
  name: Type.String(),
  registry_name: Type.String({ description: 'The name in the registry, `<project_id>/<name>`: what repository tokens grant' }),
  description: Type.String(),
  annotations: Type.Record(Type.String(), Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const RepositoryInput = Type.Object({
  name: RepositoryName,
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
}, { ...CLOSED, examples: [{ name: 'team/web-app', description: 'The web front end', annotations: { owner: 'web' } }] });

export const RepositoryParams = Type.Object({ project_id: Uuid, repository_id: Uuid });

export const RepositoryListQuery = Type.Object(CountOffsetQuery);
export const RepositoryList = ListOf('repositories', Repository);

export const TokenRequest = Type.Union([Type.Object({
  actions: Type.Optional(Type.Array(Type.Union(REPOSITORY_ACTIONS.map((a) => Type.Literal(a))), {
    minItems: 1, maxItems: 10, default: ['pull'], description: 'What the token allows on this one repository',
  })),
  expires_in_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400, default: 3600, description: 'Lifetime of the token' })),
}), Type.Null()], { description: 'No body asks for the defaults' });

export const RepositoryToken = Type.Object({
  token: Type.String({ description: 'A registry bearer token (Docker registry token authentication), ES256-signed with a key of /.well-known/jwks.json' }),
  expires_at: Timestamp,
});

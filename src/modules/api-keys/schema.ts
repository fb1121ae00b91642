import { Type } from 'typebox';
import { Description, Name, Timestamp } from '../../platform/http/schemas.ts';
import { RoleName } from '../projects/schema.ts';

export const ApiKeyCreate = Type.Object({
  name: Name,
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  roles: Type.Optional(Type.Union([Type.Array(RoleName, { minItems: 1, maxItems: 20, uniqueItems: true }), Type.Null()], {
    description: 'Narrow the key to these roles; by default it acts as a project admin',
  })),
});

const ApiKeyFields = {
  id: Type.String(),
  name: Type.String(),
  description: Type.String(),
  roles: Type.Union([Type.Array(RoleName), Type.Null()], { description: 'null: acts as a project admin' }),
  created_by: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp,
};

export const ApiKey = Type.Object(ApiKeyFields);
export const ApiKeyCreated = Type.Object({ ...ApiKeyFields, value: Type.String({ description: 'The key itself: shown once, store it now' }) });
export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKey) });

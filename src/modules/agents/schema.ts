import { Type } from 'typebox';
import { CountOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { JsonObject, Name, StringMap, Timestamp } from '../../platform/http/schemas.ts';

export const AgentName = Type.String({ ...Name, description: 'Agent name, unique in the project' });

/**
 * A ManagedAgentSpec as the official SDK (@meshagent/meshagent 0.39.9) sends it. Its name is `metadata.name` (trimmed, lower-cased); the
 * legacy top-level `name` is accepted too. Other fields are kept as given.
 */
export const AgentConfiguration = Type.Object({
  version: Type.Optional(Type.String({ maxLength: 20 })),
  kind: Type.Optional(Type.String({ maxLength: 50 })),
  name: Type.Optional(AgentName),
  metadata: Type.Optional(Type.Object({ name: Type.Optional(AgentName), annotations: Type.Optional(StringMap) }, { additionalProperties: true, maxProperties: 100 })),
}, { additionalProperties: true, maxProperties: 100, examples: [{ version: 'v1', kind: 'ManagedAgent', metadata: { name: 'support-bot' } }] });

export const Agent = Type.Object({
  id: Type.String(),
  name: Type.String(),
  configuration: JsonObject(),
  permissions: JsonObject(),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const AgentList = ListOf('agents', Agent);
export const AgentListQuery = Type.Object(CountOffsetQuery);

export const AgentCreate = Type.Object({
  configuration: AgentConfiguration,
  if_not_exists: Type.Optional(Type.Boolean({ default: false })),
  permissions: Type.Optional(Type.Union([JsonObject('Initial permissions: user id → {admin: bool}'), Type.Array(Type.Unknown(), { maxItems: 1000 }), Type.Null()])),
});

export const AgentUpdate = Type.Object({ configuration: AgentConfiguration });

export const AgentConnection = Type.Object({
  jwt: Type.String(),
  agent_name: Type.String(),
  project_id: Type.String(),
  agent_url: Type.String(),
});

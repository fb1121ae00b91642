import { Type, type Static } from 'typebox';
import { DNS_NAME_PATTERN } from '../../platform/http/dns-names.ts';
import { CountOffsetQuery, ListOf } from '../../platform/http/lists.ts';
import { CLOSED, JsonObject, Name, StringMap, Timestamp, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';

export const Domain = Type.String({ pattern: DNS_NAME_PATTERN, 'x-pattern-means': 'must be a lower-case DNS name (app.example.com)', maxLength: 253, description: 'A lower-case DNS name, unique across the deployment', examples: ['app.example.com'] });
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
const Named = (description: string) => Type.Object({ name: Type.String({ ...Name, description }) }, CLOSED);

const Path = Type.Object({
  path: Type.String({ pattern: '^/[^\\u0000-\\u001f\\u007f\\s]*$', 'x-pattern-means': 'must start with "/" and contain no spaces or control characters', maxLength: 2000, description: 'Starts with "/"' }),
  pathType: Type.Union([Type.Literal('prefix'), Type.Literal('exact')]),
  stripPrefix: Type.Optional(Type.Boolean()),
  targetPort: Type.Optional(Port),
  targetContent: Type.Optional(Type.String({ maxLength: 64 * 1024, description: 'Content served as is, instead of a port' })),
}, CLOSED);

export const RouteSpec = Type.Object({
  version: Type.Optional(Type.Literal('v1')),
  kind: Type.Optional(Type.Literal('Route')),
  metadata: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ ...Name })), annotations: Type.Optional(Type.Union([StringMap, Type.Null()])) }, CLOSED)),
  domain: Domain,
  backend: Type.Object({
    room: Type.Optional(Type.Union([Named('A room of the project'), Type.Null()])),
    agent: Type.Optional(Type.Union([Named('A managed agent of the project'), Type.Null()])),
  }, { ...CLOSED, description: 'Exactly one of room and agent' }),
  paths: Type.Array(Path, { minItems: 1, maxItems: 50 }),
}, CLOSED);
export type RouteSpecInput = Static<typeof RouteSpec>;

const SPEC_EXAMPLE = { spec: { version: 'v1', kind: 'Route', domain: 'app.example.com', backend: { room: { name: 'lobby' } }, paths: [{ path: '/', pathType: 'prefix', targetPort: 8080 }] } };

const SpecBody = Type.Object({ spec: RouteSpec }, CLOSED);
const ShortCreate = Type.Object({ domain: Domain, room_name: RoomName, port: Port }, CLOSED);
const ShortUpdate = Type.Object({ room_name: RoomName, port: Port }, CLOSED);

export const RouteCreate = Type.Unsafe<Static<typeof SpecBody> | Static<typeof ShortCreate>>({
  type: 'object', if: { required: ['spec'] }, then: SpecBody, else: ShortCreate,
  description: '`{spec: RouteSpec}`, or the short form `{domain, room_name, port}` (every path to that port of the room)',
  examples: [{ domain: 'app.example.com', room_name: 'lobby', port: 8080 }, SPEC_EXAMPLE],
});

export const RouteUpdate = Type.Unsafe<Static<typeof SpecBody> | Static<typeof ShortUpdate>>({
  type: 'object', if: { required: ['spec'] }, then: SpecBody, else: ShortUpdate,
  description: '`{spec: RouteSpec}` (its domain must be the path\'s), or `{room_name, port}`',
  examples: [{ room_name: 'lobby', port: 8080 }],
});

export const Route = Type.Object({
  domain: Type.String(),
  project_id: Type.String(),
  room_name: Type.Union([Type.String(), Type.Null()]),
  agent_name: Type.Union([Type.String(), Type.Null()]),
  port: Type.Union([Type.Integer(), Type.Null()], { description: 'The first path\'s target port' }),
  spec: JsonObject('The RouteSpec, its backend naming the room as it is called now'),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const RouteEnvelope = Type.Object({ route: Route });
export const RouteList = ListOf('routes', Route);
export const RouteListQuery = Type.Object({ ...CountOffsetQuery, filter: Type.Optional(Type.String({ maxLength: 200, description: 'Only domains containing this text' })) });

export const Resolution = Type.Object({
  domain: Type.String(),
  project_id: Type.String(),
  room_id: Type.Union([Type.String(), Type.Null()]),
  room_name: Type.Union([Type.String(), Type.Null()]),
  agent_name: Type.Union([Type.String(), Type.Null()]),
  port: Type.Union([Type.Integer(), Type.Null()]),
  paths: Type.Array(JsonObject(), { description: 'The RouteSpec\'s paths: path, pathType, stripPrefix, targetPort or targetContent' }),
});
export const ResolveQuery = Type.Object({ domain: Domain });

export const DomainParams = Type.Object({ project_id: Uuid, domain: Domain });
export const RoomParams = Type.Object({ project_id: Uuid, room_name: RoomName });

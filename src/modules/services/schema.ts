import { Type, type Static, type TSchema } from 'typebox';
import { CountOffsetQuery, MAX_PAGE } from '../../platform/http/lists.ts';
import { CLOSED, Description, JsonObject, Name, StringMap, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';

// The ServiceSpec of the official SDKs (@meshagent/meshagent 0.39.9 and the Python models, which
// forbid unknown fields): every object the spec defines is closed, so a misspelt field is a 400
// naming it. Deep parts that the SDKs type loosely (channels, MCP settings, ApiScopes, mounts)
// are bounded JSON objects.

const Text = (maxLength: number, description?: string) => Type.String({ maxLength, ...(description ? { description } : {}) });
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const List = <T extends TSchema>(item: T, maxItems: number) => Type.Array(item, { maxItems });

const ServiceName = Type.String({ ...Name, description: 'Service name (`metadata.name`), unique among the project\'s services or the room\'s' });

const Metadata = Type.Object({
  name: ServiceName,
  description: Type.Optional(Nullable(Description)),
  repo: Type.Optional(Nullable(Text(2000))),
  icon: Type.Optional(Nullable(Text(2000))),
  annotations: Type.Optional(Nullable(StringMap)),
}, CLOSED);

const Agent = Type.Object({
  name: Type.String({ ...Name }),
  description: Type.Optional(Nullable(Description)),
  annotations: Type.Optional(Nullable(StringMap)),
  channels: Type.Optional(Nullable(JsonObject('Channels: email, messaging, queue, toolkit'))),
  email: Type.Optional(Nullable(Type.Object({ address: Text(320), public: Type.Optional(Nullable(Type.Boolean())) }, CLOSED))),
  heartbeat: Type.Optional(Nullable(JsonObject('Heartbeat: queue, minutes, prompt'))),
}, CLOSED);

const Endpoint = Type.Object({
  path: Text(2000, 'Path under the port'),
  meshagent: Type.Optional(Nullable(Type.Object({ identity: Type.String({ ...Name }), api: Type.Optional(Nullable(JsonObject('ApiScope of the identity'))) }, CLOSED))),
  mcp: Type.Optional(Nullable(JsonObject('MCP endpoint: label, allowed_tools, headers, oauth, …'))),
  annotations: Type.Optional(Nullable(StringMap)),
}, CLOSED);

const Port = Type.Object({
  num: Type.Union([Type.Literal('*'), Type.Integer({ minimum: 1, maximum: 65535 })], { description: 'Port number, or "*" for any' }),
  type: Type.Optional(Nullable(Type.Union([Type.Literal('http'), Type.Literal('tcp')]))),
  endpoints: Type.Optional(List(Endpoint, 100)),
  liveness: Type.Optional(Nullable(Text(2000))),
  published: Type.Optional(Nullable(Type.Boolean())),
  public: Type.Optional(Nullable(Type.Boolean())),
  annotations: Type.Optional(Nullable(StringMap)),
}, CLOSED);

const SecretRef = Type.Object({ id: Type.String({ ...Name, description: 'Id of a project secret' }) }, CLOSED);

const Environment = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_.-]*$', 'x-pattern-means': 'must start with a letter or "_" and hold only letters, digits, ".", "_" and "-"', maxLength: 200 }),
  value: Type.Optional(Nullable(Text(32 * 1024))),
  token: Type.Optional(Nullable(JsonObject('A participant token minted for the service: identity, api, role'))),
  secret: Type.Optional(Nullable(SecretRef)),
}, CLOSED);

const Mounts = List(JsonObject(), 100);

const Container = Type.Object({
  image: Text(1000, 'Container image reference'),
  command: Type.Optional(Nullable(Text(32 * 1024))),
  working_dir: Type.Optional(Nullable(Text(2000))),
  environment: Type.Optional(Nullable(List(Environment, 500))),
  secrets: Type.Optional(Nullable(List(Type.String({ ...Name }), 100))),
  pull_secret: Type.Optional(Nullable(Type.Union([Type.String({ ...Name }), SecretRef], { description: 'Id of the project secret holding registry credentials' }))),
  storage: Type.Optional(Nullable(Type.Object({
    room: Type.Optional(Nullable(Mounts)),
    project: Type.Optional(Nullable(Mounts)),
    images: Type.Optional(Nullable(Mounts)),
    files: Type.Optional(Nullable(Mounts)),
    empty_dirs: Type.Optional(Nullable(Mounts)),
    configs: Type.Optional(Nullable(Mounts)),
  }, CLOSED))),
  api_key: Type.Optional(Nullable(JsonObject())),
  run_as: Type.Optional(Nullable(JsonObject())),
  template: Type.Optional(Nullable(Type.Union([Type.Literal('agent'), Type.Literal('none')]))),
  private: Type.Optional(Nullable(Type.Boolean())),
  on_demand: Type.Optional(Nullable(Type.Boolean())),
  writable_root_fs: Type.Optional(Nullable(Type.Boolean())),
}, CLOSED);

const External = Type.Object({ url: Text(2000, 'URL of a service that runs elsewhere') }, CLOSED);

const SPEC_EXAMPLE = {
  version: 'v1',
  kind: 'Service',
  metadata: { name: 'echo', description: 'Echoes messages' },
  ports: [{ num: 8080, type: 'http', endpoints: [{ path: '/agent', meshagent: { identity: 'echo' } }] }],
  container: { image: 'ghcr.io/example/echo:1', environment: [{ name: 'LOG_LEVEL', value: 'info' }] },
};

export const ServiceSpec = Type.Object({
  version: Type.Literal('v1'),
  kind: Type.Literal('Service'),
  id: Type.Optional(Nullable(Text(200, 'Ignored on input: the service id is in the path or assigned'))),
  enabled: Type.Optional(Nullable(Type.Boolean())),
  metadata: Metadata,
  agents: Type.Optional(Nullable(List(Agent, 100))),
  ports: Type.Optional(Nullable(List(Port, 100))),
  container: Type.Optional(Nullable(Container)),
  external: Type.Optional(Nullable(External)),
}, { ...CLOSED, description: 'A ServiceSpec: a container or an external URL, its ports and agents', examples: [SPEC_EXAMPLE] });
export type ServiceSpecInput = Static<typeof ServiceSpec>;

export const MAX_TEMPLATE_LENGTH = 64 * 1024;

export const ServiceFromTemplate = Type.Object({
  template: Type.String({ minLength: 1, maxLength: MAX_TEMPLATE_LENGTH, description: 'A ServiceTemplate in YAML (`version: v1`, `kind: ServiceTemplate`, `variables`, and the ServiceSpec fields), with `{{ name }}` placeholders' }),
  values: Type.Optional(Nullable(Type.Record(Type.String(), Type.String({ maxLength: 4000 }), { maxProperties: 100, propertyNames: { maxLength: 200 }, description: 'A value for each declared variable' }))),
}, CLOSED);
export type TemplateInput = Static<typeof ServiceFromTemplate>;

/** A ServiceSpec, or `{template, values}` when the body has `template`. */
export const ServiceBody = Type.Unsafe<ServiceSpecInput | TemplateInput>({
  type: 'object',
  if: { required: ['template'] },
  then: ServiceFromTemplate,
  else: ServiceSpec,
  description: 'A ServiceSpec, or a template payload `{template, values}`',
  examples: [SPEC_EXAMPLE],
});

/** A stored service: its ServiceSpec with `id` (the shape the SDKs parse, nothing more). */
export const Service = Type.Object({
  version: Type.Literal('v1'),
  kind: Type.Literal('Service'),
  id: Type.String(),
}, { additionalProperties: true, description: 'The ServiceSpec as stored, with its id; values of obscure template variables read "********"' });

export const ServiceList = Type.Object({
  services: Type.Array(Service),
  total: Type.Integer({ description: 'Services in the whole list, not just this page' }),
});

export const ServiceListQuery = Type.Object({
  ...CountOffsetQuery,
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: MAX_PAGE, description: 'Most items returned' })),
});

export const ProjectServiceParams = Type.Object({ project_id: Uuid, service_id: Uuid });
export const RoomParams = Type.Object({ project_id: Uuid, room_name: RoomName });
export const RoomServiceParams = Type.Object({ project_id: Uuid, room_name: RoomName, service_id: Uuid });

// OTLP/HTTP as a receiver sees it: the request bodies of the three signals (JSON, or protobuf decoded
// into the same JSON shape), their schemas, the responses, and the session items they become.
//
// Protobuf: the official OpenTelemetry protos (opentelemetry-proto v1.9.0, Apache-2.0, in
// ./otlp-proto), read by protobufjs. A decoded message is turned into exactly what the JSON encoding
// would have carried: lowerCamelCase keys, hex trace and span ids, 64-bit integers as decimal
// strings, so one schema validates both encodings and one code path reads them.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { Type, type Static, type TSchema } from 'typebox';
import { badRequest } from '../../platform/http/errors.ts';

export type Signal = 'traces' | 'metrics' | 'logs';

/** The resource attributes that attribute telemetry to a session (docs/room-servers.md). */
export const SESSION_ID_ATTRIBUTE = 'atrium.session.id';
export const ROOM_NAME_ATTRIBUTE = 'atrium.room.name';

// Schemas ------------------------------------------------------------------------------------------

const Int64 = Type.Union([Type.String({ maxLength: 21, pattern: '^-?[0-9]{1,20}$', 'x-pattern-means': 'must be a decimal integer' }), Type.Integer()], { description: 'A 64-bit integer, as a decimal string or a number' });
const Double = Type.Union([Type.Number(), Type.String({ maxLength: 20 })], { description: 'A number ("NaN" and "Infinity" as strings)' });
const HexId = (bytes: number) => Type.String({ maxLength: bytes * 2, pattern: '^[0-9a-fA-F]*$', 'x-pattern-means': 'must be hexadecimal digits', description: `${bytes} bytes in hex` });
const Text = (maxLength: number) => Type.String({ maxLength });
const Many = <T extends TSchema>(item: T, maxItems: number) => Type.Optional(Type.Array(item, { maxItems }));

/** An AnyValue; the members of arrays and key-value lists are read leniently (depth-limited) in code. */
const AnyValue = Type.Object({
  stringValue: Type.Optional(Text(1_000_000)),
  boolValue: Type.Optional(Type.Boolean()),
  intValue: Type.Optional(Int64),
  doubleValue: Type.Optional(Double),
  bytesValue: Type.Optional(Text(1_000_000)),
  arrayValue: Type.Optional(Type.Object({ values: Many(Type.Unknown(), 10_000) })),
  kvlistValue: Type.Optional(Type.Object({ values: Many(Type.Unknown(), 10_000) })),
});
const KeyValue = Type.Object({ key: Text(1000), value: Type.Optional(AnyValue) });
const Attributes = Many(KeyValue, 10_000);
const Resource = Type.Optional(Type.Object({ attributes: Attributes }));
const Scope = Type.Optional(Type.Object({ name: Type.Optional(Text(1000)), version: Type.Optional(Text(1000)), attributes: Attributes }));

const Span = Type.Object({
  traceId: Type.Optional(HexId(16)),
  spanId: Type.Optional(HexId(8)),
  parentSpanId: Type.Optional(HexId(8)),
  traceState: Type.Optional(Text(10_000)),
  name: Type.Optional(Text(10_000)),
  kind: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
  startTimeUnixNano: Type.Optional(Int64),
  endTimeUnixNano: Type.Optional(Int64),
  attributes: Attributes,
  events: Many(Type.Object({ timeUnixNano: Type.Optional(Int64), name: Type.Optional(Text(10_000)), attributes: Attributes }), 10_000),
  links: Many(Type.Object({ traceId: Type.Optional(HexId(16)), spanId: Type.Optional(HexId(8)), traceState: Type.Optional(Text(10_000)), attributes: Attributes }), 10_000),
  status: Type.Optional(Type.Object({ code: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 })), message: Type.Optional(Text(10_000)) })),
});

const NumberPoint = Type.Object({
  attributes: Attributes,
  startTimeUnixNano: Type.Optional(Int64),
  timeUnixNano: Type.Optional(Int64),
  asDouble: Type.Optional(Double),
  asInt: Type.Optional(Int64),
});
const HistogramPoint = Type.Object({
  attributes: Attributes,
  startTimeUnixNano: Type.Optional(Int64),
  timeUnixNano: Type.Optional(Int64),
  count: Type.Optional(Int64),
  sum: Type.Optional(Double),
  min: Type.Optional(Double),
  max: Type.Optional(Double),
  bucketCounts: Many(Int64, 10_000),
  explicitBounds: Many(Double, 10_000),
});
const ExponentialHistogramPoint = Type.Object({
  attributes: Attributes,
  startTimeUnixNano: Type.Optional(Int64),
  timeUnixNano: Type.Optional(Int64),
  count: Type.Optional(Int64),
  sum: Type.Optional(Double),
  min: Type.Optional(Double),
  max: Type.Optional(Double),
  scale: Type.Optional(Type.Integer()),
});
const SummaryPoint = Type.Object({
  attributes: Attributes,
  startTimeUnixNano: Type.Optional(Int64),
  timeUnixNano: Type.Optional(Int64),
  count: Type.Optional(Int64),
  sum: Type.Optional(Double),
  quantileValues: Many(Type.Object({ quantile: Type.Optional(Double), value: Type.Optional(Double) }), 1000),
});
const Metric = Type.Object({
  name: Type.Optional(Text(10_000)),
  description: Type.Optional(Text(10_000)),
  unit: Type.Optional(Text(1000)),
  gauge: Type.Optional(Type.Object({ dataPoints: Many(NumberPoint, 100_000) })),
  sum: Type.Optional(Type.Object({ dataPoints: Many(NumberPoint, 100_000), aggregationTemporality: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 })), isMonotonic: Type.Optional(Type.Boolean()) })),
  histogram: Type.Optional(Type.Object({ dataPoints: Many(HistogramPoint, 100_000), aggregationTemporality: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 })) })),
  exponentialHistogram: Type.Optional(Type.Object({ dataPoints: Many(ExponentialHistogramPoint, 100_000), aggregationTemporality: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 })) })),
  summary: Type.Optional(Type.Object({ dataPoints: Many(SummaryPoint, 100_000) })),
});
const LogRecord = Type.Object({
  timeUnixNano: Type.Optional(Int64),
  observedTimeUnixNano: Type.Optional(Int64),
  severityNumber: Type.Optional(Type.Integer({ minimum: 0, maximum: 24 })),
  severityText: Type.Optional(Text(100)),
  body: Type.Optional(AnyValue),
  attributes: Attributes,
  traceId: Type.Optional(HexId(16)),
  spanId: Type.Optional(HexId(8)),
  eventName: Type.Optional(Text(1000)),
});

const EXAMPLE_RESOURCE = { attributes: [{ key: SESSION_ID_ATTRIBUTE, value: { stringValue: '7b0e1f3c-7c41-4bd4-9a61-0b8e0c6f2f55' } }, { key: 'service.name', value: { stringValue: 'room-server' } }] };

export const ExportTraceRequest = Type.Object({
  resourceSpans: Many(Type.Object({ resource: Resource, scopeSpans: Many(Type.Object({ scope: Scope, spans: Many(Span, 100_000) }), 1000) }), 1000),
}, {
  description: 'ExportTraceServiceRequest (OTLP/HTTP JSON; `application/x-protobuf` is accepted too)',
  examples: [{ resourceSpans: [{ resource: EXAMPLE_RESOURCE, scopeSpans: [{ scope: { name: 'room' }, spans: [{ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'agent.turn', kind: 1, startTimeUnixNano: '1795243070529000000', endTimeUnixNano: '1795243070929000000' }] }] }] }],
});
export const ExportMetricsRequest = Type.Object({
  resourceMetrics: Many(Type.Object({ resource: Resource, scopeMetrics: Many(Type.Object({ scope: Scope, metrics: Many(Metric, 100_000) }), 1000) }), 1000),
}, {
  description: 'ExportMetricsServiceRequest (OTLP/HTTP JSON; `application/x-protobuf` is accepted too)',
  examples: [{ resourceMetrics: [{ resource: EXAMPLE_RESOURCE, scopeMetrics: [{ metrics: [{ name: 'room.participants', unit: '1', gauge: { dataPoints: [{ timeUnixNano: '1795243070529000000', asInt: '3' }] } }] }] }] }],
});
export const ExportLogsRequest = Type.Object({
  resourceLogs: Many(Type.Object({ resource: Resource, scopeLogs: Many(Type.Object({ scope: Scope, logRecords: Many(LogRecord, 100_000) }), 1000) }), 1000),
}, {
  description: 'ExportLogsServiceRequest (OTLP/HTTP JSON; `application/x-protobuf` is accepted too)',
  examples: [{ resourceLogs: [{ resource: EXAMPLE_RESOURCE, scopeLogs: [{ logRecords: [{ timeUnixNano: '1795243070529000000', severityText: 'INFO', body: { stringValue: 'participant joined' } }] }] }] }],
});

type AnyValueIn = Static<typeof AnyValue>;
type KeyValueIn = Static<typeof KeyValue>;
export type KeyValues = readonly KeyValueIn[] | undefined;
export type TraceRequest = Static<typeof ExportTraceRequest>;
export type MetricsRequest = Static<typeof ExportMetricsRequest>;
export type LogsRequest = Static<typeof ExportLogsRequest>;

const PartialSuccess = (field: string) => Type.Object({
  partialSuccess: Type.Optional(Type.Object({ [field]: Type.String({ description: 'How many were rejected (int64, as a string)' }), errorMessage: Type.String() })),
});
export const EXPORT_RESPONSES = {
  traces: PartialSuccess('rejectedSpans'),
  metrics: PartialSuccess('rejectedDataPoints'),
  logs: PartialSuccess('rejectedLogRecords'),
} as const;

export const REJECTED_FIELD: Record<Signal, 'rejectedSpans' | 'rejectedDataPoints' | 'rejectedLogRecords'> = {
  traces: 'rejectedSpans', metrics: 'rejectedDataPoints', logs: 'rejectedLogRecords',
};

// Protobuf -----------------------------------------------------------------------------------------

const PROTO_DIR = fileURLToPath(new URL('./otlp-proto/', import.meta.url));
const COLLECTOR = { traces: 'trace', metrics: 'metrics', logs: 'logs' } as const;
const MESSAGE = { traces: 'Trace', metrics: 'Metrics', logs: 'Logs' } as const;

let loaded: Record<Signal, { request: protobuf.Type; response: protobuf.Type }> | undefined;
/**
 * The export request and response types of each signal, parsed from the protos on the first
 * protobuf body: a server receiving no protobuf telemetry keeps none of it resident
 * (docs/benchmarks.md "Memory of the embedded default").
 */
function protos(): Record<Signal, { request: protobuf.Type; response: protobuf.Type }> {
  if (loaded) return loaded;
  const root = new protobuf.Root();
  // Imports name their files from the protos' root (`opentelemetry/proto/common/v1/common.proto`).
  root.resolvePath = (_origin, target) => (target.startsWith(PROTO_DIR) ? target : `${PROTO_DIR}${target}`);
  root.loadSync((['traces', 'metrics', 'logs'] as const).map((signal) => `opentelemetry/proto/collector/${COLLECTOR[signal]}/v1/${COLLECTOR[signal]}_service.proto`));
  const types = (signal: Signal) => {
    const service = `opentelemetry.proto.collector.${COLLECTOR[signal]}.v1.Export${MESSAGE[signal]}Service`;
    return { request: root.lookupType(`${service}Request`), response: root.lookupType(`${service}Response`) };
  };
  return (loaded = { traces: types('traces'), metrics: types('metrics'), logs: types('logs') });
}
/** Byte fields that OTLP's JSON encoding writes as hex (all other bytes are base64). */
const HEX_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** Decodes a protobuf export request into the shape its JSON encoding has; 400 when it does not decode. */
export function decodeProtobuf(signal: Signal, bytes: Uint8Array): unknown {
  let message: object;
  try {
    message = protos()[signal].request.decode(bytes);
  } catch (error) {
    throw badRequest(`The body is not a valid protobuf ${signal} export request: ${(error as Error).message}`);
  }
  return asJsonShape(message, '');
}

function asJsonShape(value: unknown, key: string): unknown {
  if (value === null || typeof value !== 'object') {
    // A double that JSON cannot carry is written the way the proto3 JSON mapping writes it.
    if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
    return value;
  }
  if (value instanceof Uint8Array) return HEX_FIELDS.has(key) ? Buffer.from(value).toString('hex') : Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map((item) => asJsonShape(item, key));
  // A 64-bit integer (protobufjs gives a Long).
  if (typeof (value as { low?: unknown }).low === 'number' && typeof (value as { high?: unknown }).high === 'number') return String(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = asJsonShape(v, k);
  return out;
}

/** A protobuf export response: `{}` or a partial success. */
export function encodeProtobufResponse(signal: Signal, response: { partialSuccess?: Record<string, string> }): Uint8Array {
  const partial = response.partialSuccess;
  const message = partial ? { partialSuccess: { [REJECTED_FIELD[signal]]: Number(partial[REJECTED_FIELD[signal]]), errorMessage: partial.errorMessage } } : {};
  return protos()[signal].response.encode(message).finish();
}

/** google.rpc.Status{code, message} in protobuf: field 1 (varint) and field 2 (string). */
export function encodeStatus(code: number, message: string): Uint8Array {
  const text = Buffer.from(message, 'utf8');
  const varint = (n: number) => {
    const bytes: number[] = [];
    for (let v = n; ; v = Math.floor(v / 128)) {
      if (v < 128) {
        bytes.push(v);
        return bytes;
      }
      bytes.push((v % 128) | 128);
    }
  };
  return Buffer.concat([Buffer.from([0x08, ...varint(code), 0x12, ...varint(text.length)]), text]);
}

// Reading values -----------------------------------------------------------------------------------

const INT64_MAX = 9223372036854775807n;
const MAX_DEPTH = 8;

/** A Unix-nanosecond time as a decimal string that a bigint column holds; undefined when it is not one. */
export function nanos(value: string | number | undefined): string | undefined {
  if (value === undefined) return '0';
  let n: bigint;
  try {
    n = BigInt(typeof value === 'number' ? Math.trunc(value) : value);
  } catch {
    return undefined;
  }
  return n >= 0n && n <= INT64_MAX ? n.toString() : undefined;
}

function integer(value: string | number): number | string {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : String(value);
}

function double(value: string | number | undefined): number | null {
  if (value === undefined) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** An AnyValue as plain JSON (bytes as base64). */
export function anyValue(value: AnyValueIn | undefined, depth = 0): unknown {
  if (!isObject(value) || depth > MAX_DEPTH) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return integer(value.intValue);
  if (value.doubleValue !== undefined) return double(value.doubleValue);
  if (value.bytesValue !== undefined) return value.bytesValue;
  if (value.arrayValue) return listOf(value.arrayValue.values).map((v) => anyValue(isObject(v) ? v as AnyValueIn : undefined, depth + 1));
  if (value.kvlistValue) return attributes(listOf(value.kvlistValue.values).filter(isObject) as KeyValueIn[], depth + 1);
  return null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
// Members of nested arrays and lists are not checked by the schema: anything not a list is empty.
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Key-value pairs as an object (a repeated key keeps its last value). */
export function attributes(list: KeyValues, depth = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) {
    if (typeof kv.key === 'string') out[kv.key] = anyValue(kv.value, depth);
  }
  return out;
}

/** A trace or span id in lowercase hex when it has the right length and is not all zeros. */
export function validId(id: string | undefined, bytes: number): string | undefined {
  if (id === undefined || id.length !== bytes * 2 || /^0+$/.test(id)) return undefined;
  return id.toLowerCase();
}

/** A short stable identity of an item, for de-duplicating resends of items that have no id. */
export function digestOf(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 32);
}

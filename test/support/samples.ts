// A valid example of a JSON Schema, for suites that walk the route table (the isolation walk sends
// valid bodies so that the resource checks, not the schema, are what answers; the fuzz mutates
// them). `examples` and `default` in a schema win; otherwise the smallest value that satisfies it.
import { randomUUID } from 'node:crypto';

type Schema = Record<string, any>;

/** Strings tried, in order, against a `pattern`. */
const PATTERN_CANDIDATES = ['sample', 'sample-1', 'a', 'A', '1', 'sample@example.com', 'https://example.com/', 'read', 'v1', 'x'];

export class NoSampleError extends Error {}

export function sampleOf(schema: Schema | undefined, where = 'value'): unknown {
  if (!schema || schema === true as unknown) return {};
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return structuredClone(schema.examples[0]);
  if (schema.default !== undefined) return structuredClone(schema.default);
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      // Prefer a branch that is not null: it exercises more of the route.
      const branches = [...schema[key]].sort((a: Schema, b: Schema) => Number(a.type === 'null') - Number(b.type === 'null'));
      for (const branch of branches) {
        try {
          return sampleOf(branch, where);
        } catch (error) {
          if (!(error instanceof NoSampleError)) throw error;
        }
      }
      throw new NoSampleError(`${where}: no branch of ${key} has a sample`);
    }
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s: Schema) => sampleOf(s, where)));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') ?? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sampleOf(schema.properties?.[name], `${where}.${name}`);
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, (_v, i) => sampleOf(schema.items, `${where}[${i}]`));
    case 'string':
      return sampleString(schema, where);
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -Infinity);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return {};
  }
}

function sampleString(schema: Schema, where: string): string {
  const byFormat: Record<string, () => string> = {
    uuid: () => randomUUID(),
    'date-time': () => new Date().toISOString(),
    email: () => 'sample@example.com',
    uri: () => 'https://example.com/',
    url: () => 'https://example.com/',
  };
  if (schema.format && byFormat[schema.format]) return byFormat[schema.format]!();
  const fits = (s: string) => s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Infinity)
    && (schema.pattern === undefined || new RegExp(schema.pattern, 'u').test(s));
  const padded = (s: string) => (s.length < (schema.minLength ?? 0) ? s.padEnd(schema.minLength, s.at(-1) ?? 'x') : s);
  for (const candidate of PATTERN_CANDIDATES.map(padded)) if (fits(candidate)) return candidate;
  throw new NoSampleError(`${where}: no sample string matches ${JSON.stringify(schema.pattern ?? schema)}; give the schema \`examples\``);
}

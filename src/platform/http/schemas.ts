// TypeBox building blocks shared by route declarations. Every string, array and object has a bound.
import { Type } from 'typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });

/** A resource name: printable, no slashes or control characters. */
export const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^/\\\\\\u0000-\\u001f\\u007f]+$', 'x-pattern-means': 'must not contain "/", "\\" or control characters' });
export const Description = Type.String({ maxLength: 2000 });

// TypeBox turns a Record's key schema into patternProperties, which bounds nothing: keys are
// limited through propertyNames instead.
const KEY = { maxLength: 200 };

/** A JSON object with at most `maxProperties` keys (serialised size is bounded by the body limit). */
export const JsonObject = (description?: string) =>
  Type.Record(Type.String(), Type.Unknown(), { maxProperties: 200, propertyNames: KEY, ...(description ? { description } : {}) });

/** Annotations: string → string. */
export const StringMap = Type.Record(Type.String(), Type.String({ maxLength: 4000 }), { maxProperties: 200, propertyNames: KEY });

/**
 * Options of an object that refuses unknown properties, with a 400 naming the first one, where the
 * API otherwise ignores them: for specs whose official clients forbid extra fields, so that a typo
 * is reported rather than silently lost.
 */
export const CLOSED = { additionalProperties: Type.Never() };

export const ProjectParams = Type.Object({ project_id: Uuid });

/** The body of action routes such as connect: `{}` or none at all (a missing body validates as null). */
export const EmptyBody = Type.Union([Type.Object({}), Type.Null()], { description: '`{}`, or no body' });

export const Ok = Type.Object({ ok: Type.Boolean() });
export const OK = { ok: true } as const;

// Parsed JSON, query strings and params are plain objects; a streamed body (uploads) is not walked.
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

const badText = (text: string) => !text.isWellFormed() || text.includes('\u0000');

/**
 * Where a request value holds text no route should store: a string (or object key) that is not
 * well-formed Unicode (a lone UTF-16 surrogate) or contains NUL. Returns the path of the first such
 * value (`body.metadata.name`), or undefined. Checked for params, query and body of every route
 * before validation, so every name, id and free text the API accepts is well-formed. Every request
 * pays for the check, so it first walks the value without building paths, and only a value that
 * fails is walked again to name the place.
 */
export function illFormedText(value: unknown, where: string): string | undefined {
  return holdsIllFormedText(value) ? pathOfIllFormedText(value, where) : undefined;
}

function holdsIllFormedText(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') {
      if (badText(current)) return true;
    } else if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
    } else if (isPlainObject(current)) {
      for (const key in current) {
        if (badText(key)) return true;
        stack.push(current[key]);
      }
    }
  }
  return false;
}

function pathOfIllFormedText(value: unknown, where: string): string | undefined {
  const stack: [unknown, string][] = [[value, where]];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const [current, path] = item;
    if (typeof current === 'string') {
      if (badText(current)) return path;
    } else if (Array.isArray(current)) {
      current.forEach((v, i) => stack.push([v, `${path}[${i}]`]));
    } else if (isPlainObject(current)) {
      for (const [key, v] of Object.entries(current)) {
        if (badText(key)) return `${path} (a key)`;
        stack.push([v, `${path}.${key}`]);
      }
    }
  }
  return undefined;
}

// The mechanism behind src/config.ts: a table of settings, nested in the shape of the values the
// code reads, where each entry names its environment variable, kind, default, description and
// whether it is secret. One walk over the table parses the environment; another writes the
// redacted summary; the README's settings section is rendered from the same entries.
import type { Kind } from './kinds.ts';

/** Reads an already resolved setting by variable name, for defaults that depend on other settings. */
type Lookup = (env: string) => unknown;

interface Rule<T> {
  /** The default in words, for the docs, e.g. "`true` with the embedded database". */
  readonly doc: string;
  readonly value: (get: Lookup) => T;
}

/** A default that depends on other settings (declared earlier in the table). */
export const rule = <T>(doc: string, value: (get: Lookup) => T): Rule<T> => ({ doc, value });

interface Secret {
  /** What is hidden, in words, for the docs. */
  readonly doc: string;
  readonly redact: (written: string) => string;
}

const HIDDEN = '[redacted]';

export const secret = {
  whole: { doc: 'secret: never printed', redact: () => HIDDEN } satisfies Secret,
  /** The password of a URL's user info (`scheme://user:password@host`). */
  urlPassword: {
    doc: 'its password is secret: never printed',
    redact(written: string): string {
      // Up to the last @: a password with an unescaped @ is hidden whole, never shown in part.
      const match = /^([a-z][a-z0-9+.-]*:\/\/)(.*)@/is.exec(written);
      if (!match) return written;
      const colon = match[2]!.indexOf(':');
      return colon < 0 ? written : `${match[1]}${match[2]!.slice(0, colon)}:${HIDDEN}@${written.slice(match[0].length)}`;
    },
  } satisfies Secret,
  /** Fields of that name anywhere in a JSON value. */
  jsonFields(name: string): Secret {
    const hide = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(hide);
      if (value && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === name ? HIDDEN : hide(v)]));
      }
      return value;
    };
    return { doc: `its \`${name}\` values are secret: never printed`, redact: (written) => JSON.stringify(hide(JSON.parse(written))) };
  },
};

export class Setting<T> {
  readonly env: string;
  /** Heading of the README table it is listed under. */
  readonly group: string;
  readonly kind: Kind<unknown>;
  readonly default: Rule<T>;
  readonly description: string;
  readonly secret: Secret | undefined;

  constructor(spec: { env: string; group: string; kind: Kind<unknown>; default: Rule<T>; description: string; secret: Secret | undefined }) {
    this.env = spec.env;
    this.group = spec.group;
    this.kind = spec.kind;
    this.default = spec.default;
    this.description = spec.description;
    this.secret = spec.secret;
  }
}

/**
 * One entry. `default` is either the value as it would be written in the environment (checked
 * like one, when the table is loaded) or a `rule`; a rule may yield `undefined` for "unset".
 */
export function setting<T, D = T>(spec: {
  env: string;
  group: string;
  kind: Kind<T>;
  default: string | Rule<D>;
  description: string;
  secret?: Secret;
}): Setting<T | D> {
  let fallback: Rule<T | D>;
  if (typeof spec.default === 'string') {
    const parsed = spec.kind.parse(spec.default);
    if (!parsed.ok) throw new Error(`The default of ${spec.env} is not ${spec.kind.expects}`);
    fallback = rule(`\`${spec.default}\``, () => parsed.value);
  } else {
    fallback = spec.default;
  }
  return new Setting<T | D>({ ...spec, kind: spec.kind as Kind<unknown>, default: fallback, secret: spec.secret });
}

interface SettingsTree {
  readonly [key: string]: Setting<unknown> | SettingsTree;
}

/** The values a table yields, in its shape. */
export type ValuesOf<T> = { -readonly [K in keyof T]: T[K] extends Setting<infer V> ? V : ValuesOf<T[K]> };

function* leaves(tree: SettingsTree, path: readonly string[] = []): Generator<[readonly string[], Setting<unknown>]> {
  for (const [key, node] of Object.entries(tree)) {
    if (node instanceof Setting) yield [[...path, key], node];
    else yield* leaves(node, [...path, key]);
  }
}

/** Every entry, in table order. */
export function listSettings(tree: SettingsTree): Setting<unknown>[] {
  return [...leaves(tree)].map(([, s]) => s);
}

interface Reading<T extends SettingsTree> {
  values: ValuesOf<T>;
  /** One line per bad variable, naming it and what it expects; secret values are not repeated. */
  problems: string[];
}

/** Parses every setting of `tree` from `env` (empty counts as unset). */
export function readSettings<T extends SettingsTree>(tree: T, env: Readonly<Record<string, string | undefined>>): Reading<T> {
  const resolved = new Map<string, unknown>();
  const get: Lookup = (name) => {
    if (!resolved.has(name)) throw new Error(`A setting default refers to ${name}, which is not declared before it`);
    return resolved.get(name);
  };
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [path, s] of leaves(tree)) {
    const raw = env[s.env];
    let value: unknown;
    if (raw === undefined || raw === '') {
      value = s.default.value(get);
    } else {
      const parsed = s.kind.parse(raw);
      if (parsed.ok) {
        value = parsed.value;
      } else {
        const shown = s.secret ? '' : `=${JSON.stringify(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw)}`;
        problems.push(`${s.env}${shown} is invalid${parsed.problem ? ` (${parsed.problem})` : ''}: expected ${s.kind.expects}`);
        // Later defaults that depend on it still resolve; the problem stops the start anyway.
        value = s.default.value(get);
      }
    }
    resolved.set(s.env, value);
    let node = values;
    for (const key of path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[path.at(-1)!] = value;
  }
  return { values: values as ValuesOf<T>, problems };
}

/** The effective value of every set or defaulted setting, as it would be written, with secrets redacted. */
export function describeSettings<T extends SettingsTree>(tree: T, values: ValuesOf<T>): Record<string, string> {
  const summary: Record<string, string> = {};
  for (const [path, s] of leaves(tree)) {
    const value = path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], values);
    if (value === undefined) continue;
    const written = s.kind.format(value);
    summary[s.env] = s.secret ? s.secret.redact(written) : written;
  }
  return summary;
}

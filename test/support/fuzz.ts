// Bad requests generated from a route's declaration: the valid request the walk would send, then
// mutations of its body, path, query, headers and credential. Seeded, so a failure replays.
import { fillPath, type RouteInfo } from './routes.ts';

/** mulberry32: a small seeded PRNG, good enough to pick mutations reproducibly. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FuzzRequest {
  /** What was mutated, for the failure report. */
  what: string;
  /** Sent on every run; the others are sampled. */
  core?: boolean;
  method: string;
  /** Path and query, raw (already percent-encoded, possibly badly on purpose). */
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

/** The valid request a mutation starts from. */
export interface BaseRequest {
  route: RouteInfo;
  /** Path parameter values (unencoded). */
  params: Record<string, string>;
  /** Query parameters (unencoded). */
  query: Record<string, string>;
  /** A valid JSON body, or raw bytes for routes without a JSON body. */
  json?: unknown;
  raw?: string | undefined;
  /** The admin's credential, undefined for public routes. */
  token?: string | undefined;
  /** Credentials that must not work here (another project's, an expired one…), by name. */
  wrongTokens: Record<string, string>;
}

/** Larger than any JSON body a route accepts (1 MiB). */
const OVERSIZE_BODY = 1024 * 1024 + 1024;

/** Values that break a path parameter, already percent-encoded. */
const BAD_SEGMENTS: [string, string][] = [
  ['path traversal', '..%2F..%2F..%2Fetc%2Fpasswd'],
  ['encoded dots', '%2e%2e'],
  ['bad percent-encoding', '%E0%A4%A'],
  ['a lone percent', 'a%zz'],
  ['NUL', 'a%00b'],
  ['a UTF-16 surrogate as UTF-8', '%ED%A0%80'],
  ['overlong UTF-8', '%C0%AF'],
  ['an over-long value', 'a'.repeat(600)],
  ['a non-ASCII name', encodeURIComponent('ü🚀名')],
  ['a nil UUID', '00000000-0000-0000-0000-000000000000'],
  ['spaces', '%20%20'],
];

/** Values that break a query parameter, already percent-encoded. */
const BAD_QUERY_VALUES: [string, string][] = [
  ['text for a number', 'abc'],
  ['a negative number', '-1'],
  ['a huge number', '99999999999999999999999'],
  ['a fraction', '1.5'],
  ['an empty value', ''],
  ['NUL', '%00'],
  ['bad percent-encoding', '%E0%A4%A'],
  ['a UTF-16 surrogate as UTF-8', '%ED%A0%80'],
  ['path traversal', '..%2F..%2Fsecret'],
  ['an over-long value', 'q'.repeat(5000)],
];

/** Values put where the schema wants something else. */
const WRONG_VALUES: [string, unknown][] = [
  ['a number', 123],
  ['a string', 'x'],
  ['a boolean', true],
  ['null', null],
  ['an object', {}],
  ['an array', []],
  ['a fraction', -1.5],
  ['a huge number', 1e308],
  ['a string with NUL', 'a\u0000b'],
  ['a lone surrogate', '\ud800'],
  ['a control character', 'a\u0007b'],
  ['a long string', 'x'.repeat(70_000)],
  ['deep nesting', JSON.parse('['.repeat(500) + ']'.repeat(500))],
];

const encodePath = (route: RouteInfo, params: Record<string, string>, override?: [string, string]) =>
  fillPath(route.url, (name) => (override && override[0] === name ? override[1] : encodeURIComponent(params[name] ?? '')));

const encodeQuery = (query: Record<string, string>, raw: string[] = []) => {
  const parts = [...Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`), ...raw];
  return parts.length > 0 ? `?${parts.join('&')}` : '';
};

/** Every `path.to.field` of a JSON value, objects and arrays included. */
function fieldPaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [];
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  return entries.flatMap(([k, v]) => [[...prefix, k], ...fieldPaths(v, [...prefix, k])]);
}

function setAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let cursor = copy;
  for (const key of path.slice(0, -1)) cursor = cursor[key] as Record<string | number, unknown>;
  cursor[path.at(-1)!] = replacement;
  return copy;
}

function deleteAt(value: unknown, path: (string | number)[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let cursor = copy;
  for (const key of path.slice(0, -1)) cursor = cursor[key] as Record<string | number, unknown>;
  if (Array.isArray(cursor)) cursor.splice(Number(path.at(-1)), 1);
  else delete cursor[path.at(-1)!];
  return copy;
}

/** All the bad requests of one route; the caller samples from them. */
export function mutations(base: BaseRequest): FuzzRequest[] {
  const { route } = base;
  const out: FuzzRequest[] = [];
  const auth: Record<string, string> = base.token ? { authorization: `Bearer ${base.token}` } : {};
  const path = encodePath(route, base.params);
  const query = encodeQuery(base.query);
  const hasJson = base.json !== undefined;
  const jsonHeaders = { ...auth, 'content-type': 'application/json' };
  const bodyOf = (json: unknown) => JSON.stringify(json);
  const valid = (): Pick<FuzzRequest, 'headers' | 'body'> => (hasJson
    ? { headers: jsonHeaders, body: bodyOf(base.json) }
    : base.raw !== undefined ? { headers: { ...auth, 'content-type': 'application/octet-stream' }, body: base.raw } : { headers: auth });
  const add = (what: string, request: Partial<FuzzRequest>) => out.push({ what, method: route.method, path: `${path}${query}`, ...valid(), ...request });
  const core = (what: string, request: Partial<FuzzRequest>) => add(what, { ...request, core: true });

  // The body.
  if (hasJson) {
    const text = bodyOf(base.json);
    core('malformed JSON (truncated)', { body: text.slice(0, Math.max(1, text.length - 1)) });
    core('an oversize body', { body: JSON.stringify({ padding: 'x'.repeat(OVERSIZE_BODY) }) });
    core('an array of the body', { body: `[${text}]` });
    add('malformed JSON (trailing garbage)', { body: `${text} }` });
    add('an empty JSON body', { body: '' });
    for (const [what, value] of [['an array', '[]'], ['a string', '"x"'], ['a number', '42'], ['null', 'null']] as const) {
      add(`${what} as the whole body`, { body: value });
    }
    add('a text/plain body', { headers: { ...auth, 'content-type': 'text/plain' } });
    add('an unknown content type', { headers: { ...auth, 'content-type': 'application/x-unknown' } });
    add('an unknown field', { body: bodyOf(setAt(base.json, ['__unknown_field'], 'x')) });
    const fields = fieldPaths(base.json);
    for (const field of fields) {
      for (const [what, value] of WRONG_VALUES) add(`${what} at ${field.join('.')}`, { body: bodyOf(setAt(base.json, field, value)) });
      add(`no ${field.join('.')}`, { body: bodyOf(deleteAt(base.json, field)) });
    }
  }

  // The path.
  for (const name of Object.keys(base.params)) {
    for (const [what, segment] of BAD_SEGMENTS) add(`${what} as :${name}`, { path: `${encodePath(route, base.params, [name, segment])}${query}` });
  }

  // The query.
  const declared = Object.keys((route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
  for (const name of declared) {
    for (const [what, value] of BAD_QUERY_VALUES) add(`${what} as ?${name}`, { path: `${path}${encodeQuery(Object.fromEntries(Object.entries(base.query).filter(([k]) => k !== name)), [`${name}=${value}`])}` });
    add(`?${name} twice`, { path: `${path}${encodeQuery(base.query, [`${name}=1`, `${name}=2`])}` });
  }
  for (const name of Object.keys(base.query)) {
    add(`no ?${name}`, { path: `${path}${encodeQuery(Object.fromEntries(Object.entries(base.query).filter(([k]) => k !== name)))}` });
  }
  add('an unknown query parameter', { path: `${path}${encodeQuery(base.query, ['__unknown=%00'])}` });

  // The credential.
  if (base.token) {
    const withAuth = (authorization: string | undefined) => {
      const { authorization: _old, ...rest } = valid().headers;
      return authorization === undefined ? rest : { ...rest, authorization };
    };
    core('no credential', { headers: withAuth(undefined) });
    add('a garbage credential', { headers: withAuth('Bearer garbage') });
    add('a very long credential', { headers: withAuth(`Bearer ${'A'.repeat(8000)}`) });
    add('a credential with NUL', { headers: withAuth('Bearer ma-\u0001') });
    add('Basic instead of Bearer', { headers: withAuth(`Basic ${Buffer.from('a:b').toString('base64')}`) });
    for (const [what, token] of Object.entries(base.wrongTokens)) core(what, { headers: withAuth(`Bearer ${token}`) });
  }
  return out;
}

/** The core requests, and a reproducible sample of `count` of the others. */
export function pick(requests: readonly FuzzRequest[], count: number, random: () => number): FuzzRequest[] {
  return [...requests.filter((r) => r.core), ...sample(requests.filter((r) => !r.core), count, random)];
}

/** A reproducible sample of `count` items (all of them when there are fewer). */
export function sample<T>(items: readonly T[], count: number, random: () => number): T[] {
  const pool = [...items];
  for (let i = pool.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  return pool.slice(0, count);
}

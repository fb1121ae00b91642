// The kinds of value a setting takes. A kind turns the environment's text into a typed value or
// says what is wrong with it, writes a value back the way it is set (for the redacted summary),
// and says in words what it expects (for startup errors and the generated README table).
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import type { Static, TSchema } from 'typebox';
import { isDnsName } from '../http/dns-names.ts';
import { Value } from 'typebox/value';

type Parsed<T> = { ok: true; value: T } | { ok: false; problem?: string };

export interface Kind<T> {
  /** What a valid value looks like, e.g. "an integer from 1 to 999". */
  readonly expects: string;
  parse(raw: string): Parsed<T>;
  format(value: T): string;
}

const valid = <T>(value: T): Parsed<T> => ({ ok: true, value });
const invalid = (problem?: string): Parsed<never> => (problem === undefined ? { ok: false } : { ok: false, problem });
const range = (min: number, max: number) => `${min.toLocaleString('en')}–${max.toLocaleString('en')}`;

export function port(): Kind<number> {
  return {
    expects: 'a TCP port (0–65535; 0 picks a free one)',
    parse: (raw) => (/^[0-9]{1,5}$/.test(raw) && Number(raw) <= 65535 ? valid(Number(raw)) : invalid()),
    format: String,
  };
}

/**
 * A whole number from `min` to `max`. With `unit` and `scale`, it is written in that unit and
 * read as `scale` times as much (seconds written, milliseconds used).
 */
export function integer(min: number, max: number, options: { unit?: string; scale?: number } = {}): Kind<number> {
  const scale = options.scale ?? 1;
  return {
    expects: options.unit ? `${options.unit}, ${range(min, max)}` : `an integer, ${range(min, max)}`,
    parse(raw) {
      if (!/^[0-9]{1,15}$/.test(raw)) return invalid();
      const n = Number(raw);
      return n >= min && n <= max ? valid(n * scale) : invalid('out of range');
    },
    format: (value) => String(value / scale),
  };
}

/** Comma-separated whole numbers, each from `min` to `max`, read as `scale` times as much. */
export function integerList(min: number, max: number, maxItems: number, options: { unit: string; scale: number }): Kind<number[]> {
  return {
    expects: `comma-separated ${options.unit}, each ${range(min, max)}, at most ${maxItems}`,
    parse(raw) {
      const items = raw.split(',');
      if (items.length > maxItems || !items.every((s) => /^[0-9]{1,15}$/.test(s))) return invalid();
      const numbers = items.map(Number);
      return numbers.every((n) => n >= min && n <= max) ? valid(numbers.map((n) => n * options.scale)) : invalid('out of range');
    },
    format: (value) => value.map((n) => n / options.scale).join(','),
  };
}

/** Comma-separated lower-case DNS names, at most `maxItems`, each once. */
export function dnsNames(maxItems: number): Kind<string[]> {
  return {
    expects: `comma-separated lower-case DNS names, at most ${maxItems}`,
    parse(raw) {
      const names = raw.split(',').map((name) => name.trim());
      if (names.length > maxItems) return invalid(`more than ${maxItems}`);
      const bad = names.find((name) => !isDnsName(name));
      if (bad !== undefined) return invalid(`${JSON.stringify(bad)} is not a lower-case DNS name`);
      return new Set(names).size === names.length ? valid(names) : invalid('a name is listed twice');
    },
    format: (value) => value.join(','),
  };
}

/** Web origins (`scheme://host[:port]`, no path), as a browser sends them in `Origin`. */
export function origins(maxItems: number): Kind<string[]> {
  return {
    expects: `comma-separated web origins such as \`https://app.example.com\`, at most ${maxItems}`,
    parse(raw) {
      const list = raw.split(',').map((item) => item.trim()).filter(Boolean);
      if (list.length > maxItems) return invalid(`more than ${maxItems}`);
      const bad = list.find((item) => {
        const parsed = URL.parse(item);
        return !parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== item;
      });
      if (bad !== undefined) return invalid(`${JSON.stringify(bad)} is not an origin (scheme://host[:port], lower case, no path or trailing slash)`);
      return new Set(list).size === list.length ? valid(list) : invalid('an origin is listed twice');
    },
    format: (value) => value.join(','),
  };
}

export function boolean(): Kind<boolean> {
  return {
    expects: '`true` or `false` (`1` or `0`)',
    parse: (raw) => (raw === 'true' || raw === '1' ? valid(true) : raw === 'false' || raw === '0' ? valid(false) : invalid()),
    format: String,
  };
}

/**
 * Which proxies in front of the service to believe about the client (`X-Forwarded-For`) and the
 * protocol: none (`false`), every hop (`true`), the nearest N hops, or the listed addresses and
 * CIDR ranges. The value Fastify's `trustProxy` takes.
 */
export type ProxyTrust = boolean | number | string[];

export function proxyTrust(): Kind<ProxyTrust> {
  return {
    expects: '`true` or `false`, a number of proxy hops (1–99), or comma-separated proxy addresses and CIDR ranges',
    parse(raw) {
      if (raw === 'true') return valid(true);
      if (raw === 'false' || raw === '0') return valid(false);
      if (/^[0-9]{1,2}$/.test(raw)) return valid(Number(raw));
      const entries = raw.split(',').map((entry) => entry.trim());
      for (const entry of entries) {
        const [address, bits, extra] = entry.split('/');
        const family = isIP(address ?? '');
        if (family === 0 || extra !== undefined) return invalid(`${JSON.stringify(entry)} is not an IP address or CIDR range`);
        if (bits !== undefined && (!/^[0-9]{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128))) return invalid(`${JSON.stringify(entry)} has a bad prefix length`);
      }
      return valid(entries);
    },
    format: (value) => (Array.isArray(value) ? value.join(',') : String(value)),
  };
}

/**
 * Which private, loopback and link-local addresses outbound requests to tenants' URLs may reach:
 * all (`true`), none (`false`), or the listed addresses, CIDR ranges and host names.
 */
export type PrivateTargets = boolean | string[];

export function privateTargets(maxItems: number): Kind<PrivateTargets> {
  return {
    expects: `\`true\` or \`false\`, or comma-separated addresses, CIDR ranges and host names (at most ${maxItems})`,
    parse(raw) {
      if (raw === 'true' || raw === '1') return valid(true);
      if (raw === 'false' || raw === '0') return valid(false);
      const entries = raw.split(',').map((entry) => entry.trim().toLowerCase());
      if (entries.length > maxItems) return invalid(`more than ${maxItems}`);
      for (const entry of entries) {
        if (isDnsName(entry)) continue;
        const [address, bits, extra] = entry.split('/');
        const family = isIP(address ?? '');
        if (family === 0 || extra !== undefined) return invalid(`${JSON.stringify(entry)} is not an IP address, CIDR range or host name`);
        if (bits !== undefined && (!/^[0-9]{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128))) return invalid(`${JSON.stringify(entry)} has a bad prefix length`);
      }
      return valid(entries);
    },
    format: (value) => (Array.isArray(value) ? value.join(',') : String(value)),
  };
}

export function oneOf<const T extends string>(values: readonly T[]): Kind<T> {
  return {
    expects: `one of ${values.map((v) => `\`${v}\``).join(', ')}`,
    parse: (raw) => ((values as readonly string[]).includes(raw) ? valid(raw as T) : invalid()),
    format: String,
  };
}

/** Text matching `pattern` (anchored), of at most `maxLength` characters. */
export function text(expects: string, pattern: RegExp, maxLength: number): Kind<string> {
  return {
    expects,
    parse: (raw) => (raw.length <= maxLength && pattern.test(raw) ? valid(raw) : invalid()),
    format: String,
  };
}

// WHATWG parsing fits the web schemes; database and mail URLs may name several hosts or a socket
// directory, which it refuses, so for them the scheme and the absence of spaces are checked.
const WEB_SCHEMES = new Set(['http', 'https', 'ws', 'wss']);

/** A URL with one of `schemes`; trailing slashes are dropped, so a base URL joins with paths. */
export function url(schemes: readonly string[]): Kind<string> {
  const prefix = new RegExp(`^(${schemes.join('|')})://\\S+$`);
  return {
    expects: `a URL starting ${schemes.map((s) => `\`${s}://\``).join(' or ')}`,
    parse(raw) {
      if (raw.length > 2000 || !prefix.test(raw)) return invalid();
      if (WEB_SCHEMES.has(raw.slice(0, raw.indexOf(':'))) && !URL.canParse(raw)) return invalid();
      return valid(raw.replace(/\/+$/, ''));
    },
    format: String,
  };
}

/** A directory, made absolute against the working directory at startup. */
export function directory(): Kind<string> {
  return {
    expects: 'a directory path',
    parse: (raw) => (raw.length <= 4096 && !raw.includes('\0') ? valid(resolve(raw)) : invalid()),
    format: String,
  };
}

/** A key of `bytes` random bytes, base64 or base64url. */
const base64KeyProblem = (raw: string, bytes: number) => {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) return 'not base64';
  return Buffer.from(raw, 'base64').length === bytes ? undefined : `not ${bytes} bytes`;
};

export function base64Key(bytes: number): Kind<string> {
  return {
    expects: `${bytes} random bytes in base64 (\`openssl rand -base64 ${bytes}\`)`,
    parse(raw) {
      const problem = base64KeyProblem(raw, bytes);
      return problem === undefined ? valid(raw) : invalid(problem);
    },
    format: String,
  };
}

/** Comma-separated keys of `bytes` random bytes each, in base64, at most `maxItems`. */
export function base64Keys(bytes: number, maxItems: number): Kind<string[]> {
  return {
    expects: `comma-separated keys of ${bytes} bytes in base64, at most ${maxItems}`,
    parse(raw) {
      const items = raw.split(',').map((item) => item.trim());
      if (items.length > maxItems) return invalid(`more than ${maxItems} keys`);
      const problems = items.map((item, i) => [i, base64KeyProblem(item, bytes)] as const).filter(([, problem]) => problem !== undefined);
      return problems.length === 0 ? valid(items) : invalid(problems.map(([i, problem]) => `key ${i + 1}: ${problem}`).join('; '));
    },
    format: (value) => value.join(','),
  };
}

/** JSON matching a TypeBox schema, with an optional further check of the whole value. */
export function json<S extends TSchema>(expects: string, schema: S, check?: (value: Static<S>) => string | undefined): Kind<Static<S>> {
  return {
    expects,
    parse(raw) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        return invalid('not valid JSON');
      }
      // A `false` subschema (an unknown property) is reported twice; the parent's report names it.
      const first = [...Value.Errors(schema, parsed)].find((e) => e.keyword !== 'boolean');
      if (first) {
        const where = first.instancePath.replace(/\/(\d+)/g, '[$1]').replaceAll('/', '.').replace(/^\./, '');
        return invalid(`${where || 'the value'} ${first.message}`);
      }
      const problem = check?.(parsed as Static<S>);
      return problem ? invalid(problem) : valid(parsed as Static<S>);
    },
    format: (value) => JSON.stringify(value),
  };
}

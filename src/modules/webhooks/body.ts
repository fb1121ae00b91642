// The exact bytes of a delivery and their signature.
//
// Bodies are serialised the way Python's `json.dumps` does by default (", " and ": " separators,
// every non-ASCII character as a lowercase \uXXXX escape, Python's float spelling). Receivers built
// on the Python SDK re-serialise the parsed body and hash that, so this is the only encoding both
// they and raw-body verifiers (which hash what arrived) accept. It is still plain JSON.
import { createHmac } from 'node:crypto';
import { sha256Hex } from '../../platform/crypto/secrets.ts';

/** Seconds a signature stays valid (the JWT's exp - iat). */
export const SIGNATURE_TTL_SECONDS = 300;

export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return pythonNumber(value);
    case 'string':
      return pythonString(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
      const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
      return `{${entries.map(([k, v]) => `${pythonString(k)}: ${pythonJson(v)}`).join(', ')}}`;
    }
    default:
      throw new TypeError(`cannot serialise a ${typeof value}`);
  }
}

const SHORT_ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

function pythonString(text: string): string {
  // Python escapes everything outside printable ASCII (space..~); JS strings are UTF-16, so astral
  // characters come out as surrogate pairs, exactly as Python writes them.
  // eslint-disable-next-line no-control-regex
  return `"${text.replace(/[\\"\u0000-\u001f\u007f-\uffff]/g, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

function pythonNumber(n: number): string {
  if (!Number.isFinite(n)) return 'null';
  // Integers read back as Python ints and print the same; huge ones are floats in both ("1e+21").
  if (Number.isInteger(n)) return JSON.stringify(n);
  const abs = Math.abs(n);
  if (abs >= 1e-4 && abs < 1e16) return String(n);
  // Python's repr switches to exponent notation below 1e-4 and pads the exponent to two digits.
  const [mantissa, exponent] = n.toExponential().split('e') as [string, string];
  const e = Number(exponent);
  return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
}

const JWT_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/**
 * `Bearer <jwt>`: HS256 keyed by the secret's UTF-8 bytes, claims {sha256, iat, exp}. Built with
 * node:crypto directly (a compact JWS is three base64url parts): synchronous, where jose's WebCrypto
 * HMAC costs a thread-pool round trip on every delivery. Receivers verify it with any JWT library.
 * The key is the string itself (node:crypto reads it as UTF-8): a Buffer key costs ~10 µs more per
 * signature in Node 24's key handling.
 */
export function signatureHeader(secret: string, body: Uint8Array, issuedAtSeconds: number): string {
  const claims = Buffer.from(JSON.stringify({ sha256: sha256Hex(body), iat: issuedAtSeconds, exp: issuedAtSeconds + SIGNATURE_TTL_SECONDS })).toString('base64url');
  const signature = createHmac('sha256', secret).update(`${JWT_HEADER}.${claims}`).digest('base64url');
  return `Bearer ${JWT_HEADER}.${claims}.${signature}`;
}

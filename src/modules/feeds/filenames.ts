// Names of the files a subscription writes: `filename_datetime_format` with the tokens of MeshAgent's
// feeds (YYYY, MM, DD, hh, mm, ss, and SSS for milliseconds), in UTC, from the time of the file's
// first message; slashes make folders. A suffix naming the subscription and the first message's
// sequence number keeps two files apart even when their time renders the same.
import { badRequest } from '../../platform/http/errors.ts';

export const DEFAULT_DATETIME_FORMAT = 'YYYY-MM-DDThh_mm_ssZ';
export const MAX_DATETIME_FORMAT_LENGTH = 200;

const TOKENS: Record<string, (t: Date) => string> = {
  YYYY: (t) => String(t.getUTCFullYear()).padStart(4, '0'),
  SSS: (t) => String(t.getUTCMilliseconds()).padStart(3, '0'),
  MM: (t) => String(t.getUTCMonth() + 1).padStart(2, '0'),
  DD: (t) => String(t.getUTCDate()).padStart(2, '0'),
  hh: (t) => String(t.getUTCHours()).padStart(2, '0'),
  mm: (t) => String(t.getUTCMinutes()).padStart(2, '0'),
  ss: (t) => String(t.getUTCSeconds()).padStart(2, '0'),
};
const TOKEN_NAMES = Object.keys(TOKENS);
const LITERAL = /^[A-Za-z0-9._\-/]$/;

type Part = { token: string } | { literal: string };

function parse(format: string): Part[] {
  const parts: Part[] = [];
  for (let i = 0; i < format.length;) {
    const token = TOKEN_NAMES.find((name) => format.startsWith(name, i));
    if (token) {
      parts.push({ token });
      i += token.length;
      continue;
    }
    const char = format[i]!;
    if (!LITERAL.test(char)) throw badRequest(`filename_datetime_format may only hold the tokens ${TOKEN_NAMES.join(', ')} and the characters A–Z, a–z, 0–9, ".", "_", "-" and "/" (found ${JSON.stringify(char)})`);
    parts.push({ literal: char });
    i += 1;
  }
  return parts;
}

/** Checks a format at create/update; 400 with the reason when it is not usable. */
export function validateDatetimeFormat(format: string): string {
  if (format.length === 0 || format.length > MAX_DATETIME_FORMAT_LENGTH) throw badRequest(`filename_datetime_format must have 1–${MAX_DATETIME_FORMAT_LENGTH} characters`);
  parse(format);
  const segments = format.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) throw badRequest('filename_datetime_format may not start or end with "/", repeat it, or have "." or ".." folders');
  return format;
}

/** The path of a file, relative to the subscription's folder: `<format at time>_<subscription>_<seq>.jsonl`. */
export function fileNameFor(format: string | null, time: Date, subscriptionId: string, firstSeq: number): string {
  const rendered = parse(format ?? DEFAULT_DATETIME_FORMAT).map((p) => ('token' in p ? TOKENS[p.token]!(time) : p.literal)).join('');
  return `${rendered}_${subscriptionId.slice(0, 8)}_${String(firstSeq).padStart(12, '0')}.jsonl`;
}

// Reading a few members out of JSON that arrives in pieces and may be of any size (a streamed
// Responses event that echoes a whole conversation, a plain answer of tens of megabytes), without
// holding it: the bytes are scanned once as they pass, and only the values at the paths asked for
// are kept and parsed. Structural characters are ASCII and UTF-8 never puts a byte below 0x80 inside
// a multi-byte character, so the scan works on bytes without decoding them.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Longest value kept (usage objects, model names and event types are a few hundred bytes). */
const MAX_VALUE_BYTES = 64 * 1024;

interface Frame {
  object: boolean;
  /** The member being read (objects), as its raw bytes' text; undefined in arrays or before the first key. */
  key: string | undefined;
}

/**
 * Scans JSON text pushed in pieces and keeps the values found at `paths` (member names from the
 * root, e.g. `['response', 'usage']`): `result()` gives them as a partial object of the same shape.
 * Text that is not JSON yields what was found before it went wrong, never an exception.
 */
export class JsonScanner {
  readonly #paths: readonly (readonly string[])[];
  readonly #maxDepth: number;
  readonly #stack: Frame[] = [];
  #inString = false;
  /** Backslashes right before the current position inside a string (odd: the next byte is escaped). */
  #backslashes = 0;
  /** The string being read is a member name at a depth some path reaches: its bytes are kept. */
  #keyBytes: Buffer[] | undefined;
  /** A member name was read and its colon not yet seen. */
  #expectColon = false;
  /** The value being kept: its path and its bytes so far, and the depth of the object holding it. */
  #capture: { path: readonly string[]; bytes: Buffer[]; size: number; depth: number } | undefined;
  readonly #found = new Map<string, unknown>();

  constructor(paths: readonly (readonly string[])[]) {
    this.#paths = paths;
    this.#maxDepth = Math.max(...paths.map((p) => p.length));
  }

  push(chunk: Buffer): void {
    let i = 0;
    const n = chunk.length;
    let captureFrom = 0;
    while (i < n) {
      if (this.#inString) {
        const quote = chunk.indexOf(QUOTE, i);
        const end = quote === -1 ? n : quote;
        // Backslashes just before `end` decide whether a quote there is escaped.
        let run = 0;
        while (end - run - 1 >= i && chunk[end - run - 1] === BACKSLASH) run += 1;
        const backslashes = end - run === i ? this.#backslashes + run : run;
        if (this.#keyBytes) this.#keyBytes.push(chunk.subarray(i, end));
        if (quote === -1) {
          this.#backslashes = backslashes;
          break;
        }
        this.#backslashes = 0;
        i = quote + 1;
        if (backslashes % 2 === 1) {
          if (this.#keyBytes) this.#keyBytes.push(chunk.subarray(quote, quote + 1));
          continue;
        }
        this.#inString = false;
        if (this.#keyBytes) {
          const top = this.#stack.at(-1)!;
          top.key = Buffer.concat(this.#keyBytes).toString('utf8');
          this.#keyBytes = undefined;
          this.#expectColon = true;
        }
        continue;
      }
      const c = chunk[i]!;
      if (c === QUOTE) {
        const top = this.#stack.at(-1);
        this.#inString = true;
        this.#backslashes = 0;
        if (top?.object && top.key === undefined && !this.#expectColon) {
          // A member name: kept when some path goes this deep.
          this.#keyBytes = this.#stack.length <= this.#maxDepth ? [] : undefined;
          if (!this.#keyBytes) top.key = '';
        }
      } else if (c === COLON && this.#expectColon) {
        this.#expectColon = false;
        if (!this.#capture) {
          const path = this.#pathHere();
          if (path) {
            this.#capture = { path, bytes: [], size: 0, depth: this.#stack.length };
            captureFrom = i + 1;
          }
        }
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        this.#stack.push({ object: c === OPEN_OBJECT, key: undefined });
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY || c === COMMA) {
        if (this.#capture && this.#stack.length === this.#capture.depth) {
          this.#keep(chunk.subarray(captureFrom, i));
          this.#finish();
        }
        if (c === COMMA) {
          const top = this.#stack.at(-1);
          if (top?.object) top.key = undefined;
        } else {
          this.#stack.pop();
        }
      }
      i += 1;
    }
    if (this.#capture) this.#keep(chunk.subarray(captureFrom, n));
  }

  /** The values found, as a partial object (`{response: {usage: {...}}}`). */
  result(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, value] of this.#found) {
      const path = JSON.parse(key) as string[];
      let at = out;
      for (const name of path.slice(0, -1)) at = (at[name] ??= {}) as Record<string, unknown>;
      at[path.at(-1)!] = value;
    }
    return out;
  }

  /** The path asked for that the member just named completes, if any. */
  #pathHere(): readonly string[] | undefined {
    if (this.#stack.length > this.#maxDepth) return undefined;
    return this.#paths.find((path) => path.length === this.#stack.length && this.#stack.every((frame, d) => frame.object && frame.key === path[d]));
  }

  #keep(bytes: Buffer): void {
    const capture = this.#capture!;
    if (bytes.length === 0) return;
    capture.size += bytes.length;
    if (capture.size <= MAX_VALUE_BYTES) capture.bytes.push(Buffer.from(bytes));
  }

  #finish(): void {
    const capture = this.#capture!;
    this.#capture = undefined;
    if (capture.size > MAX_VALUE_BYTES) return;
    try {
      this.#found.set(JSON.stringify(capture.path), JSON.parse(Buffer.concat(capture.bytes).toString('utf8')));
    } catch {
      // Not JSON: nothing found there.
    }
  }
}

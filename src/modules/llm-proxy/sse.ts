// Server-sent events found in the bytes of a stream as it passes, without decoding it: the proxy
// reads a handful of a stream's events and passes the rest on as the bytes it was given.
import { JsonScanner } from './json-scan.ts';

const LF = 0x0a;
const CR = 0x0d;
const NO_BYTES = Buffer.alloc(0);

/**
 * Splits a byte stream into server-sent events. Each event is given as its bytes, up to and
 * including the line ending of the blank line that ends it; line endings may be LF, CRLF or CR,
 * mixed (the SSE grammar). Where an event lies within one chunk its bytes are a view of that chunk.
 * An event longer than `maxEventBytes` comes in pieces: `cut` says when the last one given is such a
 * piece, the event going on in what comes next.
 */
export class SseSplitter {
  /**
   * Most bytes held for an event not ended yet. Past it they are given on as they are, as if an
   * event had ended there (the rest of it comes as more such pieces), so that a stream which never
   * sends a blank line cannot grow the proxy's memory; no event worth reading is that long.
   */
  readonly #maxEventBytes: number;
  /** Bytes of the event not ended yet. */
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** No byte since the last line ending (so a line ending now ends a blank line). */
  #lineEmpty = true;
  /** The last byte seen was a CR: an LF coming next belongs to the same line ending. */
  #afterCR = false;
  /** ... and that CR ended a blank line, so an event ends with it (or with the LF after it). */
  #eventEndsAfterCR = false;
  #cut = false;

  constructor(maxEventBytes = 1024 * 1024) {
    this.#maxEventBytes = maxEventBytes;
  }

  /** Whether the last of the events `push` gave is a piece of an event that goes on. */
  get cut(): boolean {
    return this.#cut;
  }

  /** The events that `chunk` ends, in order. */
  push(chunk: Buffer): Buffer[] {
    const events: Buffer[] = [];
    this.#cut = false;
    const n = chunk.length;
    let start = 0; // where the bytes of the current event begin in `chunk`
    let pos = 0;
    if (this.#afterCR && n > 0) {
      this.#afterCR = false;
      if (chunk[0] === LF) pos = 1;
      if (this.#eventEndsAfterCR) {
        this.#eventEndsAfterCR = false;
        // Nothing to give when a piece cut at the limit already gave the event's bytes.
        const event = this.#take(chunk, 0, pos);
        if (event.length > 0) events.push(event);
        start = pos;
      }
    }
    let nextCR = chunk.indexOf(CR, pos);
    while (pos < n) {
      const nextLF = chunk.indexOf(LF, pos);
      if (nextCR !== -1 && nextCR < pos) nextCR = chunk.indexOf(CR, pos);
      const eol = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
      if (eol === -1) {
        this.#lineEmpty = false;
        break;
      }
      const blank = eol === pos && this.#lineEmpty;
      this.#lineEmpty = true;
      if (chunk[eol] === CR && eol + 1 === n) {
        // Whether an LF follows is for the next chunk to say.
        this.#afterCR = true;
        this.#eventEndsAfterCR = blank;
        pos = n;
        break;
      }
      const end = chunk[eol] === CR && chunk[eol + 1] === LF ? eol + 2 : eol + 1;
      if (blank) {
        events.push(this.#take(chunk, start, end));
        start = end;
      }
      pos = end;
    }
    if (start < n) {
      if (this.#pendingBytes + n - start > this.#maxEventBytes) {
        events.push(this.#take(chunk, start, n));
        this.#cut = true;
      } else {
        this.#pending.push(start === 0 ? chunk : chunk.subarray(start));
        this.#pendingBytes += n - start;
      }
    }
    return events;
  }

  /** At the end of the stream: an event that its very last byte ended, if any. */
  end(): Buffer | undefined {
    if (!this.#eventEndsAfterCR) return undefined;
    this.#afterCR = false;
    this.#eventEndsAfterCR = false;
    return this.#take(NO_BYTES, 0, 0);
  }

  /** What is left that no blank line ended. */
  rest(): Buffer {
    return this.#take(NO_BYTES, 0, 0);
  }

  /** The pending bytes and `chunk[start, end)` as one event; nothing is pending after. */
  #take(chunk: Buffer, start: number, end: number): Buffer {
    const tail = start === 0 && end === chunk.length ? chunk : chunk.subarray(start, end);
    if (this.#pending.length === 0) return tail;
    const whole = Buffer.concat([...this.#pending, tail]);
    this.#pending = [];
    this.#pendingBytes = 0;
    return whole;
  }
}

/** An event's `event` field and its data lines joined with LF, decoded; comments and other fields ignored. */
export function sseFields(event: Buffer): { event: string | undefined; data: string } {
  let name: string | undefined;
  const data: string[] = [];
  for (const line of event.toString('utf8').split(/\r\n|\n|\r/)) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(line[5] === ' ' ? 6 : 5));
  }
  return { event: name, data: data.join('\n') };
}

const EVENT_FIELD = Buffer.from('event:');

/**
 * An event's `event` field without decoding the rest (a cheap look before deciding to read it);
 * undefined when it has none. Latin-1 is enough: the names worth comparing are ASCII.
 */
export function sseEventName(event: Buffer): string | undefined {
  let at = event.indexOf(EVENT_FIELD);
  while (at > 0 && event[at - 1] !== LF && event[at - 1] !== CR) at = event.indexOf(EVENT_FIELD, at + 1);
  if (at === -1) return undefined;
  let end = at + EVENT_FIELD.length;
  while (end < event.length && event[end] !== LF && event[end] !== CR) end++;
  return event.toString('latin1', at + EVENT_FIELD.length, end).trim();
}

/** Paths of the members that say what a stream event is and what it used. */
const EVENT_PATHS = [['type'], ['model'], ['usage'], ['error'], ['response', 'model'], ['response', 'usage'], ['message', 'model'], ['message', 'usage']];
const COLON = 0x3a;
const SPACE = 0x20;
const NEWLINE = Buffer.from('\n');

/**
 * Reads an event too long to hold as it passes in pieces: its `event` field, and from its data (the
 * data lines joined, as JSON) the members that carry a type, a model, usage or an error.
 */
export class SseEventScanner {
  readonly #json = new JsonScanner(EVENT_PATHS);
  /** What the current line is: its field name still being read, data, the event name, or another field. */
  #mode: 'field' | 'data' | 'name' | 'skip' = 'field';
  #field: number[] = [];
  #name: number[] = [];
  #dataLines = 0;
  /** The next byte starts a field's value (an optional space is dropped there). */
  #valueStart = false;
  #afterCR = false;

  push(piece: Buffer): void {
    let i = 0;
    const n = piece.length;
    while (i < n) {
      const c = piece[i]!;
      if (this.#afterCR) {
        this.#afterCR = false;
        if (c === LF) {
          i += 1;
          continue;
        }
      }
      if (c === LF || c === CR) {
        this.#mode = 'field';
        this.#field = [];
        this.#afterCR = c === CR;
        i += 1;
        continue;
      }
      if (this.#valueStart) {
        this.#valueStart = false;
        if (c === SPACE) {
          i += 1;
          continue;
        }
      }
      if (this.#mode === 'field') {
        if (c === COLON) this.#startValue(String.fromCharCode(...this.#field));
        else if (this.#field.length < 8) this.#field.push(c);
        else this.#mode = 'skip';
        i += 1;
        continue;
      }
      let eol = piece.indexOf(LF, i);
      const cr = piece.indexOf(CR, i);
      if (eol === -1 || (cr !== -1 && cr < eol)) eol = cr;
      if (eol === -1) eol = n;
      if (this.#mode === 'data') this.#json.push(piece.subarray(i, eol));
      else if (this.#mode === 'name') for (let j = i; j < eol && this.#name.length < 128; j++) this.#name.push(piece[j]!);
      i = eol;
    }
  }

  /** The event's name (undefined without one) and what its data held of interest. */
  result(): { name: string | undefined; data: Record<string, unknown> } {
    return { name: this.#name.length > 0 ? Buffer.from(this.#name).toString('utf8').trim() : undefined, data: this.#json.result() };
  }

  #startValue(field: string): void {
    this.#valueStart = true;
    if (field === 'data') {
      this.#mode = 'data';
      // Data lines are joined with a line feed: whitespace, to JSON.
      if (this.#dataLines++ > 0) this.#json.push(NEWLINE);
    } else if (field === 'event') {
      this.#mode = 'name';
      this.#name = [];
    } else {
      this.#mode = 'skip';
    }
  }
}

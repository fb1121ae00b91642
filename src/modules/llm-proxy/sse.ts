// Server-sent events found in the bytes of a stream as it passes, without decoding it: the proxy
// reads a handful of a stream's events and passes the rest on as the bytes it was given.
const LF = 0x0a;
const CR = 0x0d;
const NO_BYTES = Buffer.alloc(0);

/**
 * Splits a byte stream into server-sent events. Each event is given as its bytes, up to and
 * including the line ending of the blank line that ends it; line endings may be LF, CRLF or CR,
 * mixed (the SSE grammar). Where an event lies within one chunk its bytes are a view of that chunk.
 * An event longer than `maxEventBytes` comes in pieces.
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

  constructor(maxEventBytes = 1024 * 1024) {
    this.#maxEventBytes = maxEventBytes;
  }

  /** The events that `chunk` ends, in order. */
  push(chunk: Buffer): Buffer[] {
    const events: Buffer[] = [];
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

// Group commit: writes of the same group that arrive while the group's previous write is on its
// way travel together in the next one, so a busy path costs one statement per round trip rather
// than one per request. Each item still gets its own result (or the write's error).
//
// The first write of a group is sent after the current turn of the event loop has read its
// sockets, so that requests that arrived together share it too (on PGlite a query runs at once, so
// without this nothing would ever wait for one in flight). A writer nobody waits on (a record
// written after its response) may linger longer, so that writes spread out in time still share a
// statement; `flush` sends what lingers at once (on shutdown).

import { outsideRequestTransaction } from './scope.ts';

interface Waiting<T, R> {
  items: T[];
  waiters: { resolve: (result: R) => void; reject: (error: unknown) => void }[];
}

export class GroupCommit<T, R> {
  readonly #write: (items: T[]) => Promise<R[]>;
  readonly #waiting = new Map<string, Waiting<T, R>>();
  readonly #sending = new Set<string>();
  readonly #lingerMs: number;
  readonly #lingering = new Map<string, NodeJS.Timeout>();
  readonly #inFlight = new Set<Promise<void>>();

  /**
   * `write` writes the items of one group in one go and answers one result per item, in order;
   * `lingerMs` holds a group's first write that long for others to join it.
   */
  constructor(write: (items: T[]) => Promise<R[]>, options: { lingerMs?: number } = {}) {
    this.#write = write;
    this.#lingerMs = options.lingerMs ?? 0;
  }

  /** Adds an item to its group's next write; its result once that write is done. */
  add(group: string, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let waiting = this.#waiting.get(group);
      if (!waiting) this.#waiting.set(group, (waiting = { items: [], waiters: [] }));
      waiting.items.push(item);
      waiting.waiters.push({ resolve, reject });
      if (this.#sending.has(group)) return;
      this.#sending.add(group);
      if (this.#lingerMs > 0) this.#lingering.set(group, setTimeout(() => this.#start(group), this.#lingerMs));
      else setImmediate(() => this.#start(group));
    });
  }

  /** Sends every lingering group now; resolves once every write under way is done. */
  async flush(): Promise<void> {
    for (const group of [...this.#lingering.keys()]) this.#start(group);
    await Promise.all(this.#inFlight);
  }

  #start(group: string): void {
    const timer = this.#lingering.get(group);
    if (timer) clearTimeout(timer);
    this.#lingering.delete(group);
    // A group carries many requests' items: its write is none's request transaction.
    const sending = outsideRequestTransaction(() => this.#send(group));
    this.#inFlight.add(sending);
    void sending.finally(() => this.#inFlight.delete(sending));
  }

  /** Writes the group's waiting items, one write per round trip, until none waits. */
  async #send(group: string): Promise<void> {
    try {
      for (let waiting = this.#waiting.get(group); waiting; waiting = this.#waiting.get(group)) {
        this.#waiting.delete(group);
        try {
          const results = await this.#write(waiting.items);
          waiting.waiters.forEach((waiter, i) => waiter.resolve(results[i]!));
        } catch (error) {
          for (const waiter of waiting.waiters) waiter.reject(error);
        }
      }
    } finally {
      this.#sending.delete(group);
    }
  }
}

// A request budget per key and fixed window, shared by every instance, without a database round
// trip per request. An instance reserves hits from the key's counter in the database in blocks (a
// lease) and spends them in memory; once the database's count reaches the limit, the instance
// refuses until the window ends, asking nothing more.
//
// Every hit allowed anywhere was reserved first, so all instances together never allow more than
// the limit in one window. What a lease leaves unspent when its window ends is lost: near the
// limit, N instances may refuse up to N blocks early. A key's first block is one hit (most clients
// make a request or two), and it doubles while the key keeps coming, up to a sixteenth of the
// limit, so a client at the limit costs one statement per sixteenth of its budget.
import { LRUCache } from 'lru-cache';
import type { RateCounters } from './counters.ts';

interface Lease {
  /** When the database's window ends (epoch ms); Infinity until the first reservation answers. */
  windowEnds: number;
  /** Hits reserved within the limit for this window, and how many of them were spent. */
  granted: number;
  spent: number;
  /** The database's count at the last reservation; once it reaches the limit, nothing more to reserve. */
  count: number;
  /** The size of the next reservation. */
  block: number;
  reserving: Promise<void> | undefined;
}

export interface Take {
  allowed: boolean;
  /** When the key's window ends (epoch ms). */
  resetAt: number;
}

// Keys in memory at once; forgetting one only loses its unspent hits (the database keeps the count).
const KEYS_KEPT = 100_000;

export class LeasedBudget {
  readonly #counters: RateCounters;
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #largestBlock: number;
  readonly #leases = new LRUCache<string, Lease>({ max: KEYS_KEPT });

  constructor(counters: RateCounters, limit: number, windowMs: number, now: () => number = Date.now) {
    this.#counters = counters;
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#now = now;
    this.#largestBlock = Math.max(1, Math.floor(limit / 16));
  }

  /** Spends one hit of the key's budget in the current window, if any is left. */
  async take(key: string): Promise<Take> {
    for (;;) {
      let lease = this.#leases.get(key);
      if (!lease || this.#now() >= lease.windowEnds) {
        lease = { windowEnds: Number.POSITIVE_INFINITY, granted: 0, spent: 0, count: 0, block: 1, reserving: undefined };
        this.#leases.set(key, lease);
      }
      if (lease.spent < lease.granted) {
        lease.spent += 1;
        return { allowed: true, resetAt: lease.windowEnds };
      }
      if (lease.count >= this.#limit) return { allowed: false, resetAt: lease.windowEnds };
      // Hits that find the lease spent wait for one reservation, then try again.
      const current = lease;
      current.reserving ??= this.#reserve(key, current).finally(() => { current.reserving = undefined; });
      await current.reserving;
    }
  }

  async #reserve(key: string, lease: Lease): Promise<void> {
    // No more than the limit leaves, as far as this instance knows the count.
    const block = Math.min(lease.block, this.#limit - lease.count);
    const window = await this.#counters.add(key, block, this.#windowMs);
    if (window.resetAt !== lease.windowEnds) {
      // The first answer, or the database's window ended and this block opened the next one.
      lease.windowEnds = window.resetAt;
      lease.granted = 0;
      lease.spent = 0;
    }
    const countBefore = window.count - block;
    lease.granted += Math.max(0, Math.min(block, this.#limit - countBefore));
    lease.count = window.count;
    lease.block = Math.min(lease.block * 2, this.#largestBlock);
  }
}

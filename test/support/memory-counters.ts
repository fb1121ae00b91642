// The database's rate-limit counters (src/platform/limits/counters.ts) as fixed windows in memory,
// for unit tests of what sits on them (sign-in and request limits, leases). Each call is recorded
// with the keys it was about, and `add` answers after a turn of the event loop, as a round trip
// would, so that hits arriving meanwhile have to wait for it.
import type { RateCounters, Window } from '../../src/platform/limits/counters.ts';

export function memoryCounters(now: () => number) {
  const windows = new Map<string, Window>();
  /** The keys of each call, in order: one entry per statement the database would have run. */
  const asked: string[][] = [];
  const current = (key: string) => {
    const w = windows.get(key);
    return w && w.resetAt > now() ? w : undefined;
  };
  const addTo = (key: string, n: number, windowMs: number) => {
    const w = current(key) ?? { count: 0, resetAt: now() + windowMs };
    const next = { count: w.count + n, resetAt: w.resetAt };
    windows.set(key, next);
    return next;
  };
  const counters = {
    async hit(keys: readonly string[], windowMs: number): Promise<Window[]> {
      asked.push([...keys]);
      return keys.map((key) => addTo(key, 1, windowMs));
    },
    async add(key: string, n: number, windowMs: number): Promise<Window> {
      asked.push([key]);
      await new Promise((resolve) => setImmediate(resolve));
      return addTo(key, n, windowMs);
    },
    async peek(keys: readonly string[]): Promise<Window[]> {
      asked.push([...keys]);
      return keys.map((key) => current(key) ?? { count: 0, resetAt: now() });
    },
  };
  return { counters: counters as unknown as RateCounters, asked, windows };
}

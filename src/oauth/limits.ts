// Attempt limits for sign-in, one-time codes, sign-up and password reset: a fixed window per email
// address and per client IP. Wrong passwords and codes count; so does every request that sends
// mail. A successful sign-in costs nothing. Counters live in this instance's memory, so behind N instances an
// attacker gets up to N times the budget; the per-account limit still turns an online password
// search into years. There is no permanent lockout: a locked window simply ends.
import { LRUCache } from 'lru-cache';

interface Window {
  count: number;
  resetAt: number;
}

export interface LimitVerdict {
  allowed: boolean;
  /** Seconds until the tighter exhausted window ends (0 when allowed). */
  retryAfter: number;
}

const normalise = (account: string) => account.trim().toLowerCase();

export class AttemptLimiter {
  readonly #windows: LRUCache<string, Window>;
  readonly #perAccount: number;
  readonly #perIp: number;
  readonly #windowMs: number;

  constructor(limits: { perAccount: number; perIp: number; windowMs: number }) {
    this.#perAccount = limits.perAccount;
    this.#perIp = limits.perIp;
    this.#windowMs = limits.windowMs;
    this.#windows = new LRUCache({ max: 100_000, ttl: limits.windowMs });
  }

  /** Counts a request that costs something (mail sent) and refuses once either budget is spent. */
  attempt(account: string, ip: string): LimitVerdict {
    const verdict = this.check(account, ip);
    if (verdict.allowed) this.fail(account, ip);
    return verdict;
  }

  /** Whether guessing may go on; failed guesses are counted with `fail`, successes are free. */
  check(account: string, ip: string): LimitVerdict {
    const now = Date.now();
    const a = this.#current(`a:${normalise(account)}`, now);
    const i = this.#current(`i:${ip}`, now);
    const overAccount = a !== undefined && a.count >= this.#perAccount;
    const overIp = i !== undefined && i.count >= this.#perIp;
    if (!overAccount && !overIp) return { allowed: true, retryAfter: 0 };
    const resets = [overAccount ? a.resetAt : 0, overIp ? i.resetAt : 0];
    return { allowed: false, retryAfter: Math.ceil((Math.max(...resets) - now) / 1000) };
  }

  /** Records a failed attempt (or a costly request) against the account and the IP. */
  fail(account: string, ip: string): void {
    const now = Date.now();
    this.#hit(`a:${normalise(account)}`, now);
    this.#hit(`i:${ip}`, now);
  }

  #current(key: string, now: number): Window | undefined {
    const window = this.#windows.get(key);
    return window && window.resetAt > now ? window : undefined;
  }

  #hit(key: string, now: number): Window {
    let window = this.#windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + this.#windowMs };
      this.#windows.set(key, window);
    }
    window.count += 1;
    return window;
  }
}

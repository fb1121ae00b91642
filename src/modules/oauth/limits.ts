// Attempt limits for sign-in, one-time codes, sign-up and password reset: a fixed window per email
// address and per client IP (by the ATRIUM_TRUST_PROXY rule). Wrong passwords and codes count; so
// does every request that sends mail. A successful sign-in costs nothing. The counters live in the
// database (platform/limits), so N instances on one PostgreSQL give the same budget as one. There
// is no permanent lockout: a locked window simply ends.
import type { RateCounters, Window } from '../../platform/limits/counters.ts';
import { LeasedBudget } from '../../platform/limits/leases.ts';

export interface LimitVerdict {
  allowed: boolean;
  /** Seconds until the tighter exhausted window ends (0 when allowed). */
  retryAfter: number;
}

const normalise = (account: string) => account.trim().toLowerCase();

/** Whole seconds until `at` (epoch ms), at least one: what `Retry-After` says. */
const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));

/** Allowed when every window is within its limit; else the wait until the last exhausted one ends. */
export function judge(windows: readonly Window[], limits: readonly number[], now: number, counted: boolean): LimitVerdict {
  // After counting, the request itself is in the count: over means beyond the limit.
  const over = windows.map((w, i) => (counted ? w.count > limits[i]! : w.count >= limits[i]!));
  if (!over.some(Boolean)) return { allowed: true, retryAfter: 0 };
  const resets = windows.filter((_, i) => over[i]).map((w) => w.resetAt);
  return { allowed: false, retryAfter: secondsUntil(Math.max(...resets), now) };
}

export class AttemptLimiter {
  readonly #counters: RateCounters;
  readonly #perAccount: number;
  readonly #perIp: number;
  readonly #windowMs: number;
  readonly #now: () => number;

  constructor(counters: RateCounters, limits: { perAccount: number; perIp: number; windowMs: number }, now: () => number = Date.now) {
    this.#counters = counters;
    this.#perAccount = limits.perAccount;
    this.#perIp = limits.perIp;
    this.#windowMs = limits.windowMs;
    this.#now = now;
  }

  #keys(account: string, ip: string): string[] {
    return [`signin:a:${normalise(account)}`, `signin:i:${ip}`];
  }

  /** Counts a request that costs something (mail sent) and refuses once either budget is spent. */
  async attempt(account: string, ip: string): Promise<LimitVerdict> {
    const windows = await this.#counters.hit(this.#keys(account, ip), this.#windowMs);
    return judge(windows, [this.#perAccount, this.#perIp], this.#now(), true);
  }

  /** Counts a costly request that names no account (a passkey challenge) against the IP alone. */
  async attemptFromIp(ip: string): Promise<LimitVerdict> {
    const windows = await this.#counters.hit([`signin:i:${ip}`], this.#windowMs);
    return judge(windows, [this.#perIp], this.#now(), true);
  }

  /** Whether guessing may go on; failed guesses are counted with `fail`, successes are free. */
  async check(account: string, ip: string): Promise<LimitVerdict> {
    const windows = await this.#counters.peek(this.#keys(account, ip));
    return judge(windows, [this.#perAccount, this.#perIp], this.#now(), false);
  }

  /** Records a failed attempt (or a costly request) against the account and the IP. */
  async fail(account: string, ip: string): Promise<void> {
    await this.#counters.hit(this.#keys(account, ip), this.#windowMs);
  }
}

/**
 * A per-client-address limit on one kind of request (the token endpoint, the device-code page),
 * spent from leases (platform/limits/leases.ts): no database round trip for most requests, and
 * never more than the limit over all instances.
 */
export class RequestLimiter {
  readonly #budget: LeasedBudget;
  readonly #name: string;
  readonly #now: () => number;

  constructor(counters: RateCounters, name: string, limit: number, windowMs: number, now: () => number = Date.now) {
    this.#budget = new LeasedBudget(counters, limit, windowMs, now);
    this.#name = name;
    this.#now = now;
  }

  async hit(ip: string): Promise<LimitVerdict> {
    const { allowed, resetAt } = await this.#budget.take(`${this.#name}:i:${ip}`);
    return allowed ? { allowed, retryAfter: 0 } : { allowed, retryAfter: secondsUntil(resetAt, this.#now()) };
  }
}

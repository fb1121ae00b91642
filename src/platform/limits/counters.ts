// Rate-limit counters in the database, so that N instances on one PostgreSQL give a client the same
// budget as one: fixed windows, one row per key, counted with atomic upserts (no read then write, so
// concurrent requests on different instances never lose a count). Rows of ended windows are reset
// in place when their key comes back, and pruned in the background otherwise.
//
// A busy key (one client address hammering the token endpoint) would make every request wait for
// the row lock of the one before: hits on the same keys are group-committed (db/group-commit.ts),
// one upsert adding their number at once. Each hit still gets its own place in the window, exactly
// as if counted alone.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/engine.ts';
import { GroupCommit } from '../db/group-commit.ts';
import { CompiledSql } from '../db/statements.ts';
import { rowsOf } from '../db/rows.ts';

export interface Window {
  count: number;
  /** Epoch milliseconds at which the window ends. */
  resetAt: number;
}

/** The hits that share one upsert: the same keys, the same window length. */
interface Hit {
  keys: readonly string[];
  windowMs: number;
}

// Every token request counts its client address: the statement is built once.
const countHits = new CompiledSql(sql`
  insert into rate_limits (key, count, window_ends)
  select k, ${sql.placeholder('n')}::int, ${sql.placeholder('ends')}::timestamptz from unnest(${sql.placeholder('keys')}::text[]) as k
  on conflict (key) do update set
    count = case when rate_limits.window_ends <= ${sql.placeholder('start')}::timestamptz then excluded.count else rate_limits.count + excluded.count end,
    window_ends = case when rate_limits.window_ends <= ${sql.placeholder('start')}::timestamptz then excluded.window_ends else rate_limits.window_ends end
  returning key, count, window_ends`);

export class RateCounters {
  readonly #db: Db;
  readonly #now: () => number;
  readonly #hits = new GroupCommit<Hit, Window[]>((hits) => this.#count(hits));

  constructor(db: Db, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /** Adds one to each key's current window (`windowMs` long when it starts now); the windows after counting. */
  async hit(keys: readonly string[], windowMs: number): Promise<Window[]> {
    const unique = [...new Set(keys)];
    const windows = await this.#hits.add(JSON.stringify([unique, windowMs]), { keys: unique, windowMs });
    return keys.map((key) => windows[unique.indexOf(key)]!);
  }

  /** Adds `n` hits to one key's current window in one statement (a lease, leases.ts); the window after. */
  async add(key: string, n: number, windowMs: number): Promise<Window> {
    return (await this.#add([key], n, windowMs))[0]!;
  }

  /** Counts hits on the same keys at once; the i-th of n holds place count - n + 1 + i of each window. */
  async #count(hits: Hit[]): Promise<Window[][]> {
    const n = hits.length;
    const windows = await this.#add(hits[0]!.keys, n, hits[0]!.windowMs);
    return hits.map((_hit, i) => windows.map((w) => ({ ...w, count: w.count - n + 1 + i })));
  }

  async #add(keys: readonly string[], n: number, windowMs: number): Promise<Window[]> {
    const now = this.#now();
    const start = new Date(now).toISOString();
    const ends = new Date(now + windowMs).toISOString();
    const rows = await countHits.run(this.#db, { n, ends, start, keys: toArray(keys) });
    return byKey(keys, rowsOf<{ key: string; count: number; window_ends: string | Date }>(rows), now);
  }

  /** The keys' current windows, without counting (a key with no live window: count 0). */
  async peek(keys: readonly string[]): Promise<Window[]> {
    const now = this.#now();
    const rows = await this.#db.execute<{ key: string; count: number; window_ends: string | Date }>(sql`
      select key, count, window_ends from rate_limits
      where key = any(${toArray(keys)}::text[]) and window_ends > ${new Date(now).toISOString()}::timestamptz`);
    return byKey(keys, rowsOf(rows), now);
  }

  /** Deletes up to `batch` rows whose window ended before `before`; how many. */
  async prune(before: Date, batch: number): Promise<number> {
    const rows = await this.#db.execute(sql`
      delete from rate_limits where key in (
        select key from rate_limits where window_ends < ${before.toISOString()}::timestamptz limit ${batch}
      ) returning 1`);
    return rowsOf(rows).length;
  }
}

/** A text[] parameter (drizzle would otherwise spread an array into a list). */
const toArray = (keys: readonly string[]) => `{${keys.map((k) => `"${k.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;

function byKey(keys: readonly string[], rows: { key: string; count: number; window_ends: string | Date }[], now: number): Window[] {
  const found = new Map(rows.map((r) => [r.key, { count: Number(r.count), resetAt: new Date(r.window_ends).getTime() }]));
  return keys.map((key) => found.get(key) ?? { count: 0, resetAt: now });
}

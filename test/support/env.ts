// What the driver (test/run.ts) found on this machine, as seen from inside a test file.
import type { TestContext } from 'node:test';

export const pgUrl: string | undefined = process.env.ATRIUM_TEST_PG_URL;
export const chromiumPath: string | undefined = process.env.ATRIUM_TEST_CHROMIUM;
export const strict: boolean = process.env.ATRIUM_TEST_STRICT === '1';

/**
 * Returns true when the capability is available. Otherwise skips the test, or, in strict mode
 * (CI), fails it: a skip there means the environment is broken, not that the test may be ignored.
 *
 *   if (!requireOrSkip(t, pgUrl !== undefined, 'PostgreSQL')) return;
 */
export function requireOrSkip(t: TestContext, available: boolean, what: string): boolean {
  if (available) return true;
  if (strict) throw new Error(`${what} not available in strict mode`);
  t.skip(what);
  return false;
}

// The code runs by type stripping and the console is bundled without a type check, so nothing else
// would notice a type error: `tsc --noEmit` must pass for both. A check (test/checks/): `npm test`
// runs it beside the tests at a lower priority, so it may take longer than a test's usual limit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');

/** The type check of the whole tree takes about a minute of CPU; niced beside the tests, longer. */
const CHECK_TIMEOUT_MS = 600_000;

const tsc = (project: string) => spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', project], { encoding: 'utf8', timeout: CHECK_TIMEOUT_MS });

test('the whole tree type-checks (tsc --noEmit)', { timeout: CHECK_TIMEOUT_MS }, () => {
  const result = tsc(root);
  assert.equal(result.status, 0, `tsc reported:\n${result.stdout}${result.stderr}`);
});

test('the console type-checks against the generated API types (its own tsconfig)', { timeout: CHECK_TIMEOUT_MS }, () => {
  const result = tsc(join(root, 'console'));
  assert.equal(result.status, 0, `tsc reported:\n${result.stdout}${result.stderr}`);
});

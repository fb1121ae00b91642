// The house rules that a tool checks: the import boundaries of .dependency-cruiser.cjs (no circles,
// modules meet through services, platform imports no module) and knip (no unused files, exports or
// dependencies). See docs/architecture.md "Boundaries". A check (test/checks/): `npm test` runs it
// beside the tests at a lower priority, so it may take longer than a test's usual limit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');
/** Each tool takes tens of seconds of CPU; niced beside the tests, longer. */
const CHECK_TIMEOUT_MS = 600_000;

const bin = (name: string, ...path: string[]) => join(root, 'node_modules', name, ...path);

test('imports keep the boundaries (dependency-cruiser)', { timeout: CHECK_TIMEOUT_MS }, () => {
  const result = spawnSync(process.execPath, [bin('dependency-cruiser', 'bin', 'dependency-cruiser.mjs'), 'src', 'console/src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd: root, encoding: 'utf8', timeout: CHECK_TIMEOUT_MS });
  assert.equal(result.status, 0, `dependency-cruiser reported:\n${result.stdout}${result.stderr}`);
});

test('no unused files, exports or dependencies (knip)', { timeout: CHECK_TIMEOUT_MS }, () => {
  const result = spawnSync(process.execPath, [bin('knip', 'bin', 'knip.js'), '--no-progress'], { cwd: root, encoding: 'utf8', timeout: CHECK_TIMEOUT_MS });
  assert.equal(result.status, 0, `knip reported:\n${result.stdout}${result.stderr}`);
});

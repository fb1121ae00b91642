// The code runs by type stripping and the console is bundled without a type check, so nothing else
// would notice a type error: `tsc --noEmit` must pass for both.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');

const tsc = (project: string) => spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', project], { encoding: 'utf8', timeout: 110_000 });

test('the whole tree type-checks (tsc --noEmit)', () => {
  const result = tsc(root);
  assert.equal(result.status, 0, `tsc reported:\n${result.stdout}${result.stderr}`);
});

test('the console type-checks against the generated API types (its own tsconfig)', () => {
  const result = tsc(join(root, 'console'));
  assert.equal(result.status, 0, `tsc reported:\n${result.stdout}${result.stderr}`);
});

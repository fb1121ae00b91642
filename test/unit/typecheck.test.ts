// The code runs by type stripping, so nothing else would notice a type error: `tsc --noEmit` must pass.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '..', '..');

test('the whole tree type-checks (tsc --noEmit)', () => {
  const result = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', root], { encoding: 'utf8', timeout: 110_000 });
  assert.equal(result.status, 0, `tsc reported:\n${result.stdout}${result.stderr}`);
});

// `npx atrium` (bin/atrium.js): a short command keeps Node's compile cache, in the system's
// temporary directory or where NODE_COMPILE_CACHE says; `serve` runs without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const bin = resolve(import.meta.dirname, '../../bin/atrium.js');

/** Runs bin/atrium.js in a shell of its own whose temporary directory is `dir`. */
function atrium(dir: string, args: string[], extra: Record<string, string> = {}) {
  const run = spawnSync(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TMPDIR: dir, ...extra }, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

test('a short command compiles into the temporary directory once; NODE_COMPILE_CACHE moves it; serve keeps none', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-bin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cache = join(dir, 'node-compile-cache');

  assert.match(atrium(dir, ['serve', '--help']), /Usage: atrium serve/);
  assert.equal(existsSync(cache), false, 'serve writes no compile cache');

  assert.match(atrium(dir, ['--help']), /Usage: atrium <command>/);
  assert.ok(readdirSync(cache).length > 0, 'the command left its compiled modules in $TMPDIR/node-compile-cache');

  const elsewhere = join(dir, 'elsewhere');
  atrium(dir, ['--help'], { NODE_COMPILE_CACHE: elsewhere });
  assert.ok(readdirSync(elsewhere).length > 0, 'NODE_COMPILE_CACHE names where it goes');
});

// The README names the Node on which `npm install` prints no engine warning: the highest least
// version that any package of the lock file declares in `engines.node` (the `node` package, the
// runtime the scripts use, aside).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const repoRoot = resolve(import.meta.dirname, '../..');

/** The least version a range admits ("^22.18.0 || >=24.11.0" → 22.18.0), as numbers. */
function leastVersion(range: string): number[] {
  const bounds = range.split('||').map((alternative) => (/(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(alternative) ?? []).slice(1, 4).map((n) => Number(n ?? 0)));
  return bounds.sort(compareVersions)[0]!;
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

test('the README names the Node on which npm install is free of engine warnings', () => {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } }> };
  let needed = [0, 0, 0];
  let by = '';
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = entry.engines?.node;
    if (!range || path === '' || path === 'node_modules/node') continue;
    if (compareVersions(leastVersion(range), needed) > 0) [needed, by] = [leastVersion(range), `${path} (${range})`];
  }
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  const stated = /`npm install` is free of engine warnings on Node (\d+(?:\.\d+)*) or newer/.exec(readme)?.[1];
  assert.ok(stated, 'the README says on which Node npm install is clean');
  assert.equal(stated, needed.slice(0, needed[2] ? 3 : 2).join('.'), `the highest Node a locked package declares, by ${by}`);
});

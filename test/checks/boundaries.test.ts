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

test('modules depend on each other one way: no circle of module folders (dependency-cruiser\'s graph)', () => {
  const result = spawnSync(process.execPath, [bin('dependency-cruiser', 'bin', 'dependency-cruiser.mjs'), 'src/modules', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], { cwd: root, encoding: 'utf8', timeout: 110_000, maxBuffer: 256 * 1024 * 1024 });
  assert.equal(result.status, 0, result.stderr);
  const graph = JSON.parse(result.stdout) as { modules: { source: string; dependencies: { resolved: string }[] }[] };
  const folder = (path: string) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
  const uses = new Map<string, Set<string>>();
  for (const file of graph.modules) {
    const from = folder(file.source);
    if (!from) continue;
    for (const dependency of file.dependencies) {
      const to = folder(dependency.resolved);
      if (to && to !== from) uses.set(from, (uses.get(from) ?? new Set()).add(to));
    }
  }
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (name: string, path: string[]) => {
    state.set(name, 'open');
    for (const next of uses.get(name) ?? []) {
      if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), name, next].join(' → '));
      else if (!state.has(next)) visit(next, [...path, name]);
    }
    state.set(name, 'done');
  };
  for (const name of uses.keys()) if (!state.has(name)) visit(name, []);
  assert.ok(uses.get('billing')?.has('llm-proxy'), 'the graph is read (billing consumes the LLM proxy\'s events)');
  assert.deepEqual(circles, []);
});

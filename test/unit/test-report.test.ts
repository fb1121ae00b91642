// The test driver's own decisions (test/run.ts, test/support/report.ts, test/support/chromium.ts):
// reading node's real TAP output, failing strict runs on any skipped or todo test, failing runs
// without a report or without tests, running budget files alone after the rest, and accepting Chromium
// only when it renders a page.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { probeChromium } from '../support/chromium.ts';
import { chromiumPath, requireOrSkip } from '../support/env.ts';
import { mergeReports, parseTap, verdict, type Report } from '../support/report.ts';

const dir = mkdtempSync(join(tmpdir(), 'atrium-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const driver = join(import.meta.dirname, '..', 'run.ts');
// Without the runner's marker of its own child processes, which would make a nested run skip its files.
const { NODE_TEST_CONTEXT: _marker, ...cleanEnv } = process.env;

/** A test file of the given source, in the scratch dir (outside test/, so the suite never collects it). */
function fixture(name: string, source: string): string {
  const file = join(dir, name);
  writeFileSync(file, `import { describe, test } from 'node:test';\n${source}\n`);
  return file;
}

/** An executable script standing in for Chromium. */
function fakeChromium(name: string, script: string): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** node --test over one file with the TAP reporter, as the driver runs it; returns the report's text. */
function tapOf(file: string): string {
  const out = join(dir, `${Math.random().toString(36).slice(2)}.tap`);
  const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', `--test-reporter-destination=${out}`, file], { encoding: 'utf8', timeout: 60_000, env: cleanEnv });
  assert.ok(existsSync(out), `node --test wrote no report: ${run.stderr}`);
  return readFileSync(out, 'utf8');
}

test('the report lists every skipped and todo test and suite, nested and escaped names included', () => {
  const report = parseTap(tapOf(fixture('mixed.test.ts', `
test('passes', () => { console.log('# pass 99'); });
test('skipped # not a directive \\\\', { skip: 'no database' }, () => {});
test('skips itself', (t) => { t.skip('at run time'); });
test.todo('to write');
test('todo that fails', { todo: 'known bug' }, () => { throw new Error('x'); });
describe('skipped suite', { skip: 'whole suite' }, () => { test('inner', () => {}); });
describe('suite', () => { test('nested skip', { skip: true }, () => {}); test('nested', () => {}); });
test('fails', () => { throw new Error('boom'); });
`)));
  assert.ok(report);
  assert.deepEqual({ ...report, unrun: undefined }, { tests: 8, passed: 2, failed: 1, skipped: 3, todo: 2, unrun: undefined }, 'the runner\'s totals, not what a test printed');
  assert.deepEqual(report.unrun, [
    { name: 'skipped # not a directive \\', directive: 'SKIP', reason: 'no database' },
    { name: 'skips itself', directive: 'SKIP', reason: 'at run time' },
    { name: 'to write', directive: 'TODO', reason: '' },
    { name: 'todo that fails', directive: 'TODO', reason: 'known bug' },
    { name: 'skipped suite', directive: 'SKIP', reason: 'whole suite' },
    { name: 'nested skip', directive: 'SKIP', reason: '' },
  ]);
  assert.equal(parseTap('TAP version 13\n# Subtest: cut short\n'), undefined, 'a report without totals is no report');
});

test('the exit status: failures, no report, no tests, signals, and strict mode against skips and todos', () => {
  const clean: Report = { tests: 3, passed: 3, failed: 0, skipped: 0, todo: 0, unrun: [] };
  const skipping: Report = { ...clean, tests: 4, skipped: 1, unrun: [{ name: 'needs a browser', directive: 'SKIP', reason: 'Chromium' }] };
  const todo: Report = { ...clean, tests: 4, todo: 1, unrun: [{ name: 'later', directive: 'TODO', reason: '' }] };
  const skippedSuite: Report = { ...clean, unrun: [{ name: 'a suite', directive: 'SKIP', reason: 'PostgreSQL server not installed' }] };
  const run = (report: Report | undefined, more: { exitCode?: number | null; signal?: string | null; strict?: boolean } = {}) =>
    verdict({ report, exitCode: more.exitCode === undefined ? 0 : more.exitCode, signal: more.signal ?? null, strict: more.strict ?? false });

  assert.deepEqual(run(clean), { code: 0, problems: [] });
  assert.deepEqual(run(clean, { strict: true }), { code: 0, problems: [] });
  for (const report of [skipping, todo, skippedSuite]) {
    assert.equal(run(report).code, 0, 'skips are reported but allowed outside strict mode');
    const strict = run(report, { strict: true });
    assert.equal(strict.code, 1);
    assert.match(strict.problems.join('\n'), new RegExp(`ATRIUM_TEST_STRICT=1[^]*${report.unrun[0]!.name}`));
  }
  assert.equal(run(undefined).code, 1);
  assert.match(run(undefined).problems[0]!, /no report/);
  assert.equal(run({ ...clean, tests: 0, passed: 0 }).code, 1, 'a run of no tests fails');
  assert.equal(run({ ...clean, failed: 1 }).code, 1, 'failures fail even if the runner exited 0');
  assert.equal(run(clean, { exitCode: 7 }).code, 7, 'the runner\'s own failure status is kept');
  assert.equal(run(clean, { exitCode: null, signal: 'SIGKILL' }).code, 1);
});

/** The driver's environment with every capability given, so that only the report decides: a database URL (unused) and a stand-in browser that prints what a rendered probe page would. */
const capabilities = () => ({ ...cleanEnv, ATRIUM_TEST_PG_URL: 'postgres://unused@127.0.0.1:9/none', ATRIUM_TEST_CHROMIUM: fakeChromium('renders', 'echo "<body>atrium-probe-42</body>"') });

test('npm test in strict mode fails on a todo test, and passes the same file outside it', () => {
  const file = fixture('todo.test.ts', `test('done', () => {});\ntest.todo('not written yet');`);
  const env = capabilities();
  const npmTest = (strict: boolean) => spawnSync(process.execPath, [driver, file], { encoding: 'utf8', timeout: 60_000, env: { ...env, ATRIUM_TEST_STRICT: strict ? '1' : '0' } });
  const strict = npmTest(true);
  assert.equal(strict.status, 1, strict.stdout + strict.stderr);
  assert.match(strict.stderr, /ATRIUM_TEST_STRICT=1: 1 test\(s\) or suite\(s\) skipped or todo[^]*not written yet \(TODO\)/);
  assert.match(strict.stdout, /^1 passed, 0 failed, 0 skipped, 1 todo$/m);
  const relaxed = npmTest(false);
  assert.equal(relaxed.status, 0, relaxed.stdout + relaxed.stderr);
});

test('npm test runs the files of a budgets folder after the others, one at a time, and counts every run', () => {
  // The other file takes a while and leaves a mark when done; the budget file fails unless the mark
  // is there, so it fails if it runs beside the other file.
  const mark = join(dir, 'others-done');
  const other = fixture('others.test.ts', `import { writeFileSync } from 'node:fs';\ntest('quick', () => {});\ntest('takes a while', async () => { await new Promise((r) => setTimeout(r, 1500)); writeFileSync(${JSON.stringify(mark)}, ''); });`);
  mkdirSync(join(dir, 'budgets'), { recursive: true });
  const timed = fixture(join('budgets', 'timed.test.ts'), `import { existsSync } from 'node:fs';\ntest('runs alone', () => { if (!existsSync(${JSON.stringify(mark)})) throw new Error('ran beside another file'); });\ntest('misses its budget', () => { throw new Error('too slow'); });`);
  const run = spawnSync(process.execPath, [driver, timed, other], { encoding: 'utf8', timeout: 60_000, env: { ...capabilities(), ATRIUM_TEST_STRICT: '1' } });
  assert.equal(run.status, 1, run.stdout + run.stderr);
  assert.match(run.stdout, /budgets: 1 file\(s\) timing the machine, run alone/);
  assert.match(run.stdout, /^3 passed, 1 failed, 0 skipped$/m, 'both runs are counted, the budget file\'s failure with them');
  assert.match(run.stderr, /1 test\(s\) failed/);

  const a: Report = { tests: 3, passed: 2, failed: 0, skipped: 1, todo: 0, unrun: [{ name: 'a', directive: 'SKIP', reason: '' }] };
  const b: Report = { tests: 2, passed: 1, failed: 1, skipped: 0, todo: 0, unrun: [] };
  assert.deepEqual(mergeReports([a, b]), { tests: 5, passed: 3, failed: 1, skipped: 1, todo: 0, unrun: a.unrun });
});

test('Chromium counts only when it renders a page', async (t) => {
  assert.match((await probeChromium(join(dir, 'no-such-chromium')))!, /could not be started/);
  assert.match((await probeChromium(fakeChromium('fails', 'echo "cannot open display" >&2; exit 1')))!, /exited with 1 without rendering the probe page \(cannot open display\)/);
  // Printing the page source (the script, not what it writes) is not rendering it.
  assert.match((await probeChromium(fakeChromium('echoes', 'echo "$@"')))!, /exited with 0 without rendering/);
  assert.match((await probeChromium(fakeChromium('hangs', 'exec sleep 30'), 500))!, /did not render a page within 500 ms/);
  if (!requireOrSkip(t, chromiumPath !== undefined, 'Chromium')) return;
  assert.equal(await probeChromium(chromiumPath!), undefined);
});

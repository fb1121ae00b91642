// How `npm test` (test/run.ts) reads node --test's TAP report and decides its exit status. Apart from
// the driver so that the decisions have unit tests of their own (test/unit/test-report.test.ts).

/** A test or suite that did not run for real: skipped, or marked todo. */
export interface Unrun {
  name: string;
  directive: 'SKIP' | 'TODO';
  reason: string;
}

export interface Report {
  /** Tests run, as the runner counts them (suites excluded). */
  tests: number;
  passed: number;
  /** Failed or cancelled (a timeout, a file that crashed). */
  failed: number;
  skipped: number;
  todo: number;
  /** Every skipped or todo test and suite, nested ones included; a skipped suite is not in `skipped`. */
  unrun: Unrun[];
}

const TOTAL = /^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$/;
// `ok 3 - name # SKIP reason`, indented for subtests; a `#` or `\` inside a name is escaped with `\`.
const RESULT = /^\s*(?:not )?ok \d+ - ((?:[^\\#]|\\.)*?)(?: # (SKIP|TODO)(?: (.*))?)?$/i;

/**
 * Reads a TAP report; undefined when it has no totals (the runner died before the end). The totals
 * come last, at column 0, and test output is echoed as `# …` comments, so the last occurrence of
 * each total is the runner's, whatever a test printed.
 */
export function parseTap(text: string): Report | undefined {
  const totals: Record<string, number> = {};
  const unrun: Unrun[] = [];
  for (const line of text.split('\n')) {
    const total = TOTAL.exec(line);
    if (total) {
      totals[total[1]!] = Number(total[2]);
      continue;
    }
    const result = RESULT.exec(line);
    if (result?.[2]) unrun.push({ name: result[1]!.replace(/\\(.)/g, '$1'), directive: result[2].toUpperCase() as Unrun['directive'], reason: result[3] ?? '' });
  }
  if (totals.pass === undefined) return undefined;
  const report = {
    passed: totals.pass,
    failed: (totals.fail ?? 0) + (totals.cancelled ?? 0),
    skipped: totals.skipped ?? 0,
    todo: totals.todo ?? 0,
    unrun,
  };
  return { tests: totals.tests ?? report.passed + report.failed + report.skipped + report.todo, ...report };
}

/** The reports of runs made one after another (test/run.ts runs budget files after the rest), as one. */
export function mergeReports(reports: Report[]): Report {
  const sum = (key: 'tests' | 'passed' | 'failed' | 'skipped' | 'todo') => reports.reduce((total, report) => total + report[key], 0);
  return { tests: sum('tests'), passed: sum('passed'), failed: sum('failed'), skipped: sum('skipped'), todo: sum('todo'), unrun: reports.flatMap((report) => report.unrun) };
}

export interface RunOutcome {
  /** The parsed report, undefined when there was none. */
  report: Report | undefined;
  /** The runner's exit code, or null when a signal ended it. */
  exitCode: number | null;
  signal: string | null;
  /** ATRIUM_TEST_STRICT=1 (CI): nothing may be skipped. */
  strict: boolean;
}

/** The exit status of `npm test`, and why it is not 0. */
export function verdict(run: RunOutcome): { code: number; problems: string[] } {
  const problems: string[] = [];
  const { report } = run;
  if (run.signal) problems.push(`the test runner was ended by ${run.signal}`);
  if (!report) {
    problems.push('the test runner produced no report');
  } else {
    if (report.tests === 0) problems.push('no tests ran');
    if (report.failed > 0) problems.push(`${report.failed} test(s) failed`);
    if (run.strict && report.unrun.length > 0) {
      const list = report.unrun.map((u) => `  - ${u.name} (${u.directive}${u.reason ? `: ${u.reason}` : ''})`).join('\n');
      problems.push(`ATRIUM_TEST_STRICT=1: ${report.unrun.length} test(s) or suite(s) skipped or todo, which strict mode does not allow:\n${list}`);
    }
  }
  if (run.exitCode !== null && run.exitCode !== 0) {
    if (problems.length === 0) problems.push(`the test runner exited with ${run.exitCode}`);
    return { code: run.exitCode, problems };
  }
  return { code: problems.length > 0 ? 1 : 0, problems };
}

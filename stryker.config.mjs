// Mutation testing of the security-critical mechanisms (`npm run mutation -- <target>`, see
// docs/architecture.md, "Mutation testing"): StrykerJS plants one small bug at a time in the
// target's files and runs the target's tests with the command runner; a mutant the tests do not
// notice is a test to write.
// Not part of `npm test`: one target takes minutes to an hour on two cores.
//
// Targets pair the files with the tests that are meant to catch their bugs, so each mutant runs
// only those. Tests run on PGlite only here (no ATRIUM_TEST_PG_URL): the mechanisms are the same
// code on both engines, and the suite's own runs cover PostgreSQL.
const TARGETS = {
  auth: {
    mutate: ['src/platform/http/auth.ts'],
    tests: ['test/unit/auth.test.ts'],
  },
  signing: {
    mutate: ['src/modules/webhooks/body.ts', 'src/webhooks-receiver/verify.ts'],
    tests: ['test/unit/webhooks-delivery.test.ts', 'test/unit/webhooks-receiver.test.ts'],
  },
  outbox: {
    mutate: ['src/platform/jobs/outbox.ts'],
    tests: ['test/integration/jobs.test.ts'],
  },
  'oauth-forms': {
    mutate: ['src/modules/oauth/csrf.ts', 'src/modules/oauth/limits.ts'],
    tests: ['test/unit/oauth-csrf.test.ts', 'test/unit/oauth-limits.test.ts'],
  },
  authority: {
    mutate: ['src/platform/http/authority.ts'],
    tests: ['test/unit/authority.test.ts'],
  },
  'oauth-adapter': {
    mutate: ['src/modules/oauth/adapter.ts'],
    tests: ['test/integration/oauth-adapter.test.ts'],
  },
};

const name = process.env.ATRIUM_MUTATION_TARGET ?? 'auth';
const target = TARGETS[name];
if (!target) throw new Error(`unknown mutation target ${name}: one of ${Object.keys(TARGETS).join(', ')}`);

export default {
  testRunner: 'command',
  commandRunner: { command: `node --test --test-concurrency=1 ${target.tests.join(' ')}` },
  mutate: target.mutate,
  // Mutants that only change log or error wording are noise here; the catalogue test pins codes.
  mutator: { excludedMutations: ['StringLiteral'] },
  concurrency: 2,
  timeoutMS: 120_000,
  coverageAnalysis: 'off',
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `test-artifacts/mutation-${name}.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};

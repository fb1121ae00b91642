// How a call through the LLM proxy ended (src/modules/llm-proxy/outcome.ts): every ending the
// proxy's phases can report, its outcome, and where its billed usage comes from — the provider's
// counts, `missing` (a metered call the provider took on without reporting usage: billed at its
// reservation) or `none`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { classify, type CallEnd } from '../../src/modules/llm-proxy/outcome.ts';
import { NO_USAGE } from '../../src/modules/llm-proxy/usage.ts';

const usage = { ...NO_USAGE, input_tokens: 3, output_tokens: 4 };
const answered = { answered: true, status: 200, delivered: true, upstreamCut: false, terminal: true, errored: false } as const;

const CASES: [string, CallEnd, string, string][] = [
  ['completed with usage', { metered: true, usage, ...answered }, 'completed', 'provider'],
  ['completed without usage (a background response, an answer without its usage field)', { metered: true, usage: undefined, ...answered }, 'completed', 'missing'],
  ['an endpoint that consumes nothing', { metered: false, usage: undefined, ...answered }, 'completed', 'none'],
  ['a stream without its terminal event', { metered: true, usage: undefined, ...answered, terminal: false }, 'upstream_cut', 'missing'],
  ['a stream cut by the upstream before the client had it all', { metered: true, usage: undefined, ...answered, delivered: false, upstreamCut: true }, 'upstream_cut', 'missing'],
  ['the client left mid-answer, usage already seen', { metered: true, usage, ...answered, delivered: false }, 'client_aborted', 'provider'],
  ['the client left mid-answer, no usage yet', { metered: true, usage: undefined, ...answered, delivered: false }, 'client_aborted', 'missing'],
  ['an error status from the provider', { metered: true, usage: undefined, ...answered, status: 429 }, 'upstream_error', 'none'],
  ['an error status that still reports usage', { metered: true, usage, ...answered, status: 400 }, 'upstream_error', 'provider'],
  ['an error event inside a stream', { metered: true, usage: undefined, ...answered, errored: true }, 'upstream_error', 'missing'],
  ['the client left before any answer', { metered: true, usage: undefined, answered: false, failure: 'client_left' }, 'client_aborted', 'missing'],
  ['no answer within the timeout', { metered: true, usage: undefined, answered: false, failure: 'timeout' }, 'upstream_error', 'missing'],
  ['the upstream could not be reached', { metered: true, usage: undefined, answered: false, failure: 'unreachable' }, 'upstream_error', 'none'],
  ['a models list the client left', { metered: false, usage: undefined, answered: false, failure: 'client_left' }, 'client_aborted', 'none'],
];

for (const [name, end, outcome, usageSource] of CASES) {
  test(name, () => assert.deepEqual(classify(end), { outcome, usageSource }));
}

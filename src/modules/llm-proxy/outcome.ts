// How a call through the proxy ended, decided from what was seen of it: the status its caller got,
// its outcome, and where its usage comes from. Pure, so every ending is a unit test
// (test/unit/llm-outcome.test.ts) rather than a branch of the forwarding code.
import type { TokenUsage } from './usage.ts';

/** What happened before the upstream's answer came, when it never did. */
export type Failure =
  /** The client left while the upstream worked on the call. */
  | 'client_left'
  /** No answer within ATRIUM_LLM_TIMEOUT_SECONDS. */
  | 'timeout'
  /** The upstream could not be reached, or failed the exchange before answering. */
  | 'unreachable';

/** How the exchange with the upstream ended. */
export type Ending =
  | { answered: false; failure: Failure }
  | {
    answered: true;
    /** The upstream's status. */
    status: number;
    /** The whole answer reached the client. */
    delivered: boolean;
    /** The upstream's answer failed (cut, or timed out between chunks) before its end. */
    upstreamCut: boolean;
    /** The stream's terminal event (or a plain answer's end) arrived. */
    terminal: boolean;
    /** The provider reported an error inside its answer. */
    errored: boolean;
  };

/** Everything the classification needs, as the call's phases saw it. */
export type CallEnd = Ending & {
  /** Whether the endpoint reports usage (docs/llm-proxy.md "Metered endpoints"). */
  metered: boolean;
  usage: TokenUsage | undefined;
};

export type Outcome = 'completed' | 'client_aborted' | 'upstream_cut' | 'upstream_error';

/**
 * Where the usage billed comes from: the provider's own counts; `missing` for a metered call the
 * upstream took on that reported none (billed at its reservation, and flagged); `none` when
 * there is nothing to bill (an endpoint that consumes nothing, an error the provider answered, an
 * upstream never reached).
 */
export type UsageSource = 'provider' | 'missing' | 'none';

export interface Classified {
  outcome: Outcome;
  usageSource: UsageSource;
}

export function classify(end: CallEnd): Classified {
  let outcome: Outcome;
  // Whether the provider took the call on, so that it may have charged for it.
  let accepted: boolean;
  if (!end.answered) {
    outcome = end.failure === 'client_left' ? 'client_aborted' : 'upstream_error';
    accepted = end.failure !== 'unreachable';
  } else {
    accepted = end.status < 400;
    if (!end.delivered) outcome = end.upstreamCut ? 'upstream_cut' : 'client_aborted';
    else if (end.status >= 400 || end.errored) outcome = 'upstream_error';
    else outcome = end.terminal ? 'completed' : 'upstream_cut';
  }
  const usageSource: UsageSource = end.usage ? 'provider' : end.metered && accepted ? 'missing' : 'none';
  return { outcome, usageSource };
}

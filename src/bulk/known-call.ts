/**
 * What a bulk job's verifications tell the verifier about known results: the job's owner is their namespace (one
 * tenant's results never answer another's), and a job created with `fresh` asks every mail server again.
 * @module
 */
import type { VerifyCallOptions } from '../options.js';

/** The per-call options of a job's verifications: its first tries, and its greylisting retries. */
export interface JobCalls {
  /** First tries: `undefined` when there is nothing to say (no owner, not fresh). */
  readonly first: VerifyCallOptions | undefined;
  /** Greylisting retries: always fresh (a kept greylisted answer would answer the retry it waits for). */
  readonly retry: VerifyCallOptions;
}

const PLAIN_RETRY: VerifyCallOptions = Object.freeze({ fresh: true });

/**
 * The frozen per-call options of a job of `owner` (`null`: the default namespace) created with `fresh`.
 * @example
 * jobCalls('tenant-a', false).first; // { knownResultsNamespace: 'tenant-a' }
 */
export function jobCalls(owner: string | null, fresh: boolean): JobCalls {
  if (owner === null) {
    return { first: fresh ? PLAIN_RETRY : undefined, retry: PLAIN_RETRY };
  }
  const retry = Object.freeze({ knownResultsNamespace: owner, fresh: true });
  return { first: fresh ? retry : Object.freeze({ knownResultsNamespace: owner }), retry };
}

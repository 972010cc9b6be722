/**
 * The starting state of a verification, before any check has run.
 * @module
 */
import type { ResolvedOptions } from '../options.js';
import type { VerifierRuntime } from '../runtime.js';
import type { CheckState } from './types.js';

/** What one call adds to its options for known results: `fresh` and the namespace. */
export interface KnownResultsCall {
  /** Ask the mail server even when a known result is kept. @default false */
  readonly fresh: boolean;
  /** The namespace of known results. @default '' */
  readonly namespace: string;
}

const NO_CALL: KnownResultsCall = Object.freeze({ fresh: false, namespace: '' });

/**
 * A fresh {@link CheckState}: no findings yet, flags off, the budget ending at `deadline`. The verifier starts
 * every verification from one; tests of custom checks can too.
 * @param email The input, already trimmed.
 * @param deadline Time (by `runtime.now()`) at which the budget is spent.
 * @param call `fresh` and the known-results namespace of this call.
 */
export function createCheckState(
  email: string,
  options: ResolvedOptions,
  runtime: VerifierRuntime,
  deadline: number,
  call: KnownResultsCall = NO_CALL,
): CheckState {
  return {
    email,
    options,
    runtime,
    deadline,
    signal: options.signal,
    address: null,
    user: null,
    domain: null,
    allowlisted: false,
    disposable: false,
    role: false,
    free: false,
    accept_all: false,
    did_you_mean: null,
    mx_record: null,
    smtp_provider: null,
    mailHosts: null,
    transcript: options.trace ? [] : null,
    reason: null,
    span: undefined,
    fresh: call.fresh,
    knownResultsNamespace: call.namespace,
    checkedAt: null,
  };
}

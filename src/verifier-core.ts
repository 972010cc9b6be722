/**
 * The verifier's core: runs the checks in order and stops at the first final verdict. Runtime-free: the seams a
 * caller does not give (DNS, TCP, the HELO name) come from the {@link PlatformDefaults} it is built with;
 * `createVerifier` (verifier.ts) builds it with Node's.
 * @module
 */
import { DEFAULT_CHECKS } from './checks/index.js';
import { createCheckState } from './checks/state.js';
import type { Check, CheckState } from './checks/types.js';
import { MailvetError, OptionsError } from './errors.js';
import { tellObserver, type VerifierObserver } from './observer.js';
import {
  applyBudget,
  type ResolvedOptions,
  resolveOptions,
  VERIFIER_LEVEL_OPTIONS,
  type VerifyCallOptions,
  type VerifyOptions,
} from './options.js';
import type { Verdict, VerificationResult } from './result.js';
import { createRuntime, type OwnedRuntime, type PlatformDefaults } from './runtime.js';
import { scoreOf } from './score.js';

/** A verifier with its own caches and connection pools. */
export interface Verifier {
  /**
   * Verifies one address. Never throws for a bad address (that is a result); throws an `OptionsError` when
   * `overrides` are malformed, and a `MailvetError` with code `disposed` after {@link Verifier.dispose}.
   */
  verify(email: string, overrides?: VerifyCallOptions): Promise<VerificationResult>;
  /** Closes pooled SMTP sessions and releases caches and timers. Idempotent. */
  dispose(): Promise<void>;
}

const NO_VERDICT: Verdict = { status: 'unknown', sub_status: 'smtp_not_checked' };
const EXCEPTION: Verdict = { status: 'unknown', sub_status: 'exception_occurred' };
const ABORTED: Verdict = { status: 'unknown', sub_status: 'timeout_exceeded' };

const EDGE_SPACE = /^[\p{Zs}\t\uFEFF]+|[\p{Zs}\t\uFEFF]+$/gu;

/**
 * Removes leading and trailing spaces and tabs (Unicode space separators and a BOM included), but never
 * CR, LF or NUL: those must fail the syntax check wherever they are.
 */
export function trimInput(input: string): string {
  const first = input.charCodeAt(0);
  const last = input.charCodeAt(input.length - 1);
  if (first > 0x20 && first < 0x7f && last > 0x20 && last < 0x7f) return input;
  return input.replace(EDGE_SPACE, '');
}

function checksOf(options: ResolvedOptions): readonly Check[] {
  const checks = options.checks ?? DEFAULT_CHECKS;
  return options.disableChecks.size === 0
    ? checks
    : checks.filter((check) => !options.disableChecks.has(check.name));
}

function toResult(state: CheckState, verdict: Verdict): VerificationResult {
  const result: VerificationResult = {
    email: state.email,
    normalized: state.address?.normalized ?? null,
    user: state.user,
    domain: state.domain,
    status: verdict.status,
    sub_status: verdict.sub_status,
    score: 0,
    disposable: state.disposable,
    role: state.role,
    free: state.free,
    accept_all: state.accept_all,
    did_you_mean: state.did_you_mean,
    mx_record: state.mx_record,
    smtp_provider: state.smtp_provider,
  };
  result.score = scoreOf(result);
  if (state.reason !== null && verdict.status !== 'valid') result.reason = state.reason;
  if (state.transcript !== null) result.smtp_transcript = state.transcript;
  return result;
}

async function run(
  email: string,
  options: ResolvedOptions,
  checks: readonly Check[],
  runtime: OwnedRuntime,
): Promise<VerificationResult> {
  const state = createCheckState(trimInput(email), options, runtime, runtime.now() + options.timeoutMs);
  for (let i = 0; i < checks.length; i += 1) {
    if (state.signal?.aborted) return toResult(state, ABORTED);
    let verdict: Verdict | undefined;
    try {
      const outcome = checks[i]?.run(state);
      verdict = outcome instanceof Promise ? await outcome : outcome;
    } catch {
      verdict = EXCEPTION;
    }
    if (verdict !== undefined) {
      await annotate(state, checks, i + 1);
      return toResult(state, verdict);
    }
  }
  return toResult(state, state.signal?.aborted ? ABORTED : NO_VERDICT);
}

/** Runs the checks from `from` on that annotate failures (see {@link Check.annotatesFailures}). */
async function annotate(state: CheckState, checks: readonly Check[], from: number): Promise<void> {
  for (let i = from; i < checks.length; i += 1) {
    const check = checks[i];
    if (check?.annotatesFailures !== true || state.signal?.aborted) continue;
    try {
      const outcome = check.run(state);
      if (outcome instanceof Promise) await outcome;
    } catch {
      // An annotation is best effort: the verdict already given stands.
    }
  }
}

/** Tells `verified` about the verification `pending()` settles with, and how long it took. */
async function observed(
  pending: () => Promise<VerificationResult>,
  verified: NonNullable<VerifierObserver['verified']>,
): Promise<VerificationResult> {
  const started = performance.now();
  const result = await pending();
  const durationMs = performance.now() - started;
  tellObserver(() => verified(result, durationMs));
  return result;
}

/**
 * Creates a verifier on a platform: `platform` gives the seams that `defaults` leave unset (a resolver, a
 * transport, a HELO name). `createVerifier` is this with Node's defaults; other runtimes (and tests) pass their
 * own, and a verifier given every seam never calls `platform`. `defaults` are validated now (an `OptionsError` names a bad one) and apply to every
 * call; each call may override them, except the options that shape shared resources (`resolver`,
 * `transport`, `concurrency`, `perMxConcurrency`, `maxRcptPerSession`, `maxRejectsPerSession`, `idleSessionMs`,
 * `mxBackoffMs`, `catchAllTtlMs`).
 * @example
 * const verifier = createVerifierWith(
 *   { resolver: () => myResolver, transport: () => myTransport, heloHost: () => 'mx-check.example.net' },
 *   { allowTlds: ['test'] },
 * );
 */
export function createVerifierWith(platform: PlatformDefaults, defaults: VerifyOptions = {}): Verifier {
  const options = resolveOptions(defaults);
  const checks = checksOf(options);
  const runtime = createRuntime(options, platform);
  const verified = options.observer?.verified;
  let disposed = false;

  function start(email: string, overrides: VerifyCallOptions | undefined): Promise<VerificationResult> {
    if (disposed) return Promise.reject(new MailvetError('disposed', 'the verifier has been disposed'));
    if (typeof email !== 'string') {
      return Promise.reject(new MailvetError('invalid_request', 'email must be a string'));
    }
    if (overrides === undefined) return run(email, options, checks, runtime);
    let merged: ResolvedOptions;
    try {
      const budgeted = applyBudget(options, overrides);
      if (budgeted !== undefined) return run(email, budgeted, checks, runtime);
      for (const key of VERIFIER_LEVEL_OPTIONS) {
        if (key in overrides) throw new OptionsError(key, 'can only be set on createVerifier()');
      }
      merged = resolveOptions({ ...defaults, ...overrides });
    } catch (error) {
      return Promise.reject(error);
    }
    return run(email, merged, checksOf(merged), runtime);
  }

  return {
    // Without an observer, verify is start itself: not one call more on the hot path.
    verify:
      verified === undefined
        ? start
        : (email, overrides) => observed(() => start(email, overrides), verified),
    async dispose() {
      if (disposed) return;
      disposed = true;
      await runtime.close();
    },
  };
}

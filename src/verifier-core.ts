/**
 * The verifier's core: runs the checks in order and stops at the first final verdict. Runtime-free: the seams a
 * caller does not give (DNS, TCP, the HELO name) come from the {@link PlatformDefaults} it is built with, and the SMTP
 * prober from a {@link ProberFactory}; `createVerifierWith` (verifier-with.ts) builds it with mailvet's prober, and
 * `createVerifier` (verifier.ts) with Node's defaults too.
 * @module
 */
import { DEFAULT_CHECKS } from './checks/index.js';
import { preloadSmtpCheck, smtpCheck } from './checks/smtp.js';
import { createCheckState, type KnownResultsCall } from './checks/state.js';
import type { Check, CheckOutcome, CheckState } from './checks/types.js';
import type { ProberFactory } from './contracts/prober.js';
import { MailvetError, OptionsError } from './errors.js';
import { knownResultsChecks } from './known/check.js';
import type { VerifierObserver } from './observer.js';
import {
  applyBudget,
  knownResultsNamespaceOf,
  type ResolvedOptions,
  resolveOptions,
  VERIFIER_LEVEL_OPTIONS,
  type VerifyCallOptions,
  type VerifyOptions,
} from './options.js';
import type { Verdict, VerificationResult } from './result.js';
import { createRuntime, type OwnedRuntime, type PlatformDefaults } from './runtime.js';
import { scoreOf } from './score.js';
import { type TraceSpan, tracingApi } from './tracing.js';
import { tracedCheck, tracedVerification } from './verify-trace.js';

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

/** The checks `options` run, in order, before known results wrap any. */
function enabledChecks(options: ResolvedOptions): readonly Check[] {
  const all = options.checks ?? DEFAULT_CHECKS;
  return options.disableChecks.size === 0
    ? all
    : all.filter((check) => !options.disableChecks.has(check.name));
}

function checksOf(options: ResolvedOptions): readonly Check[] {
  const checks = enabledChecks(options);
  const known = options.knownResults;
  return known === undefined ? checks : knownResultsChecks(checks, known, options.knownResultsTtl);
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
  const known = state.options.knownResults;
  if (known !== undefined) {
    result.checked_at = new Date(state.checkedAt ?? known.now?.() ?? state.runtime.now()).toISOString();
  }
  return result;
}

/**
 * `fresh` and `knownResultsNamespace` of `overrides` over the verifier's, validated, and the overrides without
 * them (the same object when they hold neither), so that a call that sets only these and a budget keeps the
 * verifier's resolved options (and the SMTP pool's sessions keyed by them).
 */
function splitCall(overrides: VerifyCallOptions, base: KnownResultsCall): CallSplit {
  if (!('fresh' in overrides) && !('knownResultsNamespace' in overrides))
    return { call: base, rest: overrides };
  const frozen = Object.isFrozen(overrides);
  if (frozen) {
    const known = frozenSplits.get(overrides);
    if (known?.base === base) return known.split;
  }
  const split = splitOf(overrides, base);
  if (frozen) frozenSplits.set(overrides, { base, split });
  return split;
}

/** The known-results part of a call, and the rest of its overrides. */
interface CallSplit {
  readonly call: KnownResultsCall;
  readonly rest: VerifyCallOptions;
}

/** The split of each frozen overrides object (a bulk job's, an HTTP request's per tenant), made once per base. */
const frozenSplits = new WeakMap<VerifyCallOptions, { base: KnownResultsCall; split: CallSplit }>();

function splitOf(overrides: VerifyCallOptions, base: KnownResultsCall): CallSplit {
  const { fresh, knownResultsNamespace, ...rest } = overrides;
  if (fresh !== undefined && typeof fresh !== 'boolean') throw new OptionsError('fresh', 'must be a boolean');
  const call: KnownResultsCall = {
    fresh: fresh ?? base.fresh,
    namespace:
      knownResultsNamespace === undefined ? base.namespace : knownResultsNamespaceOf(knownResultsNamespace),
  };
  return { call, rest: Object.isFrozen(overrides) ? Object.freeze(rest) : rest };
}

/**
 * Verifies `email`: inside a `mailvet.verify` span with one span per check when an OpenTelemetry SDK is registered
 * (verify-trace.ts), else with no tracing cost beyond one property read.
 */
function run(
  email: string,
  options: ResolvedOptions,
  checks: readonly Check[],
  runtime: OwnedRuntime,
  call: KnownResultsCall,
): Promise<VerificationResult> {
  const api = tracingApi();
  if (api === undefined) return runChecks(email, options, checks, runtime, call, undefined);
  return tracedVerification(api, (root) => runChecks(email, options, checks, runtime, call, root));
}

/** Runs `check`, in its own span under `root` when the verification is traced. */
function runCheck(
  check: Check,
  state: CheckState,
  root: TraceSpan | undefined,
): CheckOutcome | Promise<CheckOutcome> {
  return root === undefined ? check.run(state) : tracedCheck(check, state, root);
}

async function runChecks(
  email: string,
  options: ResolvedOptions,
  checks: readonly Check[],
  runtime: OwnedRuntime,
  call: KnownResultsCall,
  root: TraceSpan | undefined,
): Promise<VerificationResult> {
  const state = createCheckState(trimInput(email), options, runtime, runtime.now() + options.timeoutMs, call);
  state.span = root;
  for (let i = 0; i < checks.length; i += 1) {
    if (state.signal?.aborted) return toResult(state, ABORTED);
    let verdict: Verdict | undefined;
    try {
      const outcome = runCheck(checks[i]!, state, root);
      verdict = outcome instanceof Promise ? await outcome : outcome;
    } catch {
      verdict = EXCEPTION;
    }
    if (verdict !== undefined) {
      await annotate(state, checks, i + 1, root);
      return toResult(state, verdict);
    }
  }
  return toResult(state, state.signal?.aborted ? ABORTED : NO_VERDICT);
}

/** Runs the checks from `from` on that annotate failures (see {@link Check.annotatesFailures}). */
async function annotate(
  state: CheckState,
  checks: readonly Check[],
  from: number,
  root: TraceSpan | undefined,
): Promise<void> {
  for (let i = from; i < checks.length; i += 1) {
    const check = checks[i];
    if (check?.annotatesFailures !== true || state.signal?.aborted) continue;
    try {
      const outcome = runCheck(check, state, root);
      if (outcome instanceof Promise) await outcome;
    } catch {
      // An annotation is best effort: the verdict already given stands.
    }
  }
}

/**
 * `start` that tells `verified` about each verification it settles with, and how long it took. A `then` on the
 * verification rather than an async function: no promise, closure or hop more than the one callback per call.
 */
function observedStart(
  start: (email: string, overrides: VerifyCallOptions | undefined) => Promise<VerificationResult>,
  verified: NonNullable<VerifierObserver['verified']>,
): (email: string, overrides?: VerifyCallOptions) => Promise<VerificationResult> {
  return (email, overrides) => {
    const started = performance.now();
    let pending: Promise<VerificationResult>;
    try {
      pending = start(email, overrides);
    } catch (error) {
      return Promise.reject(error); // as an async function would: a throw is a rejection
    }
    return pending.then((result) => {
      const durationMs = performance.now() - started;
      try {
        verified(result, durationMs);
      } catch {
        // An observer must not throw; if it does, the verifier carries on.
      }
      return result;
    });
  };
}

/**
 * Creates a verifier on a platform with a prober: `platform` gives the seams that `defaults` leave unset (a
 * resolver, a transport, a HELO name), `probing` makes the SMTP prober. `createVerifierWith` (verifier-with.ts) is
 * this with mailvet's SMTP prober, and `createVerifier` (verifier.ts) that with Node's defaults. `defaults` are
 * validated now (an `OptionsError` names a bad one) and apply to every call; each call may override them, except
 * the options that shape shared resources (`VERIFIER_LEVEL_OPTIONS`).
 */
export function createCoreVerifier(
  platform: PlatformDefaults,
  probing: ProberFactory,
  defaults: VerifyOptions = {},
): Verifier {
  const options = resolveOptions(defaults);
  const checks = checksOf(options);
  const baseCall: KnownResultsCall = { fresh: options.fresh, namespace: options.knownResultsNamespace };
  const runtime = createRuntime(options, platform, probing);
  const verified = options.observer?.verified;
  let disposed = false;
  // A verifier that will probe SMTP imports that code now (a verifier that will not never loads it: the cold start of
  // `mailvet verify --no-dns`); its first verifications wait for it before their budget starts, so that loading
  // code never counts as a mail server's time.
  let loading: Promise<void> | undefined =
    options.dns && options.smtp && enabledChecks(options).includes(smtpCheck)
      ? Promise.all([preloadSmtpCheck(), probing.preload()]).then(() => {
          loading = undefined;
        })
      : undefined;

  function start(email: string, overrides: VerifyCallOptions | undefined): Promise<VerificationResult> {
    return loading === undefined
      ? verifyNow(email, overrides)
      : loading.then(() => verifyNow(email, overrides));
  }

  const verifier: Verifier = {
    // Without an observer, verify is start itself: not one call more on the hot path.
    verify: verified === undefined ? start : observedStart(start, verified),
    async dispose() {
      if (disposed) return;
      disposed = true;
      await runtime.close();
    },
  };

  function verifyNow(email: string, overrides: VerifyCallOptions | undefined): Promise<VerificationResult> {
    if (disposed) return Promise.reject(new MailvetError('disposed', 'the verifier has been disposed'));
    if (typeof email !== 'string') {
      return Promise.reject(new MailvetError('invalid_request', 'email must be a string'));
    }
    if (overrides === undefined) return run(email, options, checks, runtime, baseCall);
    let merged: ResolvedOptions;
    let call: KnownResultsCall;
    try {
      const split = splitCall(overrides, baseCall);
      call = split.call;
      const budgeted = applyBudget(options, split.rest);
      if (budgeted !== undefined) return run(email, budgeted, checks, runtime, call);
      for (const key of VERIFIER_LEVEL_OPTIONS) {
        if (key in overrides) throw new OptionsError(key, 'can only be set on createVerifier()');
      }
      merged = resolveOptions({ ...defaults, ...split.rest });
    } catch (error) {
      return Promise.reject(error);
    }
    return run(email, merged, checksOf(merged), runtime, call);
  }
  return verifier;
}

/**
 * The SMTP check behind known results: a kept verdict answers instead of the mail server, unless the call asks for a
 * fresh check; a new answer is kept for the time its status allows. The lookup starts with the MX check, so that
 * the store's round trip and the DNS lookup overlap.
 * @module
 */
import type { Check, CheckOutcome, CheckState } from '../checks/types.js';
import type { Verdict } from '../result.js';
import { type KnownResultsTtl, ttlOf } from './ttl.js';
import { type KnownResult, type KnownResults, type KnownVerdict, knownKey } from './types.js';

/** Whether the SMTP check may ask a mail server about this address, once the MX check has found mail hosts. */
function mayAsk(state: CheckState): boolean {
  return state.address !== null && state.options.smtp && state.options.dns;
}

/** Whether the SMTP check would ask a mail server about this address (it does nothing otherwise). */
function asks(state: CheckState): boolean {
  return mayAsk(state) && state.mailHosts !== null && state.mailHosts.length > 0;
}

/** A lookup started before the SMTP check, under `key`. */
interface Ahead {
  readonly key: string;
  readonly kept: Promise<KnownResult | undefined>;
}

async function lookUp(known: KnownResults, key: string): Promise<KnownResult | undefined> {
  try {
    return (await known.get([key])).get(key);
  } catch {
    return undefined; // a store that cannot answer knows nothing: the mail server is asked
  }
}

function answer(state: CheckState, kept: KnownResult): Verdict {
  state.accept_all = kept.accept_all;
  state.mx_record = kept.mx_record;
  state.smtp_provider = kept.smtp_provider;
  state.reason = kept.reason;
  state.checkedAt = kept.checkedAt;
  return { status: kept.status, sub_status: kept.sub_status };
}

async function keep(
  known: KnownResults,
  key: string,
  verdict: KnownVerdict,
  checkedAt: number,
  ttlMs: number,
): Promise<void> {
  try {
    await known.set([{ key, verdict, checkedAt, ttlMs }]);
  } catch {
    // Best effort: a result not kept is asked for again next time.
  }
}

/**
 * `checks` with known results: the check named `smtp` answered from what `known` keeps, and its new verdicts kept
 * for `ttl` of their status (see {@link rememberingCheck}). When a check named `mx` comes before it, the lookup
 * starts as that check starts (unless the call is `fresh`): the store's round trip runs beside the DNS lookup
 * instead of after it, and the SMTP check takes its answer. An address that the MX check (or one after it) settles
 * has been looked up for nothing: a read, no change of its result.
 */
export function knownResultsChecks(
  checks: readonly Check[],
  known: KnownResults,
  ttl: KnownResultsTtl,
): readonly Check[] {
  const aheadOf = new WeakMap<CheckState, Ahead>();
  const smtpAt = checks.findIndex((check) => check.name === 'smtp');
  return checks.map((check, index) => {
    if (index === smtpAt) return rememberingCheck(check, known, ttl, aheadOf);
    if (check.name === 'mx' && index < smtpAt) return lookingAhead(check, known, aheadOf);
    return check;
  });
}

/** Wraps `inner` (the MX check): starts the SMTP check's lookup as it starts. */
function lookingAhead(inner: Check, known: KnownResults, aheadOf: WeakMap<CheckState, Ahead>): Check {
  return {
    name: inner.name,
    ...(inner.annotatesFailures === undefined ? {} : { annotatesFailures: inner.annotatesFailures }),
    run(state) {
      if (!state.fresh && mayAsk(state)) {
        const key = knownKey(state.knownResultsNamespace, state.address!.normalized);
        aheadOf.set(state, { key, kept: lookUp(known, key) });
      }
      return inner.run(state);
    },
  };
}

/**
 * Wraps `inner` (the SMTP check): before it runs, the result kept under the call's namespace and the normalized
 * address answers (the lookup started ahead in `aheadOf`, if any, for that key), unless the call is `fresh`; after
 * it gives a verdict, that verdict is kept for `ttl` of its status, without waiting for the store (never one of an
 * aborted verification, nor a sub-status that says nothing of the address: see {@link ttlOf}). The store's failures
 * are misses. A check that would not ask a mail server runs as it is.
 */
function rememberingCheck(
  inner: Check,
  known: KnownResults,
  ttl: KnownResultsTtl,
  aheadOf: WeakMap<CheckState, Ahead>,
): Check {
  return {
    name: inner.name,
    ...(inner.annotatesFailures === undefined ? {} : { annotatesFailures: inner.annotatesFailures }),
    async run(state): Promise<CheckOutcome> {
      if (!asks(state)) return inner.run(state);
      const key = knownKey(state.knownResultsNamespace, state.address!.normalized);
      if (!state.fresh) {
        const ahead = aheadOf.get(state);
        const kept = await (ahead?.key === key ? ahead.kept : lookUp(known, key));
        if (kept !== undefined) return answer(state, kept);
      }
      const verdict = await inner.run(state);
      if (verdict === undefined || state.signal?.aborted) return verdict;
      const kept: KnownVerdict = {
        status: verdict.status,
        sub_status: verdict.sub_status,
        accept_all: state.accept_all,
        mx_record: state.mx_record,
        smtp_provider: state.smtp_provider,
        reason: state.reason,
      };
      state.checkedAt = known.now?.() ?? state.runtime.now();
      const ttlMs = ttlOf(kept, ttl);
      // Not awaited: the verdict is the caller's now; the store keeps it in the background (a batch, for a shared one).
      if (ttlMs > 0) void keep(known, key, kept, state.checkedAt, ttlMs);
      return verdict;
    },
  };
}

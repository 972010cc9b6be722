/**
 * Greylisting retries of the CLI: the `--greylist-delays` flag, and the waits of `mailvet bulk`'s rows.
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { unretriedResult } from '../bulk/finish.js';
import type { VerificationResult } from '../result.js';
import type { Sourced } from './config.js';
import { quote, usageError } from './io.js';

/** Most greylisting retries, and the longest delay in seconds (the job manager's bounds). */
const MAX_RETRIES = 10;
const MAX_DELAY_S = 86_400;

/**
 * The greylisting delays of `--greylist-delays` / `MAILVET_GREYLIST_DELAYS`, in ms; `[]` for `none`,
 * `undefined` when not given (each command picks its default).
 * @example
 * greylistDelaysOf({ value: '60,300', label: '--greylist-delays' }); // [60_000, 300_000]
 */
export function greylistDelaysOf(source: Sourced<string> | undefined): readonly number[] | undefined {
  if (source === undefined) return undefined;
  const text = source.value.trim().toLowerCase();
  if (text === 'none') return [];
  const parts = text.split(',').map((part) => part.trim());
  if (
    parts.length > MAX_RETRIES ||
    parts.some((part) => !/^\d{1,5}$/.test(part) || Number(part) > MAX_DELAY_S)
  ) {
    throw usageError(
      `${source.label} must be none or at most ${MAX_RETRIES} comma-separated delays of 0-${MAX_DELAY_S} seconds, got ${quote(source.value)}`,
    );
  }
  return parts.map((part) => Number(part) * 1000);
}

/** Rows waiting for a greylisting retry. */
export interface WaitingRetries {
  /** How many rows wait. */
  readonly count: number;
  /** When the earliest retry is due, on the retrier's clock (epoch milliseconds by default). */
  readonly nextDueMs: number;
  /** When the latest retry is due: the run cannot end before it. */
  readonly lastDueMs: number;
}

/** Verifies addresses, retrying a greylisted answer after each delay in turn. */
export interface GreylistRetrier {
  /** Verifies `email`; a `greylisted` result is tried again after each delay, and the last result returned. */
  verify(email: string): Promise<VerificationResult>;
  /** The rows waiting now; `undefined` when none waits. */
  waiting(): WaitingRetries | undefined;
  /**
   * Finish now: ends every wait at once, each waiting row keeping its last greylisted result with a `reason` that
   * says no retry was made, and retries nothing from then on. Returns false (and changes nothing) when no row waits.
   */
  finish(): boolean;
}

/** Options of {@link greylistRetrier}. */
export interface GreylistRetrierOptions {
  /** Delay before each retry, in milliseconds; `[]`: no retries. */
  readonly delaysMs: readonly number[];
  /** Clock in milliseconds, for the due times shown. */
  readonly now: () => number;
  /** Ends the waits: the row keeps its last (greylisted) result. */
  readonly signal: AbortSignal;
  /** Called when a row starts waiting while none waited. */
  readonly onWait?: (waiting: WaitingRetries) => void;
}

/**
 * Wraps `verify` with greylisting retries. A wait holds no SMTP session, only a timer, and an abort ends it at
 * once with the last result.
 * @example
 * const retrier = greylistRetrier((email) => verifier.verify(email), { delaysMs: [60_000], now: Date.now, signal });
 */
export function greylistRetrier(
  verify: (email: string) => Promise<VerificationResult>,
  options: GreylistRetrierOptions,
): GreylistRetrier {
  const dues = new Map<symbol, number>();
  const finishing = new AbortController();
  const waits = AbortSignal.any([options.signal, finishing.signal]);
  const waiting = (): WaitingRetries | undefined => {
    if (dues.size === 0) return undefined;
    let nextDueMs = Number.POSITIVE_INFINITY;
    let lastDueMs = Number.NEGATIVE_INFINITY;
    for (const due of dues.values()) {
      nextDueMs = Math.min(nextDueMs, due);
      lastDueMs = Math.max(lastDueMs, due);
    }
    return { count: dues.size, nextDueMs, lastDueMs };
  };
  return {
    async verify(email) {
      let result = await verify(email);
      for (const delayMs of options.delaysMs) {
        if (result.sub_status !== 'greylisted' || waits.aborted) return result;
        const wait = Symbol(email);
        const due = options.now() + delayMs;
        dues.set(wait, due);
        if (dues.size === 1) options.onWait?.(waiting()!);
        try {
          await sleep(delayMs, undefined, { signal: waits });
        } catch {
          return options.signal.aborted ? result : unretriedResult(result, due);
        } finally {
          dues.delete(wait);
        }
        result = await verify(email);
      }
      return result;
    },
    waiting,
    finish() {
      if (dues.size === 0) return false;
      finishing.abort();
      return true;
    },
  };
}

/**
 * The verifier's observer seam: plain callbacks through which a metrics exporter (or anything else) learns what a
 * verifier does, without the core knowing about it. Runtime-free. With no observer, a verifier does no extra work.
 * @module
 */
import { OptionsError } from './errors.js';
import type { VerificationResult } from './result.js';

/** The DNS cache's counters, as a verifier's observer reads them (`cachedResolver().stats()` has them). */
export interface DnsCounters {
  /** Lookups answered from the cache (answers and remembered failures). */
  readonly hits: number;
  /** Lookups sent to DNS. */
  readonly misses: number;
  /** Lookups that joined an identical lookup already in flight. */
  readonly coalesced: number;
}

/** The SMTP pool's counters and state, as a verifier's observer reads them (the prober's `stats()`). */
export interface SmtpCounters {
  /** Sessions opened (attempts included). */
  readonly opened: number;
  /** Requests served by a session opened for an earlier request. */
  readonly reused: number;
  /** Sessions that could not be opened. */
  readonly failed: number;
  /** Times a mail host was put in backoff. */
  readonly backoffs: number;
  /** Replies to `RCPT TO` (and refusals of `MAIL FROM`) by class. */
  readonly replies2xx: number;
  readonly replies3xx: number;
  readonly replies4xx: number;
  readonly replies5xx: number;
  /** Sessions holding a slot now. */
  readonly open: number;
  /** Requests waiting for a session now. */
  readonly waiting: number;
}

/**
 * What a verifier tells its `observer` option. Every member is optional; each must return quickly and must not
 * throw (an error it throws is ignored).
 * @example
 * const verifier = createVerifier({
 *   observer: { verified: (result, ms) => console.log(result.status, ms) },
 * });
 */
export interface VerifierObserver {
  /** Told about each finished verification: its result, and how long `verify()` took in milliseconds. */
  readonly verified?: (result: VerificationResult, durationMs: number) => void;
  /**
   * Called once, when the verifier first uses a resolver that keeps counters (the default `cachedResolver`),
   * with a function that reads them (lookups answered from the cache, lookups sent to DNS). A resolver without
   * `stats()` is never reported.
   */
  readonly dns?: (stats: () => DnsCounters) => void;
  /**
   * Called once, when the verifier makes its SMTP prober (on its first SMTP probe), with a function that reads
   * the pool's counters (sessions opened, reused and failed, `RCPT TO` replies by class, backoffs) and its state (sessions
   * open, requests waiting).
   */
  readonly smtp?: (stats: () => SmtpCounters) => void;
}

const MEMBERS = ['verified', 'dns', 'smtp'] as const;

/** Validates the `observer` option: `undefined`, or an object whose known members are functions. */
export function observerOption(value: unknown): VerifierObserver | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError('observer', 'must be an object of callbacks (verified, dns, smtp)');
  }
  for (const key of Object.keys(value)) {
    if (!(MEMBERS as readonly string[]).includes(key)) {
      throw new OptionsError(`observer.${key}`, 'is not a known option');
    }
    if (typeof (value as Record<string, unknown>)[key] !== 'function') {
      throw new OptionsError(`observer.${key}`, 'must be a function');
    }
  }
  return value as VerifierObserver;
}

/** Calls `tell`, ignoring what it throws: an observer's failure never changes a verification. */
export function tellObserver(tell: () => void): void {
  try {
    tell();
  } catch {
    // An observer must not throw; if it does, the verifier carries on.
  }
}

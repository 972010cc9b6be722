/**
 * The adapter's limits and bounds, with their documented defaults. The OpenAPI document and docs/http.md
 * are written from these values. The memory budgets' defaults depend on the heap: the platform gives them
 * (http/node-runtime.ts on Node), so this file stays runtime-free.
 * @module
 */
import { OptionsError } from '../errors.js';

/** Limits of the HTTP adapter. Every field is optional; defaults are in `DEFAULT_LIMITS`. */
export interface HttpLimits {
  /** Largest request body, in bytes. @default 10485760 (10 MiB) */
  readonly maxBodyBytes?: number;
  /** Most addresses in one JSON request (`POST /v1/bulk` or `POST /v1/bulk/{id}/emails`). @default 10000 */
  readonly maxEmailsPerRequest?: number;
  /** Largest list uploaded as `text/plain` or `text/csv`, in bytes. @default 67108864 (64 MiB) */
  readonly maxListBytes?: number;
  /** Most addresses in one uploaded list. @default 1000000 */
  readonly maxListEmails?: number;
  /** Most jobs one tenant (API key) may hold at once; deleting a job frees its place. @default 100 */
  readonly maxJobsPerKey?: number;
  /**
   * Most addresses one tenant may hold across its jobs (deleting a job frees its addresses), so that one key
   * cannot run the process out of memory. @default a quarter of the JavaScript heap limit at 256 bytes an address
   * (see {@link defaultMaxAddressesPerKey}; 1,048,576 addresses a GiB of heap)
   */
  readonly maxAddressesPerKey?: number;
  /**
   * Most bytes one tenant's jobs may hold: each address costs 256 bytes plus two a character of the address and of
   * its kept CSV row, and a job two a character of its name (see {@link defaultMaxBytesPerKey}). It bounds what
   * wide rows cost, which `maxAddressesPerKey` does not. @default a quarter of the JavaScript heap limit
   */
  readonly maxBytesPerKey?: number;
  /**
   * Most bytes all jobs of the server may hold, counted as for `maxBytesPerKey`, so that many keys together cannot
   * run the process out of memory either. @default half the JavaScript heap limit
   */
  readonly maxBytesHeld?: number;
  /** Sustained requests per second per tenant (token bucket); `Infinity` turns rate limiting off. @default 50 */
  readonly requestsPerSecond?: number;
  /** Requests a tenant may make at once after a quiet period (bucket size). @default 100 */
  readonly burst?: number;
  /**
   * Failed authentications accepted per client address per minute (and at once); past them the address gets
   * 429 `rate_limited` with `Retry-After`, whatever key it sends. Only the Node listener knows the address.
   * @default 20
   */
  readonly failedAuthPerMinute?: number;
}

/** The limits whose defaults are the runtime's memory budgets (a share of the JavaScript heap). */
export type MemoryLimit = 'maxAddressesPerKey' | 'maxBytesPerKey' | 'maxBytesHeld';

/** The limits whose defaults are constants: every limit but the {@link MemoryLimit}s. */
export type FixedLimit = Exclude<keyof HttpLimits, MemoryLimit>;

/**
 * The documented defaults of the {@link FixedLimit}s. The memory budgets' defaults come from the platform
 * (`DEFAULT_LIMITS` has all of them, on Node's heap).
 */
export const FIXED_LIMITS: Readonly<Required<Pick<HttpLimits, FixedLimit>>> = Object.freeze({
  maxBodyBytes: 10 * 1024 * 1024,
  maxEmailsPerRequest: 10_000,
  maxListBytes: 64 * 1024 * 1024,
  maxListEmails: 1_000_000,
  maxJobsPerKey: 100,
  requestsPerSecond: 50,
  burst: 100,
  failedAuthPerMinute: 20,
});

/** Bounds of `GET /v1/verify?timeout=`, in seconds, and its default. */
export const VERIFY_TIMEOUT = Object.freeze({ min: 1, max: 60, default: 10 });

/** Paging of `GET /v1/bulk/{id}/results` (JSON): the largest `limit`; without one the whole job is streamed. */
export const RESULTS_PAGE = Object.freeze({ max: 10_000 });

/** Paging of `GET /v1/bulk`: `limit` default and maximum. */
export const JOBS_PAGE = Object.freeze({ default: 50, max: 1000 });

function positiveInteger(
  limits: HttpLimits,
  defaults: Readonly<Required<HttpLimits>>,
  key: keyof HttpLimits,
): number {
  const value = limits[key] ?? defaults[key];
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new OptionsError(`limits.${key}`, 'must be a positive integer');
  }
  return value;
}

/**
 * Validates `limits` once and fills in `defaults` (the platform's: `DEFAULT_LIMITS` on Node); an `OptionsError`
 * names a bad field.
 */
export function resolveLimits(
  given: HttpLimits | undefined,
  defaults: Readonly<Required<HttpLimits>>,
): Readonly<Required<HttpLimits>> {
  const limits = given ?? {};
  if (typeof limits !== 'object' || limits === null) throw new OptionsError('limits', 'must be an object');
  for (const key of Object.keys(limits)) {
    if (!Object.hasOwn(defaults, key)) throw new OptionsError(`limits.${key}`, 'is not a known option');
  }
  const requestsPerSecond = limits.requestsPerSecond ?? defaults.requestsPerSecond;
  if (typeof requestsPerSecond !== 'number' || !(requestsPerSecond > 0)) {
    throw new OptionsError('limits.requestsPerSecond', 'must be a positive number or Infinity');
  }
  return Object.freeze({
    maxBodyBytes: positiveInteger(limits, defaults, 'maxBodyBytes'),
    maxEmailsPerRequest: positiveInteger(limits, defaults, 'maxEmailsPerRequest'),
    maxListBytes: positiveInteger(limits, defaults, 'maxListBytes'),
    maxListEmails: positiveInteger(limits, defaults, 'maxListEmails'),
    maxJobsPerKey: positiveInteger(limits, defaults, 'maxJobsPerKey'),
    maxAddressesPerKey: positiveInteger(limits, defaults, 'maxAddressesPerKey'),
    maxBytesPerKey: positiveInteger(limits, defaults, 'maxBytesPerKey'),
    maxBytesHeld: positiveInteger(limits, defaults, 'maxBytesHeld'),
    requestsPerSecond,
    burst: positiveInteger(limits, defaults, 'burst'),
    failedAuthPerMinute: positiveInteger(limits, defaults, 'failedAuthPerMinute'),
  });
}

/**
 * The adapter's limits and bounds, with their documented defaults. The OpenAPI document and docs/http.md
 * are written from these values.
 * @module
 */
import { getHeapStatistics } from 'node:v8';
import { OptionsError } from '../errors.js';

/** Limits of the HTTP adapter. Every field is optional; defaults are in {@link DEFAULT_LIMITS}. */
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

/** Bytes of memory one held address costs, counted generously (stored result, input, scheduling, parsing). */
const BYTES_PER_ADDRESS = 256;

/**
 * The default `maxAddressesPerKey`: a quarter of this process's JavaScript heap limit
 * (`v8.getHeapStatistics().heap_size_limit`, set by `--max-old-space-size` or the machine's memory) at 256 bytes
 * an address, at least 10,000.
 * @example
 * defaultMaxAddressesPerKey(4 * 2 ** 30); // 4194304 for a 4 GiB heap
 */
export function defaultMaxAddressesPerKey(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.max(10_000, Math.floor(heapLimitBytes / 4 / BYTES_PER_ADDRESS));
}

/** The smallest default byte budget (16 MiB), whatever the heap limit. */
const MIN_BYTE_BUDGET = 16 * 2 ** 20;

/**
 * The default `maxBytesPerKey`: a quarter of this process's JavaScript heap limit (as for
 * {@link defaultMaxAddressesPerKey}), at least 16 MiB.
 * @example
 * defaultMaxBytesPerKey(4 * 2 ** 30); // 1073741824 for a 4 GiB heap
 */
export function defaultMaxBytesPerKey(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.max(MIN_BYTE_BUDGET, Math.floor(heapLimitBytes / 4));
}

/**
 * The default `maxBytesHeld`: half this process's JavaScript heap limit, at least 16 MiB (the rest is for requests
 * in flight, results being written and the program itself).
 * @example
 * defaultMaxBytesHeld(4 * 2 ** 30); // 2147483648 for a 4 GiB heap
 */
export function defaultMaxBytesHeld(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.max(MIN_BYTE_BUDGET, Math.floor(heapLimitBytes / 2));
}

/** The documented defaults of {@link HttpLimits}. */
export const DEFAULT_LIMITS: Readonly<Required<HttpLimits>> = Object.freeze({
  maxBodyBytes: 10 * 1024 * 1024,
  maxEmailsPerRequest: 10_000,
  maxListBytes: 64 * 1024 * 1024,
  maxListEmails: 1_000_000,
  maxJobsPerKey: 100,
  maxAddressesPerKey: defaultMaxAddressesPerKey(),
  maxBytesPerKey: defaultMaxBytesPerKey(),
  maxBytesHeld: defaultMaxBytesHeld(),
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

function positiveInteger(limits: HttpLimits, key: keyof HttpLimits): number {
  const value = limits[key] ?? DEFAULT_LIMITS[key];
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new OptionsError(`limits.${key}`, 'must be a positive integer');
  }
  return value;
}

/** Validates `limits` once and fills in the defaults; an `OptionsError` names a bad field. */
export function resolveLimits(limits: HttpLimits = {}): Readonly<Required<HttpLimits>> {
  if (typeof limits !== 'object' || limits === null) throw new OptionsError('limits', 'must be an object');
  for (const key of Object.keys(limits)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, key)) throw new OptionsError(`limits.${key}`, 'is not a known option');
  }
  const requestsPerSecond = limits.requestsPerSecond ?? DEFAULT_LIMITS.requestsPerSecond;
  if (typeof requestsPerSecond !== 'number' || !(requestsPerSecond > 0)) {
    throw new OptionsError('limits.requestsPerSecond', 'must be a positive number or Infinity');
  }
  return Object.freeze({
    maxBodyBytes: positiveInteger(limits, 'maxBodyBytes'),
    maxEmailsPerRequest: positiveInteger(limits, 'maxEmailsPerRequest'),
    maxListBytes: positiveInteger(limits, 'maxListBytes'),
    maxListEmails: positiveInteger(limits, 'maxListEmails'),
    maxJobsPerKey: positiveInteger(limits, 'maxJobsPerKey'),
    maxAddressesPerKey: positiveInteger(limits, 'maxAddressesPerKey'),
    maxBytesPerKey: positiveInteger(limits, 'maxBytesPerKey'),
    maxBytesHeld: positiveInteger(limits, 'maxBytesHeld'),
    requestsPerSecond,
    burst: positiveInteger(limits, 'burst'),
    failedAuthPerMinute: positiveInteger(limits, 'failedAuthPerMinute'),
  });
}

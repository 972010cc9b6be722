/**
 * Options of `BulkJobManager`: defaults and one-time validation.
 * @module
 */
import { OptionsError } from '../errors.js';
import { integerOption } from '../option-fields.js';
import type { VerifyOptions } from '../options.js';
import { memoryJobStore } from './memory-store.js';
import type { JobRunner } from './runner.js';
import type { BulkJobManagerOptions, BulkVerifier, Clock, JobStore } from './types.js';

/** The documented defaults of {@link BulkJobManagerOptions}. */
export const BULK_DEFAULTS = Object.freeze({
  concurrency: 64,
  perDomainConcurrency: 4,
  yieldAfterMs: 5,
  verificationTimeoutMs: 120_000,
  maxJobs: 1000,
  maxAddressesPerJob: 1_000_000,
  maxAddressesPerAdd: 100_000,
  maxEmailLength: 1024,
  greylistDelaysMs: Object.freeze([60_000, 300_000, 900_000]) as readonly number[],
  retentionMs: 30 * 86_400_000,
});

/** Options after validation and defaulting. */
export interface ResolvedBulkOptions {
  readonly verifier: BulkVerifier | undefined;
  readonly verifierOptions: VerifyOptions;
  readonly concurrency: number;
  readonly perDomainConcurrency: number;
  readonly yieldAfterMs: number;
  readonly verificationTimeoutMs: number;
  readonly maxJobs: number;
  readonly maxAddressesPerJob: number;
  readonly maxAddressesPerAdd: number;
  readonly maxEmailLength: number;
  readonly greylistDelaysMs: readonly number[];
  readonly retentionMs: number;
  readonly store: JobStore;
  readonly clock: Clock;
  readonly ids: () => string;
  readonly runner: JobRunner | undefined;
}

const KNOWN_KEYS = new Set([
  'verifier',
  'verifierOptions',
  'concurrency',
  'perDomainConcurrency',
  'yieldAfterMs',
  'verificationTimeoutMs',
  'webhooks',
  'maxJobs',
  'maxAddressesPerJob',
  'maxAddressesPerAdd',
  'maxEmailLength',
  'greylistRetry',
  'store',
  'retentionMs',
  'clock',
  'ids',
  'runner',
]);

/** Largest job the manager accepts at all (positions are kept in 32-bit columns). */
const MAX_POSITIONS = 100_000_000;
/** Longest greylisting delay: one day. */
const MAX_DELAY_MS = 86_400_000;
const MAX_RETRIES = 10;

/** The system clock. */
const SYSTEM_CLOCK: Clock = Object.freeze({
  now: () => Date.now(),
  setTimeout: (callback: () => void, ms: number): unknown => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle: unknown) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/** Random UUIDs (version 4: 122 random bits). */
const randomIds = (): string => globalThis.crypto.randomUUID();

function withMethods<T>(value: unknown, key: string, methods: readonly string[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) {
    throw new OptionsError(key, `must be an object with ${methods.join(', ')}`);
  }
  for (const method of methods) {
    if (typeof (value as Record<string, unknown>)[method] !== 'function') {
      throw new OptionsError(key, `must have a ${method}() method`);
    }
  }
  return value as T;
}

/**
 * Checks a list of greylisting retry delays (milliseconds): at most 10 integers 0-86,400,000. Returns the
 * frozen copy, or what is wrong with it.
 */
export function checkGreylistDelays(delaysMs: unknown): readonly number[] | string {
  if (!Array.isArray(delaysMs) || delaysMs.length > MAX_RETRIES) {
    return `must be an array of at most ${MAX_RETRIES} delays`;
  }
  for (const delay of delaysMs) {
    if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_MS) {
      return `entries must be integers 0-${MAX_DELAY_MS}`;
    }
  }
  return Object.freeze([...(delaysMs as number[])]);
}

function delays(value: unknown): readonly number[] {
  if (value === undefined) return BULK_DEFAULTS.greylistDelaysMs;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError('greylistRetry', 'must be an object { delaysMs }');
  }
  for (const key of Object.keys(value)) {
    if (key !== 'delaysMs') throw new OptionsError(`greylistRetry.${key}`, 'is not a known option');
  }
  const delaysMs = (value as { delaysMs?: unknown }).delaysMs;
  if (delaysMs === undefined) return BULK_DEFAULTS.greylistDelaysMs;
  const checked = checkGreylistDelays(delaysMs);
  if (typeof checked === 'string') throw new OptionsError('greylistRetry.delaysMs', checked);
  return checked;
}

/** Ten years: the longest retention, so that `completed_at + retention` stays a valid time. */
const MAX_RETENTION_MS = 10 * 365 * 86_400_000;

function retention(value: unknown): number {
  if (value === 0) return 0;
  return integerOption(value, 'retentionMs', BULK_DEFAULTS.retentionMs, 1000, MAX_RETENTION_MS);
}

/** Validates the manager's options once and fills in defaults; an {@link OptionsError} names a bad one. */
export function resolveBulkOptions(options: BulkJobManagerOptions = {}): ResolvedBulkOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new OptionsError('options', 'must be an object');
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key)) throw new OptionsError(key, 'is not a known option');
  }
  const verifier = withMethods<BulkVerifier>(options.verifier, 'verifier', ['verify']);
  const verifierOptions = options.verifierOptions;
  if (verifierOptions !== undefined) {
    if (typeof verifierOptions !== 'object' || verifierOptions === null || Array.isArray(verifierOptions)) {
      throw new OptionsError('verifierOptions', 'must be an object');
    }
    if (verifier !== undefined) {
      throw new OptionsError(
        'verifierOptions',
        'cannot be combined with verifier (configure that verifier instead)',
      );
    }
  }
  if (options.ids !== undefined && typeof options.ids !== 'function') {
    throw new OptionsError('ids', 'must be a function returning a string');
  }
  const maxAddressesPerJob = integerOption(
    options.maxAddressesPerJob,
    'maxAddressesPerJob',
    BULK_DEFAULTS.maxAddressesPerJob,
    1,
    MAX_POSITIONS,
  );
  return {
    verifier,
    verifierOptions: verifierOptions ?? {},
    concurrency: integerOption(options.concurrency, 'concurrency', BULK_DEFAULTS.concurrency, 1, 10_000),
    perDomainConcurrency: integerOption(
      options.perDomainConcurrency,
      'perDomainConcurrency',
      BULK_DEFAULTS.perDomainConcurrency,
      1,
      10_000,
    ),
    yieldAfterMs: integerOption(options.yieldAfterMs, 'yieldAfterMs', BULK_DEFAULTS.yieldAfterMs, 1, 1000),
    verificationTimeoutMs: integerOption(
      options.verificationTimeoutMs,
      'verificationTimeoutMs',
      BULK_DEFAULTS.verificationTimeoutMs,
      10,
      86_400_000,
    ),
    maxJobs: integerOption(options.maxJobs, 'maxJobs', BULK_DEFAULTS.maxJobs, 1, 1_000_000),
    maxAddressesPerJob,
    maxAddressesPerAdd: integerOption(
      options.maxAddressesPerAdd,
      'maxAddressesPerAdd',
      Math.min(BULK_DEFAULTS.maxAddressesPerAdd, maxAddressesPerJob),
      1,
      maxAddressesPerJob,
    ),
    maxEmailLength: integerOption(
      options.maxEmailLength,
      'maxEmailLength',
      BULK_DEFAULTS.maxEmailLength,
      1,
      65_536,
    ),
    greylistDelaysMs: delays(options.greylistRetry),
    retentionMs: retention(options.retentionMs),
    store:
      withMethods<JobStore>(options.store, 'store', ['saveJob', 'putResults', 'getResults', 'deleteJob']) ??
      memoryJobStore(),
    clock: withMethods<Clock>(options.clock, 'clock', ['now', 'setTimeout', 'clearTimeout']) ?? SYSTEM_CLOCK,
    ids: options.ids ?? randomIds,
    runner: withMethods<JobRunner>(options.runner, 'runner', ['open']),
  };
}

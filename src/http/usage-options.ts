/**
 * The `usage` option of `createHandler`: where usage (`GET /v1/usage`) and keys' own limits are counted.
 * @module
 */
import type { LimitStore, UsageStore } from '../bulk/usage.js';
import { memoryUsageStore } from '../bulk/usage-memory.js';
import { createUsageMeter, type UsageMeter } from '../bulk/usage-meter.js';
import { OptionsError } from '../errors.js';

/**
 * Where `createHandler` counts usage (`GET /v1/usage`) and keys' own limits. Give the job store (`pgliteStore()`,
 * `postgresStore()`) as `store` and `limits` so that every API node counts the same numbers, or a Redis
 * `redisLimits()` as `limits` on a worker fleet.
 */
export interface HttpUsageOptions {
  /** Where usage counts are written and read. @default an in-memory store (this process only) */
  readonly store?: UsageStore;
  /**
   * The meter that counts single verifications (and, given to the `BulkJobManager` as `usage`, bulk addresses).
   * When given, the caller owns it and it must write to `store`. @default a meter on `store`, closed by `close()`
   */
  readonly meter?: UsageMeter;
  /** The counters of keys' daily quotas and request rates. @default in this process */
  readonly limits?: LimitStore;
  /** Milliseconds between the writes of the meter the handler makes (1-3600000). @default 1000 */
  readonly flushMs?: number;
}

const USAGE_OPTIONS = new Set(['store', 'meter', 'limits', 'flushMs']);

/** The usage store, meter and limit counters of `options` (validated), and whether the handler owns the meter. */
export function usageOf(
  options: HttpUsageOptions | undefined,
  clock: (() => number) | undefined,
): { store: UsageStore; meter: UsageMeter; limits: LimitStore; ownMeter: boolean } {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new OptionsError('usage', 'must be an object');
  }
  for (const key of Object.keys(options ?? {})) {
    if (!USAGE_OPTIONS.has(key)) throw new OptionsError(`usage.${key}`, 'is not a known option');
  }
  const memory =
    options?.store === undefined || options.limits === undefined ? memoryUsageStore() : undefined;
  const store = options?.store ?? (memory as UsageStore);
  if (typeof store.readUsage !== 'function' || typeof store.addUsage !== 'function') {
    throw new OptionsError('usage.store', 'must have addUsage() and readUsage() methods');
  }
  const limits = options?.limits ?? (memory as LimitStore);
  for (const method of ['reserveQuota', 'releaseQuota', 'quotaUsed', 'takeToken'] as const) {
    if (typeof limits[method] !== 'function')
      throw new OptionsError('usage.limits', `must have a ${method}() method`);
  }
  if (options?.meter !== undefined) {
    if (options.flushMs !== undefined)
      throw new OptionsError('usage.flushMs', 'cannot be combined with meter');
    if (typeof options.meter.count !== 'function' || typeof options.meter.flush !== 'function') {
      throw new OptionsError('usage.meter', 'must have count() and flush() methods');
    }
    return { store, meter: options.meter, limits, ownMeter: false };
  }
  const flushMs = options?.flushMs;
  if (flushMs !== undefined && (!Number.isInteger(flushMs) || flushMs < 1 || flushMs > 3_600_000)) {
    throw new OptionsError('usage.flushMs', 'must be an integer 1-3600000');
  }
  const meter = createUsageMeter({
    store,
    ...(flushMs === undefined ? {} : { flushMs }),
    ...(clock === undefined
      ? {}
      : {
          clock: {
            now: clock,
            setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
            clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
          },
        }),
  });
  return { store, meter, limits, ownMeter: true };
}

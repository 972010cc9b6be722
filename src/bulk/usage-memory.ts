/**
 * The in-process {@link UsageStore} and {@link LimitStore}: counters in maps, for one API node (the default
 * without a shared store) and for tests.
 * @module
 */
import type { LimitStore, QuotaAnswer, TokenAnswer, UsageCount, UsageStore } from './usage.js';

/** Options of {@link memoryUsageStore}. */
export interface MemoryUsageOptions {
  /** Most quota counters and rate buckets kept; past it the oldest days' counters and full buckets go. @default 100000 */
  readonly maxTracked?: number;
}

interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * Makes a store that keeps usage and limit counters in this process.
 * @example
 * const store = memoryUsageStore();
 * await store.reserveQuota('key-1', '2026-01-01', 3, 10); // { granted: true, used: 3 }
 */
export function memoryUsageStore(options: MemoryUsageOptions = {}): UsageStore & LimitStore {
  const maxTracked = options.maxTracked ?? 100_000;
  const usage = new Map<string, UsageCount>();
  const quotas = new Map<string, number>();
  const buckets = new Map<string, Bucket>();
  const quotaKey = (key: string, day: string): string => `${day}\u0000${key}`;

  function pruneQuotas(): void {
    // Keys start with the day: the smallest are the oldest.
    const oldest = [...quotas.keys()].sort().slice(0, Math.ceil(quotas.size / 2));
    for (const key of oldest) quotas.delete(key);
  }

  return {
    async addUsage(counts) {
      for (const count of counts) {
        const key = `${count.tenant}\u0000${count.day}\u0000${count.kind}\u0000${count.status}`;
        const held = usage.get(key);
        usage.set(key, { ...count, count: (held?.count ?? 0) + count.count });
      }
    },
    async readUsage(tenant, from, to) {
      return [...usage.values()].filter(
        (count) => count.tenant === tenant && count.day >= from && count.day <= to,
      );
    },
    async reserveQuota(key, day, units, limit): Promise<QuotaAnswer> {
      const used = quotas.get(quotaKey(key, day)) ?? 0;
      if (used + units > limit) return { granted: false, used };
      if (!quotas.has(quotaKey(key, day)) && quotas.size >= maxTracked) pruneQuotas();
      quotas.set(quotaKey(key, day), used + units);
      return { granted: true, used: used + units };
    },
    async releaseQuota(key, day, units) {
      const used = quotas.get(quotaKey(key, day));
      if (used !== undefined) quotas.set(quotaKey(key, day), Math.max(0, used - units));
    },
    async quotaUsed(key, day) {
      return quotas.get(quotaKey(key, day)) ?? 0;
    },
    async takeToken(key, ratePerSecond, burst, nowMs): Promise<TokenAnswer> {
      let bucket = buckets.get(key);
      if (bucket === undefined) {
        if (buckets.size >= maxTracked) buckets.clear();
        bucket = { tokens: burst, updated: nowMs };
        buckets.set(key, bucket);
      }
      const elapsed = Math.max(0, nowMs - bucket.updated) / 1000;
      bucket.tokens = Math.min(burst, bucket.tokens + elapsed * ratePerSecond);
      bucket.updated = Math.max(bucket.updated, nowMs);
      const allowed = bucket.tokens >= 1;
      if (allowed) bucket.tokens -= 1;
      return { allowed, tokens: bucket.tokens };
    },
  };
}

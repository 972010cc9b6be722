/**
 * Requests per second per tenant: a token bucket for each, refilled continuously from an injectable clock.
 * @module
 */

/** Settings of a {@link RateLimiter}. */
export interface RateLimitOptions {
  /** Tokens added per second (the sustained rate). `Infinity` turns limiting off. */
  readonly requestsPerSecond: number;
  /** Bucket size: the most requests accepted at once after a quiet period. */
  readonly burst: number;
  /** Clock in milliseconds. @default Date.now */
  readonly clock?: () => number;
  /** Buckets kept before full ones (equivalent to no bucket) are dropped. @default 10000 */
  readonly maxTracked?: number;
}

/** The outcome of one request against its tenant's bucket. */
export interface RateDecision {
  readonly allowed: boolean;
  /** `RateLimit-*` headers for the response (empty when limiting is off). */
  readonly headers: Readonly<Record<string, string>>;
  /** Whole seconds until a request would be accepted (0 when allowed). */
  readonly retryAfter: number;
}

/** A token bucket per tenant. */
export interface RateLimiter {
  /** Takes one token from `tenant`'s bucket if it has one. */
  take(tenant: string): RateDecision;
  /** Whether `tenant`'s bucket has a token now, without taking it. */
  peek(tenant: string): RateDecision;
  /** Number of buckets held (for monitoring; full buckets are dropped once `maxTracked` is reached). */
  size(): number;
}

interface Bucket {
  tokens: number;
  updated: number;
}

const UNLIMITED: RateDecision = Object.freeze({ allowed: true, headers: Object.freeze({}), retryAfter: 0 });

/**
 * Creates a limiter. Headers follow the IETF RateLimit header fields draft: `RateLimit-Limit` (the burst),
 * `RateLimit-Remaining` (whole tokens left) and `RateLimit-Reset` (seconds until the bucket is full again).
 * @example
 * const limiter = createRateLimiter({ requestsPerSecond: 10, burst: 20 });
 * limiter.take('tenant-a').allowed; // true
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const { requestsPerSecond: rate, burst } = options;
  if (rate === Number.POSITIVE_INFINITY)
    return { take: () => UNLIMITED, peek: () => UNLIMITED, size: () => 0 };
  const clock = options.clock ?? Date.now;
  const maxTracked = options.maxTracked ?? 10_000;
  const buckets = new Map<string, Bucket>();

  function refill(bucket: Bucket, now: number): void {
    const elapsed = Math.max(0, now - bucket.updated) / 1000;
    bucket.tokens = Math.min(burst, bucket.tokens + elapsed * rate);
    bucket.updated = now;
  }

  function prune(now: number): void {
    for (const [tenant, bucket] of buckets) {
      refill(bucket, now);
      if (bucket.tokens >= burst) buckets.delete(tenant);
    }
  }

  function decide(tenant: string, consume: boolean): RateDecision {
    const now = clock();
    let bucket = buckets.get(tenant);
    if (bucket === undefined) {
      if (!consume) return { allowed: true, retryAfter: 0, headers: {} };
      if (buckets.size >= maxTracked) prune(now);
      bucket = { tokens: burst, updated: now };
      buckets.set(tenant, bucket);
    } else {
      refill(bucket, now);
    }
    const allowed = bucket.tokens >= 1;
    if (allowed && consume) bucket.tokens -= 1;
    const retryAfter = allowed ? 0 : Math.ceil((1 - bucket.tokens) / rate);
    return {
      allowed,
      retryAfter,
      headers: {
        'ratelimit-limit': String(burst),
        'ratelimit-remaining': String(Math.floor(bucket.tokens)),
        'ratelimit-reset': String(Math.ceil((burst - bucket.tokens) / rate)),
      },
    };
  }

  return {
    size: () => buckets.size,
    take: (tenant) => decide(tenant, true),
    peek: (tenant) => decide(tenant, false),
  };
}

/**
 * A key's own limits (`Principal.requestsPerSecond` and `Principal.addressesPerDay`), counted in the handler's
 * {@link LimitStore}: in this process by default, for the whole fleet on PostgreSQL or Redis.
 * @module
 */
import { dayOf, type LimitStore, msUntilNextDay } from '../bulk/usage.js';
import type { Context, KeyLimits } from './context.js';
import { HttpError } from './errors.js';
import type { Principal } from './principal.js';
import type { RateDecision } from './rate-limit.js';

/** Seconds of its rate a key's bucket holds: a key with `--rate 20/s` may send 40 requests at once. */
export const KEY_BURST_SECONDS = 2;

/** The name a key's counters are kept under: its public id, else its tenant. */
export function limitKeyOf(principal: Principal): string {
  return principal.keyId ?? principal.tenant;
}

/** The key's own request rate, or `undefined` when it has none (then the handler's limit applies). */
export function keyRateOf(principal: Principal): number | undefined {
  const rate = principal.requestsPerSecond;
  return typeof rate === 'number' && rate > 0 && rate !== Number.POSITIVE_INFINITY ? rate : undefined;
}

/**
 * The key's daily address quota, or `undefined` when it has none (or `Infinity`). A fraction counts whole
 * addresses; a value that is not a number of addresses (negative, NaN, not a number) fails closed: 0.
 */
export function keyQuotaOf(principal: Principal): number | undefined {
  const quota: unknown = principal.addressesPerDay;
  if (quota === undefined || quota === Number.POSITIVE_INFINITY) return undefined;
  return typeof quota === 'number' && quota >= 0 ? Math.min(Math.floor(quota), Number.MAX_SAFE_INTEGER) : 0;
}

function unavailable(error: unknown): HttpError {
  return new HttpError('service_unavailable', 'the rate and quota counters do not answer; retry shortly', {
    cause: error,
  });
}

/**
 * Takes one request from the bucket of a key with its own `rate`: the decision, with the `RateLimit-*` headers the
 * handler's own limiter sends (the bucket holds {@link KEY_BURST_SECONDS} seconds of the rate).
 */
export async function takeKeyRequest(
  limits: KeyLimits,
  principal: Principal,
  rate: number,
): Promise<RateDecision> {
  const burst = Math.max(1, Math.ceil(rate * KEY_BURST_SECONDS));
  let tokens: number;
  let allowed: boolean;
  try {
    ({ tokens, allowed } = await limits.store.takeToken(limitKeyOf(principal), rate, burst, limits.clock()));
  } catch (error) {
    throw unavailable(error);
  }
  return {
    allowed,
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / rate)),
    headers: {
      'ratelimit-limit': String(burst),
      'ratelimit-remaining': String(Math.max(0, Math.floor(tokens))),
      'ratelimit-reset': String(Math.ceil((burst - tokens) / rate)),
    },
  };
}

/**
 * Reserves `units` addresses of the caller's daily quota (single verifications and bulk addresses), atomically
 * across every node that shares the counters. Throws `limit_exceeded` (429, with `Retry-After` and `RateLimit-*`
 * headers until 00:00 UTC) naming how many addresses remain today when they do not fit; nothing is reserved then.
 * Returns the function that gives the units back, for a request that fails after the reservation.
 */
export async function reserveAddresses(context: Context, units: number): Promise<() => Promise<void>> {
  const principal = context.principal;
  const limit = principal === undefined ? undefined : keyQuotaOf(principal);
  if (principal === undefined || limit === undefined || units <= 0) return async () => undefined;
  const limits = context.services.keyLimits;
  const now = limits.clock();
  const day = dayOf(now);
  const key = limitKeyOf(principal);
  let answer: Awaited<ReturnType<LimitStore['reserveQuota']>>;
  try {
    answer = await limits.store.reserveQuota(key, day, units, limit);
  } catch (error) {
    throw unavailable(error);
  }
  if (!answer.granted) {
    const remaining = Math.max(0, limit - answer.used);
    const reset = String(Math.ceil(msUntilNextDay(now) / 1000));
    throw new HttpError(
      'limit_exceeded',
      `daily address quota exceeded: this API key may verify ${limit} addresses per UTC day, ${remaining} remain today and this request needs ${units}; the quota resets at 00:00 UTC`,
      {
        headers: {
          'retry-after': reset,
          'ratelimit-limit': String(limit),
          'ratelimit-remaining': String(remaining),
          'ratelimit-reset': reset,
        },
      },
    );
  }
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    await limits.store.releaseQuota(key, day, units).catch(() => undefined);
  };
}

/**
 * When failed webhook deliveries are retried: exponential backoff with jitter, over about a day.
 * @module
 */

/**
 * Delays before each retry, in ms: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (the schedule Standard Webhooks
 * senders use). With the first attempt that makes 8 attempts over about 27.6 hours; each delay is jittered by
 * ±20 % so that receivers coming back from an outage are not hit all at once.
 */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
]);

/** Share of each delay added or removed at random. */
export const WEBHOOK_RETRY_JITTER = 0.2;

/**
 * The delay before retry number `retry` (0 for the first retry), jittered with `random` (uniform in [0, 1)),
 * or `null` when the schedule is exhausted and the delivery has failed for good.
 * @example
 * retryDelayMs(DEFAULT_WEBHOOK_RETRY_DELAYS_MS, 0, () => 0.5); // 5000
 * retryDelayMs(DEFAULT_WEBHOOK_RETRY_DELAYS_MS, 7, Math.random); // null
 */
export function retryDelayMs(delays: readonly number[], retry: number, random: () => number): number | null {
  const base = delays[retry];
  if (base === undefined) return null;
  const factor = 1 + WEBHOOK_RETRY_JITTER * (2 * random() - 1);
  return Math.max(0, Math.round(base * factor));
}

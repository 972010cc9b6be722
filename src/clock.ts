/**
 * The injected time of every layer that waits (bulk jobs, webhook retries): the real one by default, a fake in tests.
 * @module
 */

/**
 * Time source and timers. Inject a fake one in tests so that greylisting delays pass without sleeping.
 * @default { now: Date.now, setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout }
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `callback` once after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a timer made by `setTimeout`. */
  clearTimeout(handle: unknown): void;
}

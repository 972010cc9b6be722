/**
 * A bounded copy, in this process, of the known results a shared store answered or was given, so that an address
 * looked up or verified here is not asked of the store again while the copy holds.
 * @module
 */
import type { Clock } from '../clock.js';
import { memoryKnownResults } from './memory.js';
import type { KnownEntry, KnownResult, KnownResults } from './types.js';

/** Options of {@link frontedKnownResults}. */
export interface FrontOptions {
  /** Most entries copied; the least recently used goes first. */
  readonly maxEntries: number;
  /** Most bytes copied (as `memoryKnownResults` counts them). */
  readonly maxBytes: number;
  /**
   * Longest time a copy answers after it was made, in milliseconds (never past the verdict's own expiry): how long a
   * verdict that another process replaced (a `fresh` check there) may still answer here.
   */
  readonly holdMs: number;
  /** Time source: decides expiry (the store's clock). */
  readonly clock: Pick<Clock, 'now'>;
  /** When a result `inner.get` answered stops answering (ms since the epoch), if the store says; else not copied. */
  readonly expiryOf?: (result: KnownResult) => number | undefined;
}

/**
 * Wraps `inner` (a shared store) with a bounded in-process copy: `get` answers from the copy and asks `inner` only
 * for the other keys; `set` copies its entries, then hands them to `inner` (and resolves as `inner.set` does). A
 * copy answers until the earlier of its verdict's expiry and `holdMs` after it was made; misses are never copied
 * (another process may keep the verdict next).
 * @example
 * const known = frontedKnownResults(shared, { maxEntries: 50_000, maxBytes: 16 << 20, holdMs: 300_000, clock: Date });
 */
export function frontedKnownResults(inner: KnownResults, options: FrontOptions): KnownResults {
  const { clock, holdMs } = options;
  const local = memoryKnownResults({ maxEntries: options.maxEntries, maxBytes: options.maxBytes, clock });

  /**
   * `entry`, answering here until the earlier of its own expiry and `holdMs` from now; `undefined` when that is
   * already over.
   */
  function held(entry: KnownEntry, expiresAt: number): KnownEntry | undefined {
    const now = clock.now();
    const until = Math.min(expiresAt, now + holdMs);
    return until > entry.checkedAt && until > now ? { ...entry, ttlMs: until - entry.checkedAt } : undefined;
  }

  async function learn(fetched: ReadonlyMap<string, KnownResult>): Promise<void> {
    if (options.expiryOf === undefined || fetched.size === 0) return;
    // A verdict set here while the store was asked is newer than what the store answered: keep it.
    const present = await local.get([...fetched.keys()]);
    const copies: KnownEntry[] = [];
    for (const [key, result] of fetched) {
      const expiresAt = options.expiryOf(result);
      if (expiresAt === undefined || present.has(key)) continue;
      const { checkedAt, ...verdict } = result;
      const copy = held({ key, verdict, checkedAt, ttlMs: 1 }, expiresAt);
      if (copy !== undefined) copies.push(copy);
    }
    await local.set(copies);
  }

  return {
    ...(inner.now === undefined ? {} : { now: () => inner.now!() }),
    async get(keys) {
      const found = new Map(await local.get(keys));
      const missing = keys.filter((key) => !found.has(key));
      if (missing.length === 0) return found;
      const fetched = await inner.get(missing);
      await learn(fetched);
      for (const [key, result] of fetched) found.set(key, result);
      return found;
    },
    async set(entries) {
      const copies: KnownEntry[] = [];
      for (const entry of entries) {
        // A verdict that answers no more still replaces the copy, which then answers nothing.
        const copy = held(entry, entry.checkedAt + entry.ttlMs);
        copies.push(copy ?? { ...entry, checkedAt: clock.now() - 1, ttlMs: 1 });
      }
      await local.set(copies);
      return inner.set(entries);
    },
  };
}

/**
 * Known results asked for together: the `get` and `set` calls made in one turn of the event loop go to the store as
 * one call each, so a bulk chunk's verifications cost one round trip to a shared store, not one per address.
 * @module
 */
import type { KnownEntry, KnownResult, KnownResults } from './types.js';

/** Most keys (or entries) in one call to the wrapped store. */
export const MAX_BATCH = 1000;

interface Waiter<T> {
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Wraps `inner` so that the calls made before the next macrotask are merged into batches of at most
 * {@link MAX_BATCH} keys or entries; each caller gets its own keys' answer (or the batch's error).
 * @example
 * const shared = batchedKnownResults(storeKnownResults);
 */
export function batchedKnownResults(inner: KnownResults): KnownResults {
  let gets: { keys: readonly string[]; waiter: Waiter<ReadonlyMap<string, KnownResult>> }[] = [];
  let sets: { entries: readonly KnownEntry[]; waiter: Waiter<void> }[] = [];
  let scheduled = false;

  async function flushGets(batch: typeof gets): Promise<void> {
    const keys = [...new Set(batch.flatMap((call) => call.keys))];
    const found = new Map<string, KnownResult>();
    try {
      for (let i = 0; i < keys.length; i += MAX_BATCH) {
        for (const [key, result] of await inner.get(keys.slice(i, i + MAX_BATCH))) found.set(key, result);
      }
    } catch (error) {
      for (const call of batch) call.waiter.reject(error);
      return;
    }
    for (const call of batch) {
      const own = new Map<string, KnownResult>();
      for (const key of call.keys) {
        const result = found.get(key);
        if (result !== undefined) own.set(key, result);
      }
      call.waiter.resolve(own);
    }
  }

  async function flushSets(batch: typeof sets): Promise<void> {
    const entries = batch.flatMap((call) => call.entries);
    try {
      for (let i = 0; i < entries.length; i += MAX_BATCH) await inner.set(entries.slice(i, i + MAX_BATCH));
    } catch (error) {
      for (const call of batch) call.waiter.reject(error);
      return;
    }
    for (const call of batch) call.waiter.resolve();
  }

  function schedule(): void {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      const g = gets;
      const s = sets;
      gets = [];
      sets = [];
      if (g.length > 0) void flushGets(g);
      if (s.length > 0) void flushSets(s);
    }, 0);
  }

  return {
    ...(inner.now === undefined ? {} : { now: () => inner.now!() }),
    get(keys) {
      return new Promise((resolve, reject) => {
        gets.push({ keys, waiter: { resolve, reject } });
        schedule();
      });
    },
    set(entries) {
      return new Promise((resolve, reject) => {
        sets.push({ entries, waiter: { resolve, reject } });
        schedule();
      });
    },
  };
}

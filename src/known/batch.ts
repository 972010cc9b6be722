/**
 * Known results asked for together: the `get` and `set` calls made in one turn of the event loop (or while the
 * store answers an earlier lookup) go to the store as one call each, so a bulk chunk's verifications cost one round
 * trip to a shared store, not one per address.
 * @module
 */
import { OptionsError } from '../errors.js';
import { nextTurn } from '../turn.js';
import type { KnownEntry, KnownResult, KnownResults } from './types.js';

/** Most keys (or entries) in one call to the wrapped store. */
export const MAX_BATCH = 1000;

interface Waiter<T> {
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

/** Options of {@link batchedKnownResults}. */
export interface BatchOptions {
  /**
   * How long calls are collected before they go to the store, in milliseconds (0-1000): `0` merges the calls of one
   * event-loop turn (`setImmediate` where the runtime has it: a 0 ms timer waits at least 1 ms in Node); a few
   * milliseconds merge more calls into fewer queries, but each lookup waits that long. A batch of
   * {@link MAX_BATCH} goes at once. @default 0
   */
  readonly windowMs?: number;
}

/**
 * Wraps `inner` so that the calls made within `windowMs` (by default, those of one event-loop turn) are merged into
 * batches of at most {@link MAX_BATCH} keys or entries; each caller gets its own keys' answer (or the batch's error).
 * One batch of lookups is with `inner` at a time: the keys asked meanwhile go together as soon as it has answered
 * (so a busy store gets fewer, larger queries instead of a queue of small ones). A lookup goes after every write
 * handed to `inner` before it has ended (read your writes).
 * @example
 * const shared = batchedKnownResults(storeKnownResults, { windowMs: 5 });
 */
export function batchedKnownResults(inner: KnownResults, options: BatchOptions = {}): KnownResults {
  const windowMs = options.windowMs ?? 0;
  if (!Number.isInteger(windowMs) || windowMs < 0 || windowMs > 1000) {
    throw new OptionsError('windowMs', 'must be an integer 0-1000');
  }
  let gets: { keys: readonly string[]; waiter: Waiter<ReadonlyMap<string, KnownResult>> }[] = [];
  let sets: { entries: readonly KnownEntry[]; waiter: Waiter<void> }[] = [];
  let getKeys = 0;
  let setEntries = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let turnAwaited = false;
  /** A batch of lookups is with `inner`. */
  let reading = false;
  /** Settles once every write handed to `inner` so far has ended (written or failed). */
  let written: Promise<unknown> = Promise.resolve();

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

  function flush(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (sets.length > 0) {
      const batch = sets;
      sets = [];
      setEntries = 0;
      written = Promise.all([written, flushSets(batch)]); // flushSets never rejects
    }
    if (gets.length === 0 || reading) return; // the keys go when the lookup under way has answered
    const batch = gets;
    gets = [];
    getKeys = 0;
    reading = true;
    // Writes first, then reads: a verdict kept before a lookup of the same key is found by it (read your writes).
    const answered = () => {
      reading = false;
      if (gets.length > 0) flush();
    };
    void written.then(() => flushGets(batch)).then(answered, answered);
  }

  function schedule(): void {
    if (getKeys >= MAX_BATCH || setEntries >= MAX_BATCH) flush();
    else if (windowMs > 0) timer ??= setTimeout(flush, windowMs);
    else if (!turnAwaited) {
      turnAwaited = true;
      void nextTurn().then(() => {
        turnAwaited = false;
        flush();
      });
    }
  }

  return {
    ...(inner.now === undefined ? {} : { now: () => inner.now!() }),
    get(keys) {
      return new Promise((resolve, reject) => {
        gets.push({ keys, waiter: { resolve, reject } });
        getKeys += keys.length;
        schedule();
      });
    },
    set(entries) {
      return new Promise((resolve, reject) => {
        sets.push({ entries, waiter: { resolve, reject } });
        setEntries += entries.length;
        schedule();
      });
    },
  };
}

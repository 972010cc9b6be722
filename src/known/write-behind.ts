/**
 * Known results written behind: the verdicts to keep are gathered for a while and written in large batches, so a
 * shared store takes a few big writes instead of many small ones; what waits is answered from the buffer.
 * @module
 */
import type { Clock } from '../clock.js';
import { MailvetError } from '../errors.js';
import type { KnownEntry, KnownResult, KnownResults } from './types.js';

/** Options of {@link writeBehind}. */
export interface WriteBehindOptions {
  /** Longest time a verdict waits before it is written, in milliseconds. */
  readonly delayMs: number;
  /** Entries that are written at once, without waiting for `delayMs`. */
  readonly batchEntries: number;
  /** Bytes (as {@link entryBytes} counts them) waiting or being written beyond which new entries are not kept. */
  readonly maxBytes: number;
  /** Time source: decides expiry of what waits (the store's clock). */
  readonly clock: Pick<Clock, 'now'>;
}

/** Known results written behind: {@link KnownResults} that can be told to write what waits now. */
export interface WriteBehindKnownResults extends KnownResults {
  /** Writes what waits now; resolves when it (and every write before it) is written or has failed. */
  flush(): Promise<void>;
}

/** Bytes an entry is counted for while it waits: its strings at 2 bytes a character, plus 128. */
export function entryBytes(entry: KnownEntry): number {
  const { verdict } = entry;
  return (
    128 +
    2 *
      (entry.key.length +
        verdict.status.length +
        (verdict.sub_status?.length ?? 0) +
        (verdict.mx_record?.length ?? 0) +
        (verdict.smtp_provider?.length ?? 0) +
        (verdict.reason?.length ?? 0))
  );
}

interface Waiting {
  readonly entries: Map<string, KnownEntry>;
  readonly waiters: { resolve: () => void; reject: (error: unknown) => void }[];
  bytes: number;
}

const empty = (): Waiting => ({ entries: new Map(), waiters: [], bytes: 0 });

/**
 * Wraps `inner` so that `set` entries wait (at most `delayMs`, or until `batchEntries` wait) and go to `inner.set`
 * in one call, one write at a time. `set` resolves when its entries are written (rejects with the write's error,
 * or with a `store_error` when more than `maxBytes` already wait: those entries are not kept). `get` answers a
 * waiting or writing entry itself, and asks `inner` for the other keys. Nothing is written later than `delayMs`
 * after it was given (the timer keeps the process alive until then), and `flush()` writes at once: a process that
 * crashes loses at most the verdicts of its last `delayMs`, which are asked of the mail server again.
 * @example
 * const known = writeBehind(shared, { delayMs: 1000, batchEntries: 1000, maxBytes: 4 << 20, clock: Date });
 */
export function writeBehind(inner: KnownResults, options: WriteBehindOptions): WriteBehindKnownResults {
  const { clock } = options;
  let waiting = empty();
  let writing: Waiting | undefined;
  let written: Promise<void> = Promise.resolve();
  let heldBytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  async function write(batch: Waiting): Promise<void> {
    writing = batch;
    try {
      await inner.set([...batch.entries.values()]);
      for (const waiter of batch.waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of batch.waiters) waiter.reject(error);
    } finally {
      writing = undefined;
      heldBytes -= batch.bytes;
    }
  }

  function flush(): Promise<void> {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (waiting.waiters.length > 0) {
      const batch = waiting;
      waiting = empty();
      written = written.then(() => write(batch));
    }
    return written;
  }

  function lookUpWaiting(key: string, now: number): KnownResult | undefined {
    const entry = waiting.entries.get(key) ?? writing?.entries.get(key);
    if (entry === undefined || entry.checkedAt + entry.ttlMs <= now) return undefined;
    return { ...entry.verdict, checkedAt: entry.checkedAt };
  }

  return {
    ...(inner.now === undefined ? {} : { now: () => inner.now!() }),
    flush,
    async get(keys) {
      const now = clock.now();
      const found = new Map<string, KnownResult>();
      const asked: string[] = [];
      for (const key of keys) {
        const result = lookUpWaiting(key, now);
        if (result === undefined) asked.push(key);
        else found.set(key, result);
      }
      if (asked.length === 0) return found;
      for (const [key, result] of await inner.get(asked)) found.set(key, result);
      return found;
    },
    set(entries) {
      if (entries.length === 0) return Promise.resolve();
      const bytes = entries.reduce((sum, entry) => sum + entryBytes(entry), 0);
      if (heldBytes + bytes > options.maxBytes) {
        flush();
        return Promise.reject(
          new MailvetError('store_error', 'known results not kept: too many wait to be written'),
        );
      }
      return new Promise<void>((resolve, reject) => {
        for (const entry of entries) {
          waiting.entries.delete(entry.key); // the latest entry per key, last in the batch
          waiting.entries.set(entry.key, entry);
        }
        waiting.waiters.push({ resolve, reject });
        waiting.bytes += bytes;
        heldBytes += bytes;
        if (waiting.entries.size >= options.batchEntries) flush();
        else timer ??= setTimeout(flush, options.delayMs); // keeps the process alive until written
      });
    },
  };
}

/**
 * Known results kept in process, bounded by entries and by bytes (`lru-cache`).
 * @module
 */
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { OptionsError } from '../errors.js';
import type { KnownEntry, KnownResult, KnownResults } from './types.js';

/** Options of {@link memoryKnownResults}. */
export interface MemoryKnownResultsOptions {
  /** Most entries kept; the least recently used goes first. 1-10,000,000. @default 100000 */
  readonly maxEntries?: number;
  /** Most bytes kept (keys and verdicts, estimated at 2 bytes per character plus 64 per entry). @default 33554432 */
  readonly maxBytes?: number;
  /** Time source: decides expiry. @default the system clock */
  readonly clock?: Pick<Clock, 'now'>;
}

/** The documented defaults of {@link MemoryKnownResultsOptions}. */
export const MEMORY_KNOWN_DEFAULTS = Object.freeze({ maxEntries: 100_000, maxBytes: 32 * 1024 * 1024 });

interface Kept {
  readonly result: KnownResult;
  readonly expiresAt: number;
}

/** Bytes an entry is counted for: its strings at 2 bytes a character, plus a fixed share for the objects. */
function sizeOf(key: string, result: KnownResult): number {
  return (
    64 +
    2 *
      (key.length +
        result.status.length +
        (result.sub_status?.length ?? 0) +
        (result.mx_record?.length ?? 0) +
        (result.smtp_provider?.length ?? 0) +
        (result.reason?.length ?? 0))
  );
}

function bound(value: number | undefined, name: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new OptionsError(name, `must be an integer 1-${max}`);
  }
  return value;
}

/**
 * Known results in this process's memory: one verifier's (or one server's) own, shared by nobody else. An entry
 * larger than `maxBytes` is not kept.
 * @example
 * const verifier = createVerifier({ knownResults: memoryKnownResults({ maxEntries: 50_000 }) });
 */
export function memoryKnownResults(options: MemoryKnownResultsOptions = {}): KnownResults {
  if (typeof options !== 'object' || options === null) throw new OptionsError('options', 'must be an object');
  const max = bound(options.maxEntries, 'maxEntries', MEMORY_KNOWN_DEFAULTS.maxEntries, 10_000_000);
  const maxSize = bound(options.maxBytes, 'maxBytes', MEMORY_KNOWN_DEFAULTS.maxBytes, 2 ** 40);
  const clock = options.clock ?? Date;
  if (typeof clock.now !== 'function') throw new OptionsError('clock', 'must have a now() method');
  const cache = new LRUCache<string, Kept>({
    max,
    maxSize,
    sizeCalculation: (kept, key) => sizeOf(key, kept.result),
  });
  return {
    now: () => clock.now(),
    async get(keys) {
      const now = clock.now();
      const found = new Map<string, KnownResult>();
      for (const key of keys) {
        const kept = cache.get(key);
        if (kept === undefined) continue;
        if (kept.expiresAt > now) found.set(key, kept.result);
        else cache.delete(key);
      }
      return found;
    },
    async set(entries: readonly KnownEntry[]) {
      for (const { key, verdict, checkedAt, ttlMs } of entries) {
        const result: KnownResult = { ...verdict, checkedAt };
        if (sizeOf(key, result) > maxSize) continue;
        cache.set(key, { result, expiresAt: checkedAt + ttlMs });
      }
    },
  };
}

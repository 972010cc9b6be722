/**
 * A caching {@link Resolver} wrapper: TTL-honouring LRU cache of answers, and one inner lookup for any number of
 * identical lookups in flight.
 * @module
 */
import { LRUCache } from 'lru-cache';
import { DnsError, OptionsError } from '../errors.js';
import { lookupName, requireLookupName } from '../net/name.js';
import { integerOption } from '../option-fields.js';
import { raceSignal } from './abort.js';
import { requireReverseName } from './reverse.js';
import type { DnsAnswer, LookupOptions, MxRecord, Resolver } from './types.js';

/** Options of {@link cachedResolver}. */
export interface CachedResolverOptions {
  /** Most answers kept; the least recently used go first. @default 10000 */
  readonly max?: number;
  /** Longest time an answer is kept, whatever its TTL, in milliseconds. @default 3600000 */
  readonly maxTtlMs?: number;
  /** Shortest time an answer is kept, whatever its TTL, in milliseconds (0: a TTL of 0 is not cached). @default 0 */
  readonly minTtlMs?: number;
  /** How long `nodata` and `nxdomain` answers without a TTL are kept, in milliseconds. @default 300000 */
  readonly negativeTtlMs?: number;
  /** How long answers with records but no TTL (node:dns MX answers) are kept, in milliseconds. @default 300000 */
  readonly defaultTtlMs?: number;
  /**
   * How long a failed lookup (SERVFAIL, REFUSED, timeout) is remembered, in milliseconds: RFC 9520 asks
   * resolvers to cache resolution failures for at least 1 s, so a dead domain is not asked again for every
   * address of a bulk job. Aborted lookups and bad names are never cached. 0 turns this off. @default 1000
   */
  readonly errorTtlMs?: number;
  /** Clock in milliseconds (inject a fake one in tests). @default Date.now */
  readonly now?: () => number;
}

/** Counters of a {@link CachedResolver}, since it was created or last closed. */
export interface CachedResolverStats {
  /** Lookups answered from the cache (answers and remembered failures). */
  readonly hits: number;
  /** Lookups that went to the inner resolver. */
  readonly misses: number;
  /** Lookups that joined an identical inner lookup already in flight. */
  readonly coalesced: number;
  /** Entries in the cache now (some may have expired without being looked at yet). */
  readonly size: number;
}

/** A {@link Resolver} with a cache. */
export interface CachedResolver extends Resolver {
  /** The cached answer of an `mx` or `addresses` lookup, without waiting (see {@link Resolver.peek}). */
  peek: NonNullable<Resolver['peek']>;
  /** Cache counters. */
  stats(): CachedResolverStats;
  /** Empties the cache, resets the counters and closes the inner resolver. */
  close(): void;
}

type Entry =
  | { readonly answer: DnsAnswer<MxRecord | string>; readonly expiresAt: number }
  | { readonly error: DnsError; readonly expiresAt: number };

const CACHED_FAILURES = new Set(['servfail', 'refused', 'timeout', 'other']);

/**
 * Wraps `inner` in a cache. An answer is kept for its TTL (`ttlSeconds`), or `defaultTtlMs` (records) /
 * `negativeTtlMs` (`nodata`, `nxdomain`) when it has none, clamped to `minTtlMs`-`maxTtlMs`. Failures are kept
 * `errorTtlMs`. Identical lookups in flight share one inner lookup, which runs without the callers' signals;
 * each caller's own signal still rejects its own promise at once. `ptr()` and `txt()` are there when `inner`
 * has them.
 * @example
 * const resolver = cachedResolver(nodeResolver(), { maxTtlMs: 600_000 });
 * await resolver.mx('example.com'); // asks DNS
 * await resolver.mx('example.com'); // from the cache
 * resolver.stats(); // { hits: 1, misses: 1, coalesced: 0, size: 1 }
 */
export function cachedResolver(inner: Resolver, options: CachedResolverOptions = {}): CachedResolver {
  if (typeof inner?.mx !== 'function' || typeof inner.addresses !== 'function') {
    throw new OptionsError('inner', 'must be a Resolver with mx() and addresses()');
  }
  const max = integerOption(options.max, 'max', 10_000, 1, 2 ** 31);
  const maxTtlMs = integerOption(options.maxTtlMs, 'maxTtlMs', 3_600_000, 0, 2 ** 31);
  const minTtlMs = integerOption(options.minTtlMs, 'minTtlMs', 0, 0, 2 ** 31);
  const negativeTtlMs = integerOption(options.negativeTtlMs, 'negativeTtlMs', 300_000, 0, 2 ** 31);
  const defaultTtlMs = integerOption(options.defaultTtlMs, 'defaultTtlMs', 300_000, 0, 2 ** 31);
  const errorTtlMs = integerOption(options.errorTtlMs, 'errorTtlMs', 1_000, 0, 2 ** 31);
  if (minTtlMs > maxTtlMs) throw new OptionsError('minTtlMs', 'must not exceed maxTtlMs');
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new OptionsError('now', 'must be a function');

  const cache = new LRUCache<string, Entry>({ max });
  const inflight = new Map<string, Promise<DnsAnswer<MxRecord | string>>>();
  let hits = 0;
  let misses = 0;
  let coalesced = 0;

  function lifetimeOf(answer: DnsAnswer<unknown>): number {
    const fallback = answer.kind === 'records' ? defaultTtlMs : negativeTtlMs;
    const ttl = answer.ttlSeconds === undefined ? fallback : answer.ttlSeconds * 1000;
    return Math.min(maxTtlMs, Math.max(minTtlMs, ttl));
  }

  function fetch(key: string, call: () => Promise<DnsAnswer<MxRecord | string>>) {
    let request: Promise<DnsAnswer<MxRecord | string>>;
    try {
      request = call();
    } catch (error) {
      request = Promise.reject(error);
    }
    const started = request.then(
      (answer) => {
        const lifetime = lifetimeOf(answer);
        if (inflight.get(key) === started && lifetime > 0)
          cache.set(key, { answer, expiresAt: now() + lifetime });
        return answer;
      },
      (error: unknown) => {
        if (
          inflight.get(key) === started &&
          errorTtlMs > 0 &&
          error instanceof DnsError &&
          CACHED_FAILURES.has(error.reason)
        ) {
          cache.set(key, { error, expiresAt: now() + errorTtlMs });
        }
        throw error;
      },
    );
    const settled = started.finally(() => {
      if (inflight.get(key) === started) inflight.delete(key);
    });
    settled.catch(() => undefined);
    inflight.set(key, started);
    return started;
  }

  function lookup<T>(
    kind: 'mx' | 'addresses' | 'ptr' | 'txt',
    name: string,
    signal: AbortSignal | undefined,
  ): Promise<DnsAnswer<T>> {
    let normalized: string;
    try {
      // A PTR lookup takes an address; its cache key is the reverse name, the same for every spelling.
      normalized = kind === 'ptr' ? requireReverseName(name) : requireLookupName(name);
    } catch (error) {
      return Promise.reject(error);
    }
    const key = `${kind}:${normalized}`;
    const entry = cache.get(key);
    if (entry !== undefined && entry.expiresAt > now()) {
      hits++;
      const cached = 'error' in entry ? Promise.reject(entry.error) : Promise.resolve(entry.answer);
      return raceSignal(cached as Promise<DnsAnswer<T>>, normalized, signal);
    }
    if (entry !== undefined) cache.delete(key);
    let pending = inflight.get(key);
    if (pending === undefined) {
      misses++;
      const ask = inner[kind]?.bind(inner) as (name: string) => Promise<DnsAnswer<MxRecord | string>>;
      pending = fetch(key, () => ask(kind === 'ptr' ? name : normalized));
    } else {
      coalesced++;
    }
    return raceSignal(pending as Promise<DnsAnswer<T>>, normalized, signal);
  }

  /** A cached answer for `kind:name`, counted as a hit; `undefined` (and nothing counted) otherwise. */
  function peek(kind: 'mx' | 'addresses', name: string): DnsAnswer<MxRecord | string> | undefined {
    // A name already in normal form (the verifier's are) is its own key: a hit needs no normalizing.
    let entry = typeof name === 'string' ? cache.get(`${kind}:${name}`) : undefined;
    if (entry === undefined) {
      const normalized = lookupName(name);
      if (normalized === null || normalized === name) return undefined;
      entry = cache.get(`${kind}:${normalized}`);
    }
    if (entry === undefined || 'error' in entry || entry.expiresAt <= now()) return undefined;
    hits++;
    return entry.answer;
  }

  return {
    peek: peek as CachedResolver['peek'],
    mx: (domain: string, lookupOptions?: LookupOptions) =>
      lookup<MxRecord>('mx', domain, lookupOptions?.signal),
    addresses: (host: string, lookupOptions?: LookupOptions) =>
      lookup<string>('addresses', host, lookupOptions?.signal),
    ...(inner.ptr === undefined
      ? {}
      : {
          ptr: (address: string, lookupOptions?: LookupOptions) =>
            lookup<string>('ptr', address, lookupOptions?.signal),
        }),
    ...(inner.txt === undefined
      ? {}
      : {
          txt: (name: string, lookupOptions?: LookupOptions) =>
            lookup<string>('txt', name, lookupOptions?.signal),
        }),
    stats: () => ({ hits, misses, coalesced, size: cache.size }),
    close() {
      cache.clear();
      inflight.clear();
      hits = 0;
      misses = 0;
      coalesced = 0;
      inner.close?.();
    },
  };
}

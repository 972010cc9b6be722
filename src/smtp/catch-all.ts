/**
 * Catch-all detection: the random probe address, the reading of its reply, and the per-domain cache that
 * runs one probe per domain (concurrent askers share it) and remembers conclusive answers for a TTL.
 * @module
 */
import { LRUCache } from 'lru-cache';
import type { SmtpOutcome } from '../classify/reply.js';
import type { CatchAllProbe } from '../result.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** Random bytes behind a probe local part: 15 bytes, 120 bits, 24 base32 characters. */
export const PROBE_BYTES = 15;

/**
 * A random, unguessable local part for the catch-all probe: {@link PROBE_BYTES} random bytes in lower-case
 * base32 (24 characters, 120 bits), so that no real mailbox can have it.
 * @example
 * randomLocalPart((size) => crypto.getRandomValues(new Uint8Array(size))); // 'k3v9...' (24 characters)
 */
export function randomLocalPart(randomBytes: (size: number) => Uint8Array): string {
  const bytes = randomBytes(PROBE_BYTES);
  if (!(bytes instanceof Uint8Array) || bytes.length < PROBE_BYTES) {
    throw new RangeError(`randomBytes(${PROBE_BYTES}) must return at least ${PROBE_BYTES} bytes`);
  }
  let bits = 0;
  let value = 0;
  let out = '';
  for (let index = 0; index < PROBE_BYTES; index++) {
    value = (value << 8) | bytes[index]!;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return out;
}

/**
 * What the server's answer to the random address says about the domain: accepted (a catch-all), refused
 * (a permanent "no such mailbox" kind of answer: the server does check mailboxes), or inconclusive
 * (deferred, blocked, anything that says nothing about mailboxes). Never a guess.
 */
export function catchAllOutcomeOf(outcome: SmtpOutcome): CatchAllProbe {
  switch (outcome) {
    case 'accepted':
      return 'accepted';
    case 'mailbox_not_found':
    case 'mailbox_disabled':
    case 'mailbox_quota_exceeded':
      return 'refused';
    default:
      return 'inconclusive';
  }
}

/** Options of {@link createCatchAllCache}. */
export interface CatchAllCacheOptions {
  /** How long a conclusive answer is kept, in milliseconds; `0` keeps none (probes are still shared). @default 3600000 */
  readonly ttlMs?: number;
  /** Most domains remembered. @default 10000 */
  readonly max?: number;
  /** Clock in milliseconds. @default Date.now */
  readonly now?: () => number;
}

/** Per-domain catch-all answers. */
export interface CatchAllCache {
  /**
   * The domain's answer: from the cache, from a probe of it already under way, or from `probe`, run now.
   * Conclusive answers (`accepted`, `refused`) are cached; `inconclusive` and `not_run` are not, so the next
   * address asks again. A `probe` that throws counts as `inconclusive`.
   */
  resolve(domain: string, probe: () => Promise<CatchAllProbe>): Promise<CatchAllProbe>;
  /** The cached answer of `domain`, if any. */
  peek(domain: string): CatchAllProbe | undefined;
  /** How many probes were run (not answered from the cache or shared). */
  probes(): number;
  /** Forgets every answer. */
  clear(): void;
}

/**
 * Creates a catch-all cache on lru-cache, honouring the TTL by the injected clock.
 * @example
 * const cache = createCatchAllCache({ ttlMs: 3_600_000 });
 * const answer = await cache.resolve('example.com', () => probeRandomAddress());
 */
export function createCatchAllCache(options: CatchAllCacheOptions = {}): CatchAllCache {
  const ttlMs = options.ttlMs ?? 3_600_000;
  const max = options.max ?? 10_000;
  if (!Number.isInteger(ttlMs) || ttlMs < 0) throw new RangeError('ttlMs must be an integer >= 0');
  if (!Number.isInteger(max) || max < 1) throw new RangeError('max must be an integer >= 1');
  const now = options.now ?? Date.now;
  const cache =
    ttlMs > 0
      ? new LRUCache<string, 'accepted' | 'refused'>({ max, ttl: ttlMs, ttlResolution: 0, perf: { now } })
      : undefined;
  const inFlight = new Map<string, Promise<CatchAllProbe>>();
  let probes = 0;

  return {
    resolve(domain, probe) {
      const key = domain.toLowerCase();
      const cached = cache?.get(key);
      if (cached !== undefined) return Promise.resolve(cached);
      const running = inFlight.get(key);
      if (running !== undefined) return running;
      probes += 1;
      const run = Promise.resolve()
        .then(probe)
        .then(
          (answer) => {
            if (answer === 'accepted' || answer === 'refused') cache?.set(key, answer);
            return answer;
          },
          (): CatchAllProbe => 'inconclusive',
        )
        .finally(() => inFlight.delete(key));
      inFlight.set(key, run);
      return run;
    },
    peek(domain) {
      return cache?.get(domain.toLowerCase());
    },
    probes: () => probes,
    clear() {
      cache?.clear();
    },
  };
}

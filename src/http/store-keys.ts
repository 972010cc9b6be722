/**
 * Authentication by the API keys of the job store (`mailvet keys`) and of `MAILVET_API_KEYS`: a token of the
 * stored keys' form (`mv_<id>_<secret>`) is looked up by its public id and its SHA-256 digest compared in
 * constant time; any other token is checked against the environment's keys. Records are cached for a few
 * seconds, so a revocation reaches every API node within `cacheMs` without a restart; a token the cached record
 * does not open has it read again (at most once a second per key), so a new or rotated key works at once.
 * @module
 */

import { OptionsError } from '../errors.js';
import { apiKeyHash, apiKeyIdOf, sameDigest } from '../io/api-key.js';
import type { ApiKeyRecord, ApiKeyStore } from '../postgres/api-keys.js';
import { type Authenticate, bearerKeys, bearerTokenOf } from './auth.js';
import { HttpError } from './errors.js';
import type { Principal } from './principal.js';

/** What the API needs of a key store: a record by id, and a note that a key was used. */
export type ApiKeyLookup = Pick<ApiKeyStore, 'get' | 'touch'>;

/** Options of {@link storeKeys}. */
export interface StoreKeysOptions {
  /** The stored keys. */
  readonly store: ApiKeyLookup;
  /** Keys from `MAILVET_API_KEYS` / `apiKeys` (every scope, tenant: the key's SHA-256). @default [] */
  readonly envKeys?: readonly string[];
  /** How long a key's record is reused before it is read again, in milliseconds. @default 5000 */
  readonly cacheMs?: number;
  /** Least time between two writes of a key's `last used`, per API node, in milliseconds. @default 60000 */
  readonly touchEveryMs?: number;
  /** Records cached at most (the oldest goes first). @default 10000 */
  readonly maxCached?: number;
  /** The clock, in milliseconds. @default Date.now */
  readonly clock?: () => number;
}

/** Least age of a cached record before a token it does not open makes it read again, in milliseconds. */
const RECHECK_MS = 1000;

/** A cached read of a key's record; `settled` once it answered, so a request with a known key need not wait. */
interface Cached {
  readonly fetched: number;
  readonly record: Promise<ApiKeyRecord | undefined>;
  settled?: { readonly record: ApiKeyRecord | undefined };
}

/**
 * A token that opened the record of a cached read: while that read is the cache's and fresh, the token's answer
 * is its principal, found by the token alone (no id parsed, no digest compared, nothing made).
 */
interface Opening {
  readonly id: string;
  readonly cached: Cached;
  readonly record: ApiKeyRecord;
  readonly principal: Principal;
  /** The token is the key's current one (else the replaced one, valid until `record.previousUntil`). */
  readonly current: boolean;
}

/** Default of {@link StoreKeysOptions.cacheMs}. */
export const DEFAULT_KEY_CACHE_MS = 5000;

/** An {@link Authenticate} over stored keys, with `settle()` to wait for its writes of `last used`. */
export interface StoreKeysAuthenticate extends Authenticate {
  /** Resolves once the writes of `last used` in flight have ended (before the store closes). */
  settle(): Promise<void>;
}

/** The tenant of a stored key: its id, so that a rotated key keeps its jobs. */
export function storedKeyTenant(id: string): string {
  return `key:${id}`;
}

/** The principal of each record read (a record is replaced, not changed, when read again). */
const principals = new WeakMap<ApiKeyRecord, Principal>();

/** The principal of a valid stored key: made once per record read, then the same frozen object. */
function principalOfRecord(record: ApiKeyRecord): Principal {
  const made = principals.get(record);
  if (made !== undefined) return made;
  const principal: Principal = Object.freeze({
    tenant: storedKeyTenant(record.id),
    keyId: record.id,
    name: record.name,
    scopes: record.scopes,
    ...(record.requestsPerSecond === null ? {} : { requestsPerSecond: record.requestsPerSecond }),
    ...(record.addressesPerDay === null ? {} : { addressesPerDay: record.addressesPerDay }),
  });
  principals.set(record, principal);
  return principal;
}

/**
 * Whether `digest` opens `record` at `now`: the key's digest, or the replaced key's until its grace ends. Both
 * comparisons always run, in constant time.
 */
function opens(record: ApiKeyRecord, digest: string, now: number): boolean {
  if (record.revokedAt !== null) return false;
  const current = sameDigest(digest, record.hash);
  const previous =
    record.previousHash !== null &&
    sameDigest(digest, record.previousHash) &&
    (record.previousUntil ?? 0) > now;
  return current || previous;
}

/** Checks a key store option (`get` and `touch`), naming it `name`. */
export function checkKeyStore(store: unknown, name: string): asserts store is ApiKeyLookup {
  const candidate = store as Partial<ApiKeyLookup> | null;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.get !== 'function' ||
    typeof candidate.touch !== 'function'
  ) {
    throw new OptionsError(name, 'must be a key store with get() and touch() (pgliteStore().apiKeys)');
  }
}

/** Checks an optional whole number 0-`max` (milliseconds, or a count), naming it `name`. */
export function checkWhole(value: unknown, name: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new OptionsError(name, `must be an integer 0-${max}`);
  }
  return value;
}

/**
 * Makes the authenticator of stored keys (and of `envKeys`).
 * @example
 * const store = await postgresStore({ connectionString });
 * createHandler({ jobs, authenticate: storeKeys({ store: store.apiKeys, envKeys: keysFromEnv() }) });
 */
export function storeKeys(options: StoreKeysOptions): StoreKeysAuthenticate {
  const { store } = options;
  checkKeyStore(store, 'store');
  const env = (options.envKeys ?? []).length > 0 ? bearerKeys(options.envKeys ?? []) : undefined;
  const cacheMs = checkWhole(options.cacheMs, 'cacheMs', 600_000) ?? DEFAULT_KEY_CACHE_MS;
  const touchEveryMs = checkWhole(options.touchEveryMs, 'touchEveryMs', 86_400_000) ?? 60_000;
  const maxCached = checkWhole(options.maxCached, 'maxCached', 10_000_000) ?? 10_000;
  if (options.clock !== undefined && typeof options.clock !== 'function') {
    throw new OptionsError('clock', 'must be a function returning milliseconds');
  }
  const clock = options.clock ?? Date.now;
  const cache = new Map<string, Cached>();
  const touched = new Map<string, number>();
  const writes = new Set<Promise<void>>();
  /**
   * The tokens that opened each key lately (at most two: a rotation's old and new key) with their digests, so
   * that a key in use is hashed once per node: Web Crypto's digest hops to a thread and costs ~0.1 ms, more
   * than the rest of a `GET /v1/verify`. Only tokens that opened a key are kept, so strangers cannot fill it.
   */
  const opened = new Map<string, { readonly token: string; readonly digest: string }[]>();
  /** The same tokens, each with what it opened last (see {@link Opening}). */
  const openings = new Map<string, Opening>();

  function digestOf(id: string, token: string): string | Promise<string> {
    for (const known of opened.get(id) ?? []) if (sameDigest(known.token, token)) return known.digest;
    return apiKeyHash(token);
  }

  function remember(id: string, token: string, digest: string): void {
    const known = opened.get(id) ?? [];
    if (known.some((entry) => entry.digest === digest)) return;
    const kept = [...known, { token, digest }];
    for (const dropped of kept.splice(0, kept.length - 2)) openings.delete(dropped.token);
    opened.set(id, kept);
    if (opened.size > maxCached) {
      const oldest = opened.keys().next().value as string;
      for (const dropped of opened.get(oldest) ?? []) openings.delete(dropped.token);
      opened.delete(oldest);
    }
  }

  /** The principal `token` opened when it opened a cached read that is still the cache's and fresh, else null. */
  function reopened(token: string): Principal | null {
    const opening = openings.get(token);
    if (opening === undefined) return null;
    const now = clock();
    const { id, cached, record } = opening;
    if (
      cache.get(id) !== cached ||
      now - cached.fetched >= cacheMs ||
      !(opening.current || (record.previousUntil ?? 0) > now)
    ) {
      openings.delete(token);
      return null;
    }
    touch(id, now);
    return opening.principal;
  }

  /** The cached read of `id`'s record, made again when it is `maxAgeMs` old or more. */
  function cachedOf(id: string, now: number, maxAgeMs: number): Cached {
    const hit = cache.get(id);
    if (hit !== undefined && now - hit.fetched < maxAgeMs) return hit;
    cache.delete(id);
    const record = store.get(id).then(
      (found) => {
        entry.settled = { record: found };
        return found;
      },
      (error: unknown) => {
        if (cache.get(id) === entry) cache.delete(id);
        throw new HttpError('service_unavailable', 'the API key store does not answer; retry', {
          cause: error,
        });
      },
    );
    const entry: Cached = { fetched: now, record };
    cache.set(id, entry);
    if (cache.size > maxCached) cache.delete(cache.keys().next().value as string);
    return entry;
  }

  /** The principal of `cached`'s record if `digest` opens it now; notes the use. */
  function check(id: string, token: string, digest: string, cached: Cached, now: number) {
    const record = cached.settled?.record;
    if (record === undefined || !opens(record, digest, now)) return null;
    remember(id, token, digest);
    touch(id, now);
    const principal = principalOfRecord(record);
    const current = sameDigest(digest, record.hash);
    if (cache.get(id) === cached) openings.set(token, { id, cached, record, principal, current });
    return principal;
  }

  function touch(id: string, now: number): void {
    if (now - (touched.get(id) ?? Number.NEGATIVE_INFINITY) < touchEveryMs) return;
    touched.set(id, now);
    const write: Promise<void> = store
      .touch(id, now)
      .catch(() => {}) // a lost `last used` is not worth failing a request
      .finally(() => writes.delete(write));
    writes.add(write);
  }

  async function fromStore(id: string, token: string): Promise<Principal | null> {
    const first = cachedOf(id, clock(), cacheMs);
    const [, digest] = await Promise.all([first.record, digestOf(id, token)]);
    const principal = check(id, token, digest, first, clock());
    if (principal !== null) return principal;
    // A key made or rotated on another node since the record was cached works at once: read it again, at most
    // once a second per id, so that wrong secrets cannot make every request a read.
    const again = cachedOf(id, clock(), Math.min(cacheMs, RECHECK_MS));
    await again.record;
    return check(id, token, digest, again, clock());
  }

  /** The answer without waiting, when the key's record is cached and the token opened it before. */
  function known(id: string, token: string): Principal | null {
    const now = clock();
    const cached = cachedOf(id, now, cacheMs);
    const digest = cached.settled === undefined ? undefined : digestOf(id, token);
    return typeof digest === 'string' ? check(id, token, digest, cached, now) : null;
  }

  const authenticate = (request: Request) => {
    const token = bearerTokenOf(request);
    if (token === undefined) return null;
    const reused = reopened(token);
    if (reused !== null) return reused;
    const id = apiKeyIdOf(token);
    if (id === undefined) return env === undefined ? null : env(request);
    const principal = known(id, token);
    if (principal !== null) return principal;
    return fromStore(id, token).then((found) => (found !== null || env === undefined ? found : env(request)));
  };
  return Object.assign(authenticate, {
    async settle() {
      while (writes.size > 0) await Promise.all([...writes]);
    },
  });
}

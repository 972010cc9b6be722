/**
 * Authentication by the API keys of the job store (`mailvet keys`) and of `MAILVET_API_KEYS`: a token of the
 * stored keys' form (`mv_<id>_<secret>`) is looked up by its public id and its SHA-256 digest compared in
 * constant time; any other token is checked against the environment's keys. Records are cached for a few
 * seconds, so a revocation reaches every API node within `cacheMs` without a restart; a token the cached record
 * does not open has it read again (at most once a second per key), so a new or rotated key works at once.
 * @module
 */
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

/** The principal of a valid stored key. */
function principalOfRecord(record: ApiKeyRecord): Principal {
  return {
    tenant: storedKeyTenant(record.id),
    keyId: record.id,
    name: record.name,
    scopes: record.scopes,
    ...(record.requestsPerSecond === null ? {} : { requestsPerSecond: record.requestsPerSecond }),
    ...(record.addressesPerDay === null ? {} : { addressesPerDay: record.addressesPerDay }),
  };
}

/**
 * Whether `digest` opens `record` at `now`: the key's digest, or the replaced key's until its grace ends. Both
 * comparisons always run, in constant time.
 */
export function opens(record: ApiKeyRecord, digest: string, now: number): boolean {
  if (record.revokedAt !== null) return false;
  const current = sameDigest(digest, record.hash);
  const previous =
    record.previousHash !== null &&
    sameDigest(digest, record.previousHash) &&
    (record.previousUntil ?? 0) > now;
  return current || previous;
}

/**
 * Makes the authenticator of stored keys (and of `envKeys`).
 * @example
 * const store = await postgresStore({ connectionString });
 * createHandler({ jobs, authenticate: storeKeys({ store: store.apiKeys, envKeys: keysFromEnv() }) });
 */
export function storeKeys(options: StoreKeysOptions): StoreKeysAuthenticate {
  const { store } = options;
  const env = (options.envKeys ?? []).length > 0 ? bearerKeys(options.envKeys ?? []) : undefined;
  const cacheMs = options.cacheMs ?? DEFAULT_KEY_CACHE_MS;
  const touchEveryMs = options.touchEveryMs ?? 60_000;
  const maxCached = options.maxCached ?? 10_000;
  const clock = options.clock ?? Date.now;
  const cache = new Map<
    string,
    { readonly fetched: number; readonly record: Promise<ApiKeyRecord | undefined> }
  >();
  const touched = new Map<string, number>();
  const writes = new Set<Promise<void>>();

  /** The record of `id`, read again when the cached one is `maxAgeMs` old or more. */
  function recordOf(id: string, now: number, maxAgeMs: number): Promise<ApiKeyRecord | undefined> {
    const hit = cache.get(id);
    if (hit !== undefined && now - hit.fetched < maxAgeMs) return hit.record;
    cache.delete(id);
    const record = store.get(id).catch((error: unknown) => {
      cache.delete(id);
      throw new HttpError('service_unavailable', 'the API key store does not answer; retry', {
        cause: error,
      });
    });
    cache.set(id, { fetched: now, record });
    if (cache.size > maxCached) cache.delete(cache.keys().next().value as string);
    return record;
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
    const [cached, digest] = await Promise.all([recordOf(id, clock(), cacheMs), apiKeyHash(token)]);
    let record = cached;
    let now = clock();
    if (record === undefined || !opens(record, digest, now)) {
      // A key made or rotated on another node since the record was cached works at once: read it again, at
      // most once a second per id, so that wrong secrets cannot make every request a read.
      record = await recordOf(id, now, Math.min(cacheMs, RECHECK_MS));
      now = clock();
      if (record === undefined || !opens(record, digest, now)) return null;
    }
    touch(id, now);
    return principalOfRecord(record);
  }

  const authenticate = (request: Request) => {
    const token = bearerTokenOf(request);
    if (token === undefined) return null;
    const id = apiKeyIdOf(token);
    if (id === undefined) return env === undefined ? null : env(request);
    return fromStore(id, token).then((principal) =>
      principal !== null || env === undefined ? principal : env(request),
    );
  };
  return Object.assign(authenticate, {
    async settle() {
      while (writes.size > 0) await Promise.all([...writes]);
    },
  });
}

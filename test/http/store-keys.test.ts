/**
 * Stored API keys through the handler, on PGlite and on PostgreSQL: two API nodes (two handlers on two stores
 * of one database) agree on a revocation within the cache's TTL; a rotated key's predecessor works until its
 * grace ends (fake clock); hostile tokens are 401; scopes and limits reach the principal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DurableJobStore } from '../../src/bulk/types.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import type { Principal } from '../../src/http/principal.js';
import { storeKeys } from '../../src/http/store-keys.js';
import { newApiKey } from '../../src/io/api-key.js';
import type { ApiKeyHolder, ApiKeyStore } from '../../src/postgres/api-keys.js';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';
import { waitFor } from '../support/wait-for.js';
import { fakeVerifier } from './support.js';

type Store = DurableJobStore & ApiKeyHolder;

interface Backend {
  readonly name: string;
  readonly skip: boolean;
  /** Two stores on one database: the two API nodes. */
  open(schema: string): Promise<[Store, Store]>;
  drop(schema: string): Promise<void>;
}

const BACKENDS: Backend[] = [
  {
    name: 'PGlite',
    skip: false,
    async open(schema) {
      const db = await sharedPglite();
      const first = await pgliteStore({ db, schema });
      return [first, await pgliteStore({ db, schema })];
    },
    async drop(schema) {
      await (await sharedPglite()).query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    },
  },
  {
    name: 'PostgreSQL',
    skip: POSTGRES_URL === undefined,
    async open(schema) {
      const connectionString = POSTGRES_URL as string;
      const first = await postgresStore({ connectionString, schema });
      return [first, await postgresStore({ connectionString, schema })];
    },
    drop: dropPostgresSchema,
  },
];

beforeAll(openSharedPglite, PGLITE_OPEN_MS);

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function status(
  handler: Handler,
  key: string,
  path = '/v1/verify?email=a@example.com',
): Promise<number> {
  const response = await handler(new Request(`http://x${path}`, { headers: bearer(key) }));
  await response.body?.cancel();
  return response.status;
}

/** Stores a new key in `keys` and returns it. */
async function makeKey(
  keys: ApiKeyStore,
  name: string,
  extra: Partial<Parameters<ApiKeyStore['create']>[0]> = {},
): Promise<{ key: string; keyId: string }> {
  const made = await newApiKey();
  await keys.create({
    id: made.keyId,
    name,
    hash: made.hash,
    scopes: ['verify', 'bulk:read', 'bulk:write'],
    requestsPerSecond: null,
    addressesPerDay: null,
    createdAt: Date.now(),
    ...extra,
  });
  return made;
}

describe.each(BACKENDS)('stored API keys on $name', (backend) => {
  const schema = testSchema();
  let stores: [Store, Store];
  const handlers: Handler[] = [];
  const node = (store: Store, options: Parameters<typeof createHandler>[0] = {}) => {
    const handler = createHandler({
      verifier: fakeVerifier(),
      console: false,
      apiKeys: ['env-key-1'],
      apiKeyStore: store.apiKeys,
      ...options,
    });
    handlers.push(handler);
    return handler;
  };

  beforeAll(async () => {
    if (backend.skip) {
      console.warn(`MAILVET_TEST_POSTGRES_URL is unset: stored API keys on ${backend.name} are skipped`);
      return;
    }
    stores = await backend.open(schema);
  }, PGLITE_OPEN_MS);

  afterAll(async () => {
    if (backend.skip) return;
    for (const handler of handlers) await handler.close();
    for (const store of stores) await store.close?.();
    await backend.drop(schema);
  });

  it.skipIf(backend.skip)(
    'two API nodes accept a stored key, and both refuse it within the TTL once revoked',
    async () => {
      const [a, b] = [node(stores[0], { apiKeyCacheMs: 300 }), node(stores[1], { apiKeyCacheMs: 300 })];
      const { key, keyId } = await makeKey(stores[0].apiKeys, 'two-nodes');
      expect(await status(a, key)).toBe(200);
      expect(await status(b, key)).toBe(200);
      const revokedAt = Date.now();
      expect(await stores[1].apiKeys.revoke(keyId, revokedAt)).toBe(true);
      for (const handler of [a, b]) {
        await waitFor(async () => (await status(handler, key)) === 401, {
          what: 'the revocation',
          timeoutMs: 5000,
        });
      }
      expect(Date.now() - revokedAt).toBeLessThan(5000);
      expect(await status(a, 'env-key-1')).toBe(200); // the environment's keys are untouched
    },
  );

  it.skipIf(backend.skip)(
    'keeps the old key of a rotation until its grace ends, and the tenant with it',
    async () => {
      let now = 1_000_000;
      const clock = () => now;
      const handler = node(stores[0], { clock, apiKeyCacheMs: 0 });
      const old = await makeKey(stores[0].apiKeys, 'rotating');
      const created = await handler(
        new Request('http://x/v1/bulk', {
          method: 'POST',
          headers: { ...bearer(old.key), 'content-type': 'application/json' },
          body: JSON.stringify({ emails: ['a@example.com'], auto_start: false }),
        }),
      );
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      const fresh = await newApiKey({ keyId: old.keyId });
      expect(await stores[1].apiKeys.rotate(old.keyId, fresh.hash, now + 60_000)).toBe(true);
      expect(await status(handler, old.key)).toBe(200);
      expect(await status(handler, fresh.key)).toBe(200);
      expect(await status(handler, fresh.key, `/v1/bulk/${id}`)).toBe(200); // same id, same tenant, same jobs
      now += 60_000;
      expect(await status(handler, old.key)).toBe(401);
      expect(await status(handler, fresh.key)).toBe(200);
    },
  );

  it.skipIf(backend.skip)(
    'answers 401 to hostile tokens: wrong prefix, right id with a wrong secret, oversized, unicode',
    async () => {
      const handler = node(stores[0], { apiKeyCacheMs: 0 });
      const { key, keyId } = await makeKey(stores[0].apiKeys, 'target');
      const secret = key.slice(-43);
      const hostile = [
        `mx_${keyId}_${secret}`,
        `mv_${keyId}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`,
        `mv_${keyId}_${'A'.repeat(43)}`,
        `mv_${keyId}_${secret}x`,
        `mv_${keyId}_${secret}${'A'.repeat(300)}`,
        `mv_${keyId.slice(0, 7)}é_${secret}`,
        `mv_${keyId}_${secret.slice(0, 42)}é`,
        key.toUpperCase(),
        `mv_${keyId}`,
      ];
      for (const token of hostile) {
        const response = await handler(
          new Request('http://x/v1/verify?email=a@example.com', { headers: bearer(token) }),
        );
        expect(response.status, token).toBe(401);
      }
      expect(await status(handler, key)).toBe(200);
    },
  );

  it.skipIf(backend.skip)(
    'puts the key id, name, scopes and limits on the principal, and writes last used at most once a period',
    async () => {
      let now = 5_000_000;
      const { key, keyId } = await makeKey(stores[0].apiKeys, 'limited', {
        scopes: ['verify'],
        requestsPerSecond: 20,
        addressesPerDay: 100_000,
      });
      const authenticate = storeKeys({
        store: stores[0].apiKeys,
        cacheMs: 0,
        touchEveryMs: 60_000,
        clock: () => now,
      });
      const request = new Request('http://x/v1/verify', { headers: bearer(key) });
      expect(await authenticate(request)).toEqual<Principal>({
        tenant: `key:${keyId}`,
        keyId,
        name: 'limited',
        scopes: ['verify'],
        requestsPerSecond: 20,
        addressesPerDay: 100_000,
      });
      await authenticate.settle();
      expect((await stores[0].apiKeys.get(keyId))?.lastUsedAt).toBe(5_000_000);
      now += 30_000;
      await authenticate(request);
      await authenticate.settle();
      expect((await stores[0].apiKeys.get(keyId))?.lastUsedAt).toBe(5_000_000);
      now += 30_000;
      await authenticate(request);
      await authenticate.settle();
      expect((await stores[0].apiKeys.get(keyId))?.lastUsedAt).toBe(5_060_000);
      const handler = node(stores[0], { apiKeyCacheMs: 0 });
      expect(await status(handler, key)).toBe(200);
      expect(await status(handler, key, '/v1/bulk')).toBe(403);
    },
  );

  it.skipIf(backend.skip)(
    'refuses a second live key of the same name, and frees the name once revoked',
    async () => {
      const { keyId } = await makeKey(stores[0].apiKeys, 'dup');
      await expect(makeKey(stores[1].apiKeys, 'dup')).rejects.toMatchObject({
        code: 'api_key_conflict',
        field: 'name',
      });
      await stores[0].apiKeys.revoke(keyId, Date.now());
      await expect(makeKey(stores[1].apiKeys, 'dup')).resolves.toBeDefined();
      expect((await stores[0].apiKeys.find('dup'))?.id).not.toBe(keyId);
    },
  );
});

describe('the handler options of stored keys', () => {
  it('validates apiKeyStore and apiKeyCacheMs, naming them', () => {
    const store = { get: async () => undefined, touch: async () => {} };
    expect(() => createHandler({ apiKeyStore: {} as never, console: false })).toThrow(/apiKeyStore/);
    expect(() => createHandler({ apiKeyStore: store, apiKeyCacheMs: -1, console: false })).toThrow(
      /apiKeyCacheMs/,
    );
    expect(() => createHandler({ apiKeyStore: store, apiKeyCacheMs: 1.5, console: false })).toThrow(
      /apiKeyCacheMs/,
    );
    expect(() => createHandler({ apiKeys: ['k'], apiKeyCacheMs: 10, console: false })).toThrow(
      /apiKeyCacheMs/,
    );
    expect(() => createHandler({ apiKeyStore: store, authenticate: () => null, console: false })).toThrow(
      /apiKeyStore/,
    );
    expect(() => storeKeys({ store: null as never })).toThrow(/^store must be a key store/);
    expect(() => storeKeys({ store, cacheMs: 600_001 })).toThrow(/^cacheMs must be an integer 0-600000/);
    expect(() => storeKeys({ store, touchEveryMs: Number.NaN })).toThrow(/^touchEveryMs/);
    expect(() => storeKeys({ store, maxCached: -1 })).toThrow(/^maxCached/);
    expect(() => storeKeys({ store, clock: 5 as never })).toThrow(/^clock/);
  });

  it('reads a record again for a token it does not open, at most once a second per key', async () => {
    let now = 0;
    let reads = 0;
    const first = await newApiKey();
    const second = await newApiKey({ keyId: first.keyId });
    let hash = first.hash;
    const store = {
      get: async (id: string) => {
        reads++;
        return {
          id,
          name: 'n',
          hash,
          scopes: ['verify' as const],
          requestsPerSecond: null,
          addressesPerDay: null,
          createdAt: 0,
          lastUsedAt: null,
          revokedAt: null,
          previousHash: null,
          previousUntil: null,
          webhookSecret: null,
          previousWebhookSecret: null,
          previousWebhookSecretUntil: null,
        };
      },
      touch: async () => {},
    };
    const authenticate = storeKeys({ store, cacheMs: 5000, clock: () => now });
    const as = (key: string) => authenticate(new Request('http://x/', { headers: bearer(key) }));
    expect(await as(first.key)).not.toBeNull();
    expect(reads).toBe(1);
    hash = second.hash; // rotated elsewhere, with no grace
    expect(await as(second.key)).toBeNull(); // the record is fresh (< 1 s): no read
    expect(reads).toBe(1);
    now = 1000;
    expect(await as(second.key)).not.toBeNull(); // read again, before the 5 s of the cache
    expect(reads).toBe(2);
    for (let i = 0; i < 20; i++) expect(await as(`${first.key.slice(0, -1)}x`)).toBeNull();
    expect(reads).toBe(2); // wrong secrets do not make every request a read
    // A key that opened its cached record before is answered at once (no digest, no read, no promise).
    const again = as(second.key);
    expect(again).not.toBeInstanceOf(Promise);
    expect(again).toMatchObject({ keyId: first.keyId, tenant: `key:${first.keyId}` });
    hash = first.hash; // ... yet a change of the record still counts once it is read again
    now = 6000;
    expect(await as(second.key)).toBeNull();
  });

  it('answers a key in use by its token alone only while its cached read is fresh and the key opens it', async () => {
    let now = 0;
    let reads = 0;
    const current = await newApiKey();
    const replaced = await newApiKey({ keyId: current.keyId });
    let record = {
      id: current.keyId,
      name: 'n',
      hash: current.hash,
      scopes: ['verify' as const],
      requestsPerSecond: null,
      addressesPerDay: null,
      createdAt: 0,
      lastUsedAt: null,
      revokedAt: null as number | null,
      previousHash: replaced.hash as string | null,
      previousUntil: 3000 as number | null,
      webhookSecret: null,
      previousWebhookSecret: null,
      previousWebhookSecretUntil: null,
    };
    const store = {
      get: async () => {
        reads++;
        return record;
      },
      touch: async () => {},
    };
    const authenticate = storeKeys({ store, cacheMs: 5000, clock: () => now });
    const as = (key: string) => authenticate(new Request('http://x/', { headers: bearer(key) }));
    expect(await as(current.key)).toMatchObject({ keyId: current.keyId });
    expect(await as(replaced.key)).toMatchObject({ keyId: current.keyId }); // within the grace
    expect(as(current.key)).not.toBeInstanceOf(Promise);
    expect(as(replaced.key)).not.toBeInstanceOf(Promise);
    now = 3000; // the grace of the replaced key ends, the cached read is still fresh
    expect(as(current.key)).toMatchObject({ keyId: current.keyId });
    expect(await as(replaced.key)).toBeNull();
    expect(reads).toBe(2); // the refused token had the record read again once (at most once a second)
    record = { ...record, revokedAt: 3500 }; // revoked elsewhere
    now = 7999; // the read made at 3000 is still fresh: the revocation is not seen yet
    expect(as(current.key)).toMatchObject({ keyId: current.keyId });
    now = 8000; // ... and it is once that read is cacheMs old
    expect(await as(current.key)).toBeNull();
    expect(await as(current.key)).toBeNull();
  });

  it('answers 503 when the key store does not answer, and reads it again on the next request', async () => {
    let fail = true;
    const made = await newApiKey();
    const store = {
      get: async () => {
        if (fail) throw new Error('connection refused');
        return {
          id: made.keyId,
          name: 'n',
          hash: made.hash,
          scopes: ['verify' as const],
          requestsPerSecond: null,
          addressesPerDay: null,
          createdAt: 0,
          lastUsedAt: null,
          revokedAt: null,
          previousHash: null,
          previousUntil: null,
          webhookSecret: null,
          previousWebhookSecret: null,
          previousWebhookSecretUntil: null,
        };
      },
      touch: async () => {},
    };
    const handler = createHandler({
      apiKeyStore: store,
      verifier: fakeVerifier(),
      console: false,
      logger: { error() {} },
    });
    expect(await status(handler, made.key)).toBe(503);
    fail = false;
    expect(await status(handler, made.key)).toBe(200);
    await handler.close();
  });
});

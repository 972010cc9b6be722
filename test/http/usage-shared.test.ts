/**
 * Keys' quotas and rates counted for the whole fleet: two handlers (two API nodes) on one store's counters —
 * PGlite, the PostgreSQL server (MAILVET_TEST_POSTGRES_URL) and Redis (MAILVET_TEST_REDIS_URL).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LimitStore, UsageStore } from '../../src/bulk/usage.js';
import { memoryUsageStore } from '../../src/bulk/usage-memory.js';
import { redisLimits } from '../../src/bullmq/redis-limits.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import type { Principal } from '../../src/http/principal.js';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';
import { fakeVerifier } from './support.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS);

const PRINCIPALS: Record<string, Principal> = {
  quota5: { tenant: 'tenant-q', keyId: 'k-q5', addressesPerDay: 5 },
  slow: { tenant: 'tenant-slow', keyId: 'k-slow', requestsPerSecond: 1 },
};

const authenticate = (request: Request): Principal | null =>
  PRINCIPALS[request.headers.get('authorization')?.replace(/^Bearer /, '') ?? ''] ?? null;

/** Two API nodes' counters: the stores each handler gets, and how to tear them down. */
interface Shared {
  readonly nodes: readonly [
    { store: UsageStore; limits: LimitStore },
    { store: UsageStore; limits: LimitStore },
  ];
  close(): Promise<void>;
}

/** The time of every node: a fixed day, so that neither the rate nor the quota moves during a test. */
const NOW = Date.UTC(2026, 10, 27, 12);

const handlers: Handler[] = [];
afterEach(async () => {
  for (const handler of handlers.splice(0)) await handler.close();
});

function node(usage: { store: UsageStore; limits: LimitStore }): Handler {
  const handler = createHandler({
    authenticate,
    verifier: fakeVerifier(),
    console: false,
    clock: () => NOW, // the buckets refill nothing while a test runs, however slow the machine
    usage: { ...usage, flushMs: 20 },
  });
  handlers.push(handler);
  return handler;
}

const call = (h: Handler, key: string, path: string, init: RequestInit = {}): Promise<Response> =>
  h(
    new Request(`http://localhost${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
    }),
  );

const create = (h: Handler, emails: string[]): Promise<Response> =>
  call(h, 'quota5', '/v1/bulk', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ emails, auto_start: false }),
  });

function fleetSuite(name: string, open: () => Promise<Shared>, sharesUsage: boolean): void {
  describe(name, () => {
    it('counts one daily quota for both nodes, and lets one of two racing bulk creates take the last units', async () => {
      const shared = await open();
      try {
        const [a, b] = [node(shared.nodes[0]), node(shared.nodes[1])];
        for (const h of [a, b, a])
          expect((await call(h, 'quota5', '/v1/verify?email=v@x.test')).status).toBe(200);
        const tooMany = await create(b, ['a@x.test', 'b@x.test', 'c@x.test']);
        expect(tooMany.status).toBe(429);
        expect(((await tooMany.json()) as { error: { message: string } }).error.message).toMatch(
          /2 remain today and this request needs 3/,
        );
        const race = await Promise.all([
          create(a, ['a@x.test', 'b@x.test']),
          create(b, ['c@x.test', 'd@x.test']),
        ]);
        expect(race.map((response) => response.status).sort()).toEqual([201, 429]);
        const lists = await Promise.all(
          [a, b].map(
            async (h) => ((await (await call(h, 'quota5', '/v1/bulk')).json()) as { total: number }).total,
          ),
        );
        expect(lists.reduce((sum, total) => sum + total, 0)).toBe(1); // the refused create left no job behind
        const usage = (await (await call(b, 'quota5', '/v1/usage')).json()) as { quota: unknown };
        expect(usage.quota).toMatchObject({ limit: 5, used: 5, remaining: 0 });
        if (sharesUsage) {
          // Node a's single verifications reach the shared usage table within its flush interval.
          await waitFor(async () => {
            const seen = (await (await call(b, 'quota5', '/v1/usage')).json()) as {
              totals: { total: number };
            };
            return seen.totals.total === 3;
          });
        }
      } finally {
        await shared.close();
      }
    });

    it("counts a key's request rate for both nodes", async () => {
      const shared = await open();
      try {
        const [a, b] = [node(shared.nodes[0]), node(shared.nodes[1])];
        const statuses = [];
        for (const h of [a, b, a]) statuses.push((await call(h, 'slow', '/v1/usage')).status);
        expect(statuses).toEqual([200, 200, 429]);
      } finally {
        await shared.close();
      }
    });
  });
}

fleetSuite(
  'two API nodes on one PGlite store',
  async () => {
    const db = await sharedPglite();
    const schema = testSchema();
    const stores = [await pgliteStore({ db, schema }), await pgliteStore({ db, schema })] as const;
    return {
      nodes: [
        { store: stores[0], limits: stores[0] },
        { store: stores[1], limits: stores[1] },
      ],
      async close() {
        for (const store of stores) await store.close?.();
        await db.query(`DROP SCHEMA ${schema} CASCADE`);
      },
    };
  },
  true,
);

describe.skipIf(POSTGRES_URL === undefined)('on the PostgreSQL server', () => {
  fleetSuite(
    'two API nodes on one PostgreSQL store',
    async () => {
      const schema = testSchema();
      const stores = [
        await postgresStore({ connectionString: POSTGRES_URL!, schema }),
        await postgresStore({ connectionString: POSTGRES_URL!, schema }),
      ] as const;
      return {
        nodes: [
          { store: stores[0], limits: stores[0] },
          { store: stores[1], limits: stores[1] },
        ],
        async close() {
          for (const store of stores) await store.close?.();
          await dropPostgresSchema(schema);
        },
      };
    },
    true,
  );
});

describe.skipIf(REDIS_URL === undefined)('on Redis', () => {
  fleetSuite(
    'two API nodes counting on one Redis',
    async () => {
      const prefix = testPrefix();
      const limits = [
        await redisLimits({ connection: REDIS_URL!, prefix }),
        await redisLimits({ connection: REDIS_URL!, prefix }),
      ] as const;
      return {
        nodes: [
          { store: memoryUsageStore(), limits: limits[0] },
          { store: memoryUsageStore(), limits: limits[1] },
        ],
        async close() {
          for (const store of limits) await store.close();
          await deletePrefix(prefix);
        },
      };
    },
    false,
  );
});

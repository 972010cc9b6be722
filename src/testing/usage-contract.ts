/**
 * The contracts of the usage seams: {@link usageStoreContract} for a {@link UsageStore} (counts added in batches,
 * read back per tenant and day range) and {@link limitStoreContract} for a {@link LimitStore} (daily quotas reserved
 * atomically, request-rate buckets). Import them from a test file of your own store.
 * @module
 */
import { describe, expect, it } from 'vitest';
import type { LimitStore, UsageCount, UsageStore } from '../bulk/usage.js';

/** A store under test, fresh for each test, and how to tear it down. */
export interface UsageFixture<T> {
  readonly store: T;
  /** A second instance on the same data (another API node), for the tests of sharing; defaults to `store`. */
  readonly other?: T;
  /** Releases whatever the fixture made. */
  close?(): void | Promise<void>;
}

function use<T>(make: () => UsageFixture<T> | Promise<UsageFixture<T>>) {
  return (test: (store: T, other: T) => Promise<void>) => async () => {
    const fixture = await make();
    try {
      await test(fixture.store, fixture.other ?? fixture.store);
    } finally {
      await fixture.close?.();
    }
  };
}

const sorted = (counts: readonly UsageCount[]): UsageCount[] =>
  [...counts].sort((a, b) => (`${a.day}${a.kind}${a.status}` < `${b.day}${b.kind}${b.status}` ? -1 : 1));

/**
 * Registers the contract suite of the {@link UsageStore} that `make` returns (a fresh one per test).
 * @example
 * usageStoreContract('memoryUsageStore', () => ({ store: memoryUsageStore() }));
 */
export function usageStoreContract(
  name: string,
  make: () => UsageFixture<UsageStore> | Promise<UsageFixture<UsageStore>>,
): void {
  const withStore = use(make);
  describe(`UsageStore contract: ${name}`, () => {
    it(
      'adds batches to the counters and reads one tenant back by day range, both ends included',
      withStore(async (store, other) => {
        await store.addUsage([
          { tenant: 't1', day: '2026-01-01', kind: 'single', status: 'valid', count: 2 },
          { tenant: 't1', day: '2026-01-01', kind: 'single', status: 'valid', count: 3 },
          { tenant: 't1', day: '2026-01-02', kind: 'bulk', status: 'invalid', count: 7 },
          { tenant: 't2', day: '2026-01-02', kind: 'bulk', status: 'invalid', count: 1 },
          { tenant: 't1', day: '2026-01-05', kind: 'bulk', status: 'unknown', count: 1 },
        ]);
        await other.addUsage([
          { tenant: 't1', day: '2026-01-02', kind: 'bulk', status: 'invalid', count: 1 },
        ]);
        expect(sorted(await store.readUsage('t1', '2026-01-01', '2026-01-02'))).toEqual([
          { tenant: 't1', day: '2026-01-01', kind: 'single', status: 'valid', count: 5 },
          { tenant: 't1', day: '2026-01-02', kind: 'bulk', status: 'invalid', count: 8 },
        ]);
        expect(await other.readUsage('t3', '2026-01-01', '2026-12-31')).toEqual([]);
        expect(await store.readUsage('t1', '2026-01-03', '2026-01-04')).toEqual([]);
      }),
    );

    it(
      'keeps unicode tenants apart and takes an empty batch',
      withStore(async (store) => {
        await store.addUsage([]);
        await store.addUsage([
          { tenant: 'ténant-ü-😀', day: '2026-02-01', kind: 'single', status: 'catch_all', count: 1 },
        ]);
        expect(await store.readUsage('ténant-ü-😀', '2026-02-01', '2026-02-01')).toHaveLength(1);
        expect(await store.readUsage('tenant-u', '2026-02-01', '2026-02-01')).toEqual([]);
      }),
    );
  });
}

/**
 * Registers the contract suite of the {@link LimitStore} that `make` returns (a fresh one per test; `other`, when
 * given, shares its counters as another API node would).
 * @example
 * limitStoreContract('memoryUsageStore', () => ({ store: memoryUsageStore() }));
 */
export function limitStoreContract(
  name: string,
  make: () => UsageFixture<LimitStore> | Promise<UsageFixture<LimitStore>>,
): void {
  const withStore = use(make);
  describe(`LimitStore contract: ${name}`, () => {
    it(
      'reserves quota up to the limit, refuses what would pass it whole, and counts per key and day',
      withStore(async (store, other) => {
        expect(await store.reserveQuota('k1', '2026-01-01', 6, 10)).toEqual({ granted: true, used: 6 });
        expect(await other.reserveQuota('k1', '2026-01-01', 5, 10)).toEqual({ granted: false, used: 6 });
        expect(await other.reserveQuota('k1', '2026-01-01', 4, 10)).toEqual({ granted: true, used: 10 });
        expect(await store.reserveQuota('k1', '2026-01-01', 1, 10)).toEqual({ granted: false, used: 10 });
        expect(await store.reserveQuota('k1', '2026-01-02', 10, 10)).toEqual({ granted: true, used: 10 });
        expect(await store.reserveQuota('k2', '2026-01-01', 11, 10)).toEqual({ granted: false, used: 0 });
        expect(await store.quotaUsed('k1', '2026-01-01')).toBe(10);
        await other.releaseQuota('k1', '2026-01-01', 4);
        expect(await store.quotaUsed('k1', '2026-01-01')).toBe(6);
        await store.releaseQuota('k3', '2026-01-01', 4); // nothing reserved: nothing changes
        expect(await store.quotaUsed('k3', '2026-01-01')).toBe(0);
      }),
    );

    it(
      'lets exactly one of many concurrent reservations take the last units',
      withStore(async (store, other) => {
        await store.reserveQuota('race', '2026-01-01', 95, 100);
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 === 0 ? store : other).reserveQuota('race', '2026-01-01', 5, 100),
          ),
        );
        expect(answers.filter((answer) => answer.granted)).toHaveLength(1);
        expect(await other.quotaUsed('race', '2026-01-01')).toBe(100);
      }),
    );

    it(
      'takes rate tokens from a bucket of burst size, refilled at the rate, shared by every instance',
      withStore(async (store, other) => {
        const t0 = 1_700_000_000_000;
        expect(await store.takeToken('k1', 2, 3, t0)).toMatchObject({ allowed: true, tokens: 2 });
        expect((await other.takeToken('k1', 2, 3, t0)).allowed).toBe(true);
        expect((await store.takeToken('k1', 2, 3, t0)).allowed).toBe(true);
        const refused = await other.takeToken('k1', 2, 3, t0);
        expect(refused.allowed).toBe(false);
        expect(refused.tokens).toBeCloseTo(0, 5);
        expect((await store.takeToken('k1', 2, 3, t0 + 499)).allowed).toBe(false);
        expect((await store.takeToken('k1', 2, 3, t0 + 500)).allowed).toBe(true);
        expect((await store.takeToken('k2', 2, 3, t0)).allowed).toBe(true);
        // A clock behind the bucket's (another node's) refills nothing and takes nothing back.
        expect((await other.takeToken('k1', 2, 3, t0 + 100)).allowed).toBe(false);
      }),
    );
  });
}

import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/errors.js';
import { type KnownVerdict, knownKey } from '../../src/known/types.js';
import type { SqlDriver } from '../../src/postgres/driver.js';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import { sqlKnownResults } from '../../src/postgres/known-results.js';
import { knownResultsContract } from '../../src/testing/known-results-contract.js';
import { FakeClock } from '../bulk/support.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';
import { deferred } from '../support/deferred.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS); // its start, not a test's own time

knownResultsContract('pgliteStore().knownResults()', async (clock) => {
  const db = await sharedPglite();
  const schema = testSchema();
  const store = await pgliteStore({ db, schema });
  const known = store.knownResults({ clock });
  return {
    known,
    async close() {
      await known.close();
      await store.close?.();
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
});

const VALID: KnownVerdict = {
  status: 'valid',
  sub_status: null,
  accept_all: false,
  mx_record: 'mx.x.test',
  smtp_provider: null,
  reason: null,
};

describe('the store sweep', () => {
  it('deletes expired rows every sweepIntervalMs, by the injected clock', async () => {
    const db = await sharedPglite();
    const schema = testSchema();
    const store = await pgliteStore({ db, schema });
    const clock = new FakeClock();
    const known = store.knownResults({ clock, sweepIntervalMs: 60_000 });
    try {
      await known.set([
        { key: knownKey('', 'short@x.test'), verdict: VALID, checkedAt: clock.now(), ttlMs: 30_000 },
        { key: knownKey('', 'long@x.test'), verdict: VALID, checkedAt: clock.now(), ttlMs: 3_600_000 },
      ]);
      const count = async () =>
        Number(
          (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.known_results`)).rows[0]
            ?.n,
        );
      expect(await count()).toBe(2);
      clock.advance(60_000); // the sweep runs: the 30 s row is gone, the hour's row stays
      await expect.poll(count).toBe(1);
      expect(await known.sweep()).toBe(0);
    } finally {
      await known.close();
      expect(clock.pending).toBe(0);
      await store.close?.();
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });

  it('writes the verdicts that wait when the store closes, and answers them before from this process', async () => {
    const db = await sharedPglite();
    const schema = testSchema();
    const store = await pgliteStore({ db, schema });
    const known = store.knownResults({ writeDelayMs: 60_000 });
    const key = knownKey('', 'waiting@x.test');
    const written = known.set([{ key, verdict: VALID, checkedAt: Date.now(), ttlMs: 3_600_000 }]);
    const rows = async () =>
      Number(
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.known_results`)).rows[0]?.n,
      );
    try {
      expect((await known.get([key])).get(key)?.status).toBe('valid');
      expect(await rows()).toBe(0); // still waiting: written in one batch later
      await store.close?.();
      await written;
      expect(await rows()).toBe(1);
    } finally {
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });

  it('answers lookups while a write is under way: a write never holds a lookup up', async () => {
    const started = deferred();
    const gate = deferred();
    const driver: SqlDriver = {
      async query(text) {
        if (text.includes('INSERT')) {
          started.resolve();
          await gate.promise;
        }
        return [];
      },
      transaction: (work) => work(driver),
      close: async () => {},
    };
    const known = sqlKnownResults(driver, 'mailvet', {
      sweepIntervalMs: 0,
      writeDelayMs: 0,
      localEntries: 0,
    });
    const key = knownKey('', 'writing@x.test');
    const written = known.set([{ key, verdict: VALID, checkedAt: Date.now(), ttlMs: 60_000 }]);
    await started.promise;
    expect((await known.get([key])).get(key)?.status).toBe('valid'); // from the write under way
    expect((await known.get([knownKey('', 'other@x.test')])).size).toBe(0); // from the table, the write still waiting
    gate.resolve();
    await written;
    await known.close();
  });

  it('refuses a bad sweep interval, naming it', async () => {
    const db = await sharedPglite();
    const schema = testSchema();
    const store = await pgliteStore({ db, schema });
    try {
      for (const sweepIntervalMs of [-1, 5, 1.5, 86_400_001, Number.NaN]) {
        expect(() => store.knownResults({ sweepIntervalMs })).toThrow(OptionsError);
      }
      expect(() => store.knownResults({ batchWindowMs: -1 })).toThrow(/batchWindowMs/);
      expect(() => store.knownResults({ writeDelayMs: 60_001 })).toThrow(/writeDelayMs/);
      expect(() => store.knownResults({ localEntries: -1 })).toThrow(/localEntries/);
      expect(() => store.knownResults({ localHoldMs: 10 })).toThrow(/localHoldMs/);
      expect(() => store.knownResults({ sweepIntervalMs: 5 })).toThrow(/sweepIntervalMs/);
    } finally {
      await store.close?.();
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });
});

describe.skipIf(POSTGRES_URL === undefined)('on the PostgreSQL server', () => {
  knownResultsContract('postgresStore().knownResults()', async (clock) => {
    const schema = testSchema();
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
    const store = await postgresStore({ pool, schema });
    const known = store.knownResults({ clock });
    return {
      known,
      async close() {
        await known.close();
        await store.close?.();
        await pool.end();
        await dropPostgresSchema(schema);
      },
    };
  });

  it('shares known results between two stores on one database (a fleet)', async () => {
    const schema = testSchema();
    const first = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const second = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const a = first.knownResults();
    const b = second.knownResults();
    try {
      // Checked now, not when the file loaded: under load the tests before this one can take longer than the TTL.
      await a.set([{ key: knownKey('t', 'a@x.test'), verdict: VALID, checkedAt: Date.now(), ttlMs: 60_000 }]);
      expect((await b.get([knownKey('t', 'a@x.test')])).get(knownKey('t', 'a@x.test'))?.status).toBe('valid');
    } finally {
      await a.close();
      await b.close();
      await first.close?.();
      await second.close?.();
      await dropPostgresSchema(schema);
    }
  });
});

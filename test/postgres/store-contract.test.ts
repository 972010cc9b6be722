import pg from 'pg';
import { beforeAll, describe } from 'vitest';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import { jobStoreContract } from '../../src/testing/job-store-contract.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS); // its start, not a test's own time

jobStoreContract('pgliteStore', async () => {
  const db = await sharedPglite();
  const schema = testSchema();
  const opened = [await pgliteStore({ db, schema })];
  return {
    store: opened[0]!,
    async reopen() {
      const store = await pgliteStore({ db, schema });
      opened.push(store);
      return store;
    },
    async close() {
      for (const store of opened) await store.close?.();
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
});

describe.skipIf(POSTGRES_URL === undefined)('on the PostgreSQL server', () => {
  jobStoreContract('postgresStore', async () => {
    const schema = testSchema();
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
    const opened = [await postgresStore({ pool, schema })];
    return {
      store: opened[0]!,
      async reopen() {
        const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
        opened.push(store);
        return store;
      },
      async close() {
        for (const store of opened) await store.close?.();
        await pool.end();
        await dropPostgresSchema(schema);
      },
    };
  });
});

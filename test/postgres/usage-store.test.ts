import { beforeAll, describe } from 'vitest';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import { limitStoreContract, usageStoreContract } from '../../src/testing/usage-contract.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS);

async function pglitePair() {
  const db = await sharedPglite();
  const schema = testSchema();
  const store = await pgliteStore({ db, schema });
  const other = await pgliteStore({ db, schema });
  return {
    store,
    other,
    async close() {
      await store.close?.();
      await other.close?.();
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}

usageStoreContract('pgliteStore', pglitePair);
limitStoreContract('pgliteStore', pglitePair);

describe.skipIf(POSTGRES_URL === undefined)('on the PostgreSQL server', () => {
  async function postgresPair() {
    const schema = testSchema();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const other = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    return {
      store,
      other,
      async close() {
        await store.close?.();
        await other.close?.();
        await dropPostgresSchema(schema);
      },
    };
  }
  usageStoreContract('postgresStore', postgresPair);
  limitStoreContract('postgresStore', postgresPair);
});

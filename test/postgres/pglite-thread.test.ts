import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlDriver } from '../../src/postgres/driver.js';
import { pgliteModulePath, pgliteThreadDriver } from '../../src/postgres/pglite-thread.js';
import { PGLITE_OPEN_MS } from '../support/databases.js';

let driver: SqlDriver;
beforeAll(async () => {
  driver = await pgliteThreadDriver(undefined, pgliteModulePath());
}, PGLITE_OPEN_MS);
afterAll(() => driver.close());

describe('pgliteThreadDriver (PGlite on a worker thread)', () => {
  it('answers rows with their types, and errors with their PostgreSQL fields', async () => {
    const [row] = await driver.query('SELECT 1::int AS n, $1::jsonb AS j, now() AS t', [
      JSON.stringify({ a: [1, 'é'] }),
    ]);
    expect(row).toMatchObject({ n: 1, j: { a: [1, 'é'] } });
    expect(row?.t).toBeInstanceOf(Date);
    await expect(driver.query('SELECT * FROM missing_table')).rejects.toMatchObject({
      code: '42P01',
      message: expect.stringContaining('missing_table'),
    });
  });

  it('commits a transaction that resolves, rolls back one that throws, and runs other statements after it', async () => {
    await driver.query('CREATE TABLE t (n int PRIMARY KEY)');
    await driver.transaction(async (tx) => {
      await tx.query('INSERT INTO t VALUES (1)');
    });
    let outside: Promise<unknown> | undefined;
    await expect(
      driver.transaction(async (tx) => {
        await tx.query('INSERT INTO t VALUES (2)');
        outside = driver.query('SELECT count(*)::int AS n FROM t');
        await tx.query('INSERT INTO t VALUES (1)'); // a duplicate key: the transaction fails
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await outside).toEqual([{ n: 1 }]);
    expect(await driver.query('SELECT n FROM t ORDER BY n')).toEqual([{ n: 1 }]);
  });

  it('refuses calls once closed (and closing again does nothing)', async () => {
    await driver.close();
    await expect(driver.query('SELECT 1')).rejects.toThrow(/PGlite thread ended/);
    await driver.close();
  });
});

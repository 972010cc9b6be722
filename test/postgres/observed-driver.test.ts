/**
 * The SQL stores' `onQuery` observer: each statement, inside transactions too, told with its duration and whether
 * it failed; a store without one runs on the driver itself; a bad one is an OptionsError naming it.
 */
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/errors.js';
import type { SqlDriver } from '../../src/postgres/driver.js';
import { observedDriver } from '../../src/postgres/observed-driver.js';
import { resolveSqlOptions } from '../../src/postgres/options.js';

function fakeDriver(): SqlDriver {
  const client = {
    async query(text: string) {
      if (text === 'BAD') throw new Error('syntax error');
      return [{ text }];
    },
  };
  return { ...client, transaction: (work) => work(client), close: async () => {} };
}

describe('observedDriver', () => {
  it('tells each statement, in and out of transactions, with its duration and failure', async () => {
    const told: [number, boolean][] = [];
    const driver = observedDriver(fakeDriver(), (ms, failed) => told.push([ms, failed]));
    expect(await driver.query('SELECT 1')).toEqual([{ text: 'SELECT 1' }]);
    await expect(driver.query('BAD')).rejects.toThrow('syntax error');
    await driver.transaction(async (client) => {
      await client.query('SELECT 2');
      await client.query('SELECT 3');
    });
    expect(told.map(([, failed]) => failed)).toEqual([false, true, false, false]);
    expect(told.every(([ms]) => ms >= 0 && ms < 5_000)).toBe(true);
  });

  it('an observer that throws changes no answer', async () => {
    const driver = observedDriver(fakeDriver(), () => {
      throw new Error('broken observer');
    });
    expect(await driver.query('SELECT 1')).toEqual([{ text: 'SELECT 1' }]);
    await expect(driver.query('BAD')).rejects.toThrow('syntax error');
  });

  it('without an observer is the driver itself', () => {
    const driver = fakeDriver();
    expect(observedDriver(driver, undefined)).toBe(driver);
  });
});

describe('the onQuery option', () => {
  it.each([['text'], [42], [{}]])('%j is an OptionsError naming onQuery', (onQuery) => {
    expect(() => resolveSqlOptions({ onQuery } as never)).toThrow(OptionsError);
    expect(() => resolveSqlOptions({ onQuery } as never)).toThrow(/onQuery/);
  });
});

import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/errors.js';
import { memoryKnownResults } from '../../src/known/memory.js';
import { type KnownVerdict, knownKey } from '../../src/known/types.js';
import { knownResultsContract } from '../../src/testing/known-results-contract.js';

knownResultsContract('memoryKnownResults', (clock) => ({ known: memoryKnownResults({ clock }) }));

const NOW = Date.now();

const VALID: KnownVerdict = {
  status: 'valid',
  sub_status: null,
  accept_all: false,
  mx_record: 'mx.x.test',
  smtp_provider: null,
  reason: null,
};

describe('memoryKnownResults bounds', () => {
  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const known = memoryKnownResults({ maxEntries: 2 });
    const key = (i: number) => knownKey('', `u${i}@x.test`);
    await known.set([0, 1].map((i) => ({ key: key(i), verdict: VALID, checkedAt: NOW, ttlMs: 60_000 })));
    await known.get([key(0)]); // 0 is now the most recently used
    await known.set([{ key: key(2), verdict: VALID, checkedAt: NOW, ttlMs: 60_000 }]);
    expect([...(await known.get([key(0), key(1), key(2)])).keys()]).toEqual([key(0), key(2)]);
  });

  it('keeps at most maxBytes, and never an entry larger than all of it', async () => {
    const known = memoryKnownResults({ maxBytes: 2000 });
    const huge = { ...VALID, reason: 'x'.repeat(5000) };
    await known.set([{ key: knownKey('', 'huge@x.test'), verdict: huge, checkedAt: NOW, ttlMs: 60_000 }]);
    expect((await known.get([knownKey('', 'huge@x.test')])).size).toBe(0);
    const keys = Array.from({ length: 50 }, (_, i) => knownKey('', `user${i}@x.test`));
    await known.set(keys.map((key) => ({ key, verdict: VALID, checkedAt: NOW, ttlMs: 60_000 })));
    const kept = (await known.get(keys)).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(50);
  });

  it('refuses bad bounds and clocks, naming the option', () => {
    for (const maxEntries of [0, -1, 1.5, 10_000_001, Number.NaN]) {
      expect(() => memoryKnownResults({ maxEntries })).toThrow(/maxEntries/);
    }
    expect(() => memoryKnownResults({ maxBytes: 0 })).toThrow(OptionsError);
    expect(() => memoryKnownResults({ clock: {} as never })).toThrow(/clock/);
  });
});

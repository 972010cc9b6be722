import { describe, expect, it } from 'vitest';
import { memoryKnownResults } from '../../src/known/memory.js';
import type { KnownEntry, KnownResults } from '../../src/known/types.js';
import { entryBytes, writeBehind } from '../../src/known/write-behind.js';
import { FakeClock } from '../bulk/support.js';
import { VALID } from './support.js';

function counting(clock: FakeClock) {
  const inner = memoryKnownResults({ clock });
  const sets: number[] = [];
  const known: KnownResults = {
    get: (keys) => inner.get(keys),
    async set(entries) {
      sets.push(entries.length);
      return inner.set(entries);
    },
  };
  return { known, sets, inner };
}

const entry = (i: number, clock: FakeClock): KnownEntry => ({
  key: `\nu${i}@x.test`,
  verdict: VALID,
  checkedAt: clock.now(),
  ttlMs: 60_000,
});

describe('writeBehind', () => {
  it('gathers the writes of many calls into one, answers what waits, and writes it all on flush', async () => {
    const clock = new FakeClock();
    const store = counting(clock);
    const behind = writeBehind(store.known, {
      delayMs: 60_000,
      batchEntries: 1000,
      maxBytes: 1 << 20,
      clock,
    });
    const written = Array.from({ length: 10 }, (_, i) => behind.set([entry(i, clock)]));
    expect(store.sets).toEqual([]);
    expect((await behind.get([entry(3, clock).key])).size).toBe(1); // from the buffer
    expect((await store.inner.get([entry(3, clock).key])).size).toBe(0);
    await behind.flush();
    await Promise.all(written);
    expect(store.sets).toEqual([10]);
    expect((await store.inner.get([entry(3, clock).key])).size).toBe(1);
  });

  it('writes at once when batchEntries wait, and resolves each set when written', async () => {
    const clock = new FakeClock();
    const store = counting(clock);
    const behind = writeBehind(store.known, { delayMs: 60_000, batchEntries: 5, maxBytes: 1 << 20, clock });
    await Promise.all(Array.from({ length: 5 }, (_, i) => behind.set([entry(i, clock)])));
    expect(store.sets).toEqual([5]);
  });

  it('writes after delayMs without a flush', async () => {
    const clock = new FakeClock();
    const store = counting(clock);
    const behind = writeBehind(store.known, { delayMs: 1, batchEntries: 1000, maxBytes: 1 << 20, clock });
    await behind.set([entry(1, clock)]);
    expect(store.sets).toEqual([1]);
  });

  it('refuses entries beyond maxBytes waiting (a store_error), and keeps the ones before', async () => {
    const clock = new FakeClock();
    const store = counting(clock);
    const maxBytes = entryBytes(entry(0, clock)) * 2;
    const behind = writeBehind(store.known, { delayMs: 60_000, batchEntries: 1000, maxBytes, clock });
    const first = behind.set([entry(0, clock), entry(1, clock)]);
    await expect(behind.set([entry(2, clock)])).rejects.toMatchObject({ code: 'store_error' });
    await first;
    expect(store.sets).toEqual([2]);
    const again = behind.set([entry(2, clock)]); // room again once written
    await behind.flush();
    await again;
    expect(store.sets).toEqual([2, 1]);
  });

  it('rejects the waiting calls with the store error', async () => {
    const clock = new FakeClock();
    const failing: KnownResults = {
      get: async () => new Map(),
      set: async () => {
        throw new Error('down');
      },
    };
    const behind = writeBehind(failing, { delayMs: 60_000, batchEntries: 1000, maxBytes: 1 << 20, clock });
    const written = behind.set([entry(0, clock)]);
    await behind.flush();
    await expect(written).rejects.toThrow('down');
  });
});

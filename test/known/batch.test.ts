import { describe, expect, it } from 'vitest';
import { batchedKnownResults, MAX_BATCH } from '../../src/known/batch.js';
import { memoryKnownResults } from '../../src/known/memory.js';
import type { KnownEntry, KnownResults } from '../../src/known/types.js';
import { nextTurn } from '../../src/turn.js';
import { deferred } from '../support/deferred.js';
import { waitFor } from '../support/wait-for.js';
import { VALID } from './support.js';

/** A memory store that records the size of every call it gets. */
function counting(): { known: KnownResults; gets: number[]; sets: number[] } {
  const inner = memoryKnownResults();
  const gets: number[] = [];
  const sets: number[] = [];
  return {
    gets,
    sets,
    known: {
      get: (keys) => {
        gets.push(keys.length);
        return inner.get(keys);
      },
      set: (entries) => {
        sets.push(entries.length);
        return inner.set(entries);
      },
    },
  };
}

const entry = (i: number): KnownEntry => ({
  key: `\nu${i}@x.test`,
  verdict: VALID,
  checkedAt: Date.now(),
  ttlMs: 60_000,
});

describe('batchedKnownResults', () => {
  it('merges the calls of one turn into batches of at most MAX_BATCH, each caller getting its own keys', async () => {
    const { known, gets, sets } = counting();
    const batched = batchedKnownResults(known);
    await Promise.all(Array.from({ length: 1200 }, (_, i) => batched.set([entry(i)])));
    expect(sets).toEqual([MAX_BATCH, 200]);
    const answers = await Promise.all([
      batched.get([entry(1).key, entry(5000).key]),
      batched.get([entry(2).key]),
    ]);
    expect(gets).toEqual([3]);
    expect([...answers[0].keys()]).toEqual([entry(1).key]);
    expect([...answers[1].keys()]).toEqual([entry(2).key]);
  });

  it('collects calls for windowMs, sends a full batch at once, and reads after it writes', async () => {
    const { known, gets, sets } = counting();
    const batched = batchedKnownResults(known, { windowMs: 20 });
    const first = batched.set([entry(1)]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const found = batched.get([entry(1).key]); // within the window: one batch with the set, read after it
    expect(sets).toEqual([]);
    await first;
    expect((await found).has(entry(1).key)).toBe(true);
    expect(gets).toEqual([1]);
    await batched.set(Array.from({ length: MAX_BATCH }, (_, i) => entry(i))); // full: sent without waiting
    expect(sets).toEqual([1, MAX_BATCH]);
    for (const windowMs of [-1, 1.5, 1001, Number.NaN]) {
      expect(() => batchedKnownResults(known, { windowMs })).toThrow(/windowMs must be an integer 0-1000/);
    }
  });

  it('keeps one batch of lookups with the store: the keys asked meanwhile go together once it answers', async () => {
    const inner = memoryKnownResults();
    await inner.set([entry(1), entry(2)]);
    const gets: (readonly string[])[] = [];
    const answers: (() => void)[] = [];
    const gated: KnownResults = {
      get(keys) {
        gets.push(keys);
        const answer = deferred();
        answers.push(answer.resolve);
        return answer.promise.then(() => inner.get(keys));
      },
      set: (entries) => inner.set(entries),
    };
    const batched = batchedKnownResults(gated);
    const first = batched.get([entry(1).key]);
    await waitFor(() => gets.length === 1, { intervalMs: 0 });
    const later = [batched.get([entry(2).key]), batched.get([entry(3).key])];
    const third = batched.get([entry(2).key]);
    await nextTurn(); // the window has passed: still one call, the first is not answered yet
    expect(gets).toEqual([[entry(1).key]]);
    answers[0]!();
    expect((await first).has(entry(1).key)).toBe(true);
    await waitFor(() => gets.length === 2, { intervalMs: 0 });
    expect(gets[1]).toEqual([entry(2).key, entry(3).key]);
    answers[1]!();
    const sizes = (await Promise.all([...later, third])).map((found) => found.size);
    expect(sizes).toEqual([1, 0, 1]);
  });

  it("rejects every caller of a batch with the store's error", async () => {
    const failing: KnownResults = {
      get: () => Promise.reject(new Error('down')),
      set: () => Promise.reject(new Error('down')),
    };
    const batched = batchedKnownResults(failing);
    const calls = [batched.get(['a']), batched.get(['b']), batched.set([entry(1)])];
    for (const call of calls) await expect(call).rejects.toThrow('down');
  });
});

import { describe, expect, it } from 'vitest';
import { frontedKnownResults } from '../../src/known/front.js';
import { memoryKnownResults } from '../../src/known/memory.js';
import type { KnownResult, KnownResults, KnownVerdict } from '../../src/known/types.js';
import { FakeClock } from '../bulk/support.js';
import { VALID } from './support.js';

const MISSING: KnownVerdict = { ...VALID, status: 'invalid', sub_status: 'mailbox_not_found' };

/** A shared store (memory) that counts the keys it is asked for, and tells every answer's expiry. */
function shared(clock: FakeClock) {
  const inner = memoryKnownResults({ clock });
  const asked: string[] = [];
  const known: KnownResults = {
    async get(keys) {
      asked.push(...keys);
      return inner.get(keys);
    },
    set: (entries) => inner.set(entries),
  };
  return { known, asked };
}

describe('frontedKnownResults', () => {
  it('answers a key set or looked up in this process without asking the store again, until its hold ends', async () => {
    const clock = new FakeClock();
    const store = shared(clock);
    const front = frontedKnownResults(store.known, {
      maxEntries: 100,
      maxBytes: 1 << 20,
      holdMs: 60_000,
      clock,
      expiryOf: (result: KnownResult) => result.checkedAt + 3_600_000,
    });
    await front.set([{ key: 'a', verdict: VALID, checkedAt: clock.now(), ttlMs: 3_600_000 }]);
    await store.known.set([{ key: 'b', verdict: MISSING, checkedAt: clock.now(), ttlMs: 3_600_000 }]);
    expect((await front.get(['a'])).get('a')).toEqual({ ...VALID, checkedAt: clock.now() });
    expect(store.asked).toEqual([]);
    expect((await front.get(['b'])).get('b')?.status).toBe('invalid');
    expect((await front.get(['a', 'b'])).size).toBe(2);
    expect(store.asked).toEqual(['b']); // b was asked once, then answered here
    clock.advance(60_000); // the hold ends: the store is asked again (another process may have replaced it)
    expect((await front.get(['a'])).get('a')?.status).toBe('valid');
    expect(store.asked).toEqual(['b', 'a']);
  });

  it('never answers past the verdict own expiry, and never keeps a miss', async () => {
    const clock = new FakeClock();
    const store = shared(clock);
    const front = frontedKnownResults(store.known, {
      maxEntries: 100,
      maxBytes: 1 << 20,
      holdMs: 60_000,
      clock,
    });
    expect((await front.get(['a'])).size).toBe(0);
    await store.known.set([{ key: 'a', verdict: VALID, checkedAt: clock.now(), ttlMs: 10_000 }]);
    expect((await front.get(['a'])).size).toBe(1); // a miss was not kept
    await front.set([{ key: 'c', verdict: VALID, checkedAt: clock.now(), ttlMs: 10_000 }]);
    clock.advance(10_000);
    expect((await front.get(['a', 'c'])).size).toBe(0);
  });

  it('a later verdict replaces the copy, even one that answers no more', async () => {
    const clock = new FakeClock();
    const store = shared(clock);
    const front = frontedKnownResults(store.known, {
      maxEntries: 100,
      maxBytes: 1 << 20,
      holdMs: 60_000,
      clock,
    });
    await front.set([{ key: 'a', verdict: VALID, checkedAt: clock.now(), ttlMs: 10_000 }]);
    await front.set([{ key: 'a', verdict: MISSING, checkedAt: clock.now(), ttlMs: 20_000 }]);
    expect((await front.get(['a'])).get('a')?.status).toBe('invalid');
    await front.set([{ key: 'a', verdict: VALID, checkedAt: clock.now() - 30_000, ttlMs: 1000 }]);
    expect((await front.get(['a'])).size).toBe(0);
  });
});

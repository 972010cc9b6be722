/**
 * The contract every {@link KnownResults} implementation runs: keeps verdicts by key, answers them until their time
 * to live passes (by the implementation's clock), replaces them, and answers batches. Import it from a test file of
 * your own implementation.
 * @module
 */
import { describe, expect, it } from 'vitest';
import type { Clock } from '../clock.js';
import { type KnownResults, type KnownVerdict, knownKey } from '../known/types.js';

/** An implementation under test, fresh for each test, and how to tear it down. */
export interface KnownResultsFixture {
  readonly known: KnownResults;
  /** Releases whatever the fixture made (a database schema, a connection). */
  close?(): void | Promise<void>;
}

/** A clock that moves only when told: what the contract hands `make`. */
export interface ContractClock extends Clock {
  /** Moves time forward by `ms`, running the timers that fall due. */
  advance(ms: number): void;
}

function contractClock(start: number): ContractClock {
  let now = start;
  let next = 1;
  const timers = new Map<number, { due: number; callback: () => void }>();
  return {
    now: () => now,
    setTimeout(callback, ms) {
      const id = next++;
      timers.set(id, { due: now + ms, callback });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      now += ms;
      for (const [id, timer] of [...timers].sort((a, b) => a[1].due - b[1].due)) {
        if (timer.due > now) continue;
        timers.delete(id);
        timer.callback();
      }
    },
  };
}

const START = Date.UTC(2026, 0, 1);

const VALID: KnownVerdict = Object.freeze({
  status: 'valid',
  sub_status: null,
  accept_all: false,
  mx_record: 'mx.example.test',
  smtp_provider: null,
  reason: null,
});

const MISSING: KnownVerdict = Object.freeze({
  status: 'invalid',
  sub_status: 'mailbox_not_found',
  accept_all: false,
  mx_record: 'mx.example.test',
  smtp_provider: 'google',
  reason: 'mx.example.test [127.0.0.2] answered RCPT TO with 550 5.1.1 no such user',
});

/**
 * Registers the contract suite for the implementation that `make` returns (a fresh one per test, on `clock`).
 * @example
 * import { knownResultsContract } from 'mailvet/testing';
 * knownResultsContract('memory', (clock) => ({ known: memoryKnownResults({ clock }) }));
 */
export function knownResultsContract(
  name: string,
  make: (clock: ContractClock) => KnownResultsFixture | Promise<KnownResultsFixture>,
): void {
  const withKnown = (test: (known: KnownResults, clock: ContractClock) => Promise<void>) => async () => {
    const clock = contractClock(START);
    const fixture = await make(clock);
    try {
      await test(fixture.known, clock);
    } finally {
      await fixture.close?.();
    }
  };

  describe(`KnownResults contract: ${name}`, () => {
    it(
      'answers nothing for keys never kept, and an empty map for no keys',
      withKnown(async (known) => {
        expect((await known.get([knownKey('', 'a@x.test')])).size).toBe(0);
        expect((await known.get([])).size).toBe(0);
      }),
    );

    it(
      'answers a kept verdict with the time it was kept, until its time to live has passed',
      withKnown(async (known, clock) => {
        const key = knownKey('', 'a@x.test');
        await known.set([{ key, verdict: MISSING, checkedAt: clock.now(), ttlMs: 60_000 }]);
        expect((await known.get([key])).get(key)).toEqual({ ...MISSING, checkedAt: START });
        clock.advance(59_999);
        expect((await known.get([key])).has(key)).toBe(true);
        clock.advance(1);
        expect((await known.get([key])).has(key)).toBe(false);
      }),
    );

    it(
      'replaces a kept verdict: the later one answers, with its own time and time to live',
      withKnown(async (known, clock) => {
        const key = knownKey('', 'a@x.test');
        await known.set([{ key, verdict: VALID, checkedAt: clock.now(), ttlMs: 1000 }]);
        clock.advance(500);
        await known.set([{ key, verdict: MISSING, checkedAt: clock.now(), ttlMs: 10_000 }]);
        clock.advance(5000);
        expect((await known.get([key])).get(key)).toEqual({ ...MISSING, checkedAt: START + 500 });
      }),
    );

    it(
      'keeps the last of duplicate keys in one batch, and answers a batch of 1,500 keys in one call',
      withKnown(async (known, clock) => {
        const keys = Array.from({ length: 1500 }, (_, i) => knownKey('', `user${i}@x.test`));
        await known.set(keys.map((key) => ({ key, verdict: VALID, checkedAt: clock.now(), ttlMs: 60_000 })));
        await known.set([
          { key: keys[0]!, verdict: VALID, checkedAt: clock.now(), ttlMs: 60_000 },
          { key: keys[0]!, verdict: MISSING, checkedAt: clock.now(), ttlMs: 60_000 },
        ]);
        const found = await known.get([...keys, knownKey('', 'nobody@x.test')]);
        expect(found.size).toBe(1500);
        expect(found.get(keys[0]!)?.status).toBe('invalid');
        expect(found.get(keys[1499]!)?.status).toBe('valid');
      }),
    );

    it(
      'keeps namespaces apart: a verdict kept in one never answers another',
      withKnown(async (known, clock) => {
        await known.set([
          { key: knownKey('tenant-a', 'a@x.test'), verdict: VALID, checkedAt: clock.now(), ttlMs: 60_000 },
        ]);
        const found = await known.get([knownKey('tenant-b', 'a@x.test'), knownKey('', 'a@x.test')]);
        expect(found.size).toBe(0);
        expect((await known.get([knownKey('tenant-a', 'a@x.test')])).size).toBe(1);
      }),
    );

    it(
      'keeps unicode, quotes and long reasons exactly',
      withKnown(async (known, clock) => {
        const key = knownKey('ténant "ü" 🙂', '"jöhn doe"@bücher.example');
        const verdict: KnownVerdict = { ...MISSING, reason: `${'é"\\'.repeat(300)} 🙂` };
        await known.set([{ key, verdict, checkedAt: clock.now(), ttlMs: 60_000 }]);
        expect((await known.get([key])).get(key)).toEqual({ ...verdict, checkedAt: START });
        expect((await known.get([knownKey('ténant "ü" 🙂', '"jöhn doe"@bucher.example')])).size).toBe(0);
      }),
    );
  });
}

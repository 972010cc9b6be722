import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { UsageCount, UsageStore } from '../../src/bulk/usage.js';
import { dayOf, dayStart, msUntilNextDay } from '../../src/bulk/usage.js';
import { memoryUsageStore } from '../../src/bulk/usage-memory.js';
import { createUsageMeter } from '../../src/bulk/usage-meter.js';
import { FakeClock, resultFor } from './support.js';

/** A memory store that records each write, and fails the writes while `failing` is set. */
function recordingStore(): UsageStore & { writes: UsageCount[][]; failing: boolean } {
  const inner = memoryUsageStore();
  const store = {
    writes: [] as UsageCount[][],
    failing: false,
    async addUsage(counts: readonly UsageCount[]) {
      if (store.failing) throw new Error('database down');
      store.writes.push([...counts]);
      await inner.addUsage(counts);
    },
    readUsage: inner.readUsage,
  };
  return store;
}

describe('createUsageMeter', () => {
  it('aggregates counts and writes them in one batch after flushMs, never one write per address', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
    const store = recordingStore();
    const meter = createUsageMeter({ store, clock, flushMs: 500 });
    for (let i = 0; i < 1000; i++) meter.count('t1', 'bulk', i % 4 === 0 ? 'invalid' : 'valid');
    meter.count('t1', 'single', 'valid', 2);
    meter.count('t1', 'single', 'valid', 0); // nothing
    expect(store.writes).toHaveLength(0);
    clock.advance(499);
    expect(store.writes).toHaveLength(0);
    clock.advance(1);
    await meter.flush(); // waits for the timer's write
    expect(store.writes).toHaveLength(1);
    expect(await store.readUsage('t1', '2026-01-01', '2026-01-01')).toEqual(
      expect.arrayContaining([
        { tenant: 't1', day: '2026-01-01', kind: 'bulk', status: 'valid', count: 750 },
        { tenant: 't1', day: '2026-01-01', kind: 'bulk', status: 'invalid', count: 250 },
        { tenant: 't1', day: '2026-01-01', kind: 'single', status: 'valid', count: 2 },
      ]),
    );
    await meter.close();
    expect(store.writes).toHaveLength(1); // nothing left to write: no empty batch
  });

  it('counts each address on the UTC day of its clock, across midnight', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 23, 59, 59, 500));
    const store = recordingStore();
    const meter = createUsageMeter({ store, clock, flushMs: 60_000 });
    meter.count('t1', 'single', 'valid');
    clock.advance(1000);
    meter.count('t1', 'single', 'valid');
    meter.count('t1', 'single', 'unknown');
    await meter.close();
    const counts = await store.readUsage('t1', '2026-01-01', '2026-01-02');
    expect(counts.filter((count) => count.day === '2026-01-01').map((count) => count.count)).toEqual([1]);
    expect(counts.filter((count) => count.day === '2026-01-02')).toHaveLength(2);
  });

  it('keeps the counts of a failed write and writes them with the next flush', async () => {
    const clock = new FakeClock();
    const store = recordingStore();
    const errors: unknown[] = [];
    const meter = createUsageMeter({ store, clock, flushMs: 100, onError: (error) => errors.push(error) });
    meter.count('t1', 'bulk', 'valid', 3);
    store.failing = true;
    await expect(meter.flush()).rejects.toThrow('database down');
    meter.count('t1', 'bulk', 'valid', 2);
    store.failing = false;
    await meter.close();
    expect(await store.readUsage('t1', '1970-01-01', '2100-01-01')).toEqual([
      expect.objectContaining({ kind: 'bulk', status: 'valid', count: 5 }),
    ]);
  });

  it('names a bad option', () => {
    const store = memoryUsageStore();
    expect(() => createUsageMeter({ store, flushMs: 0 })).toThrow(/flushMs must be an integer 1-3600000/);
    expect(() => createUsageMeter({ store, flushMs: 1.5 })).toThrow(/flushMs/);
    expect(() => createUsageMeter({ store: {} as UsageStore })).toThrow(/store must be a UsageStore/);
  });
});

describe('UTC days', () => {
  it('formats, parses and bounds days', () => {
    expect(dayOf(Date.UTC(2026, 1, 28, 23, 59))).toBe('2026-02-28');
    expect(dayStart('2026-02-28')).toBe(Date.UTC(2026, 1, 28));
    for (const bad of [
      '2026-02-30',
      '2026-13-01',
      '2026-1-01',
      '26-01-01',
      '２０２６-01-01',
      '',
      '2026-01-01 ',
    ]) {
      expect(dayStart(bad)).toBeUndefined();
    }
    expect(msUntilNextDay(Date.UTC(2026, 0, 1, 23, 59, 59))).toBe(1000);
    expect(msUntilNextDay(Date.UTC(2026, 0, 1))).toBe(86_400_000);
  });
});

describe('BulkJobManager usage', () => {
  it("counts every final result of an owner's job as bulk usage (duplicates too), none of a job without owner", async () => {
    const store = memoryUsageStore();
    const meter = createUsageMeter({ store, flushMs: 3_600_000 });
    const jobs = new BulkJobManager({
      verifier: { verify: async (email) => resultFor(email) },
      usage: meter,
    });
    try {
      const owned = await jobs.create({ owner: 't1', emails: ['a@x.test', 'bad@x.test', 'a@x.test'] });
      const anonymous = await jobs.create({ emails: ['b@x.test'] });
      for (const [id, access] of [
        [owned.id, { owner: 't1' }],
        [anonymous.id, {}],
      ] as const) {
        for await (const _ of jobs.stream(id, access)) {
          // read to the end: the job is complete
        }
      }
      await meter.flush();
      const counts = await store.readUsage('t1', '1970-01-01', '2100-01-01');
      expect(
        Object.fromEntries(counts.map((count) => [`${count.kind} ${count.status}`, count.count])),
      ).toEqual({
        'bulk valid': 2,
        'bulk invalid': 1,
      });
    } finally {
      await jobs.close();
      await meter.close();
    }
  });

  it('names a usage option without the meter methods', () => {
    expect(() => new BulkJobManager({ usage: {} as never })).toThrow(/usage must have a count\(\) method/);
  });
});

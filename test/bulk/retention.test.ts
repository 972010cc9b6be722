import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import { FakeClock, instantVerifier, until } from './support.js';

describe('retention', () => {
  it('deletes finished jobs retentionMs after they end, and keeps unfinished ones', async () => {
    const clock = new FakeClock();
    const store = memoryJobStore();
    const jobs = new BulkJobManager({ verifier: instantVerifier(), clock, store, retentionMs: 1000 });
    try {
      const done = await jobs.create({ emails: ['a@x.example'] });
      const waiting = await jobs.create({ emails: ['b@x.example'], autoStart: false });
      await until(async () => (await jobs.get(done.id))?.status === 'complete');
      clock.advance(999);
      await sleep(600); // a sweep runs every retentionMs / 2 (at least 1 s of real time)
      expect(await jobs.get(done.id)).toBeDefined();
      clock.advance(2);
      for (let i = 0; i < 150 && (await jobs.get(done.id)) !== undefined; i++) await sleep(20);
      expect(await jobs.get(done.id)).toBeUndefined();
      expect(() => store.getResults(done.id, 0, 1)).toThrow(RangeError); // gone from the store too
      expect(await jobs.get(waiting.id)).toMatchObject({ status: 'queued' });
    } finally {
      await jobs.close();
    }
  });

  it('keeps finished jobs with retentionMs 0, and refuses a retention out of range', async () => {
    expect(() => new BulkJobManager({ verifier: instantVerifier(), retentionMs: 999 })).toThrow(
      /retentionMs/,
    );
    expect(() => new BulkJobManager({ verifier: instantVerifier(), retentionMs: -1 })).toThrow(/retentionMs/);
    expect(() => new BulkJobManager({ verifier: instantVerifier(), retentionMs: 1.5e12 })).toThrow(
      /retentionMs/,
    );
    const clock = new FakeClock();
    const jobs = new BulkJobManager({ verifier: instantVerifier(), clock, retentionMs: 0 });
    try {
      const done = await jobs.create({ emails: ['a@x.example'] });
      await until(async () => (await jobs.get(done.id))?.status === 'complete');
      clock.advance(400 * 86_400_000);
      await sleep(50);
      expect(await jobs.get(done.id)).toMatchObject({ status: 'complete' });
    } finally {
      await jobs.close();
    }
  });
});

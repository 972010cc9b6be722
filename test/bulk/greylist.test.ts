import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { VerificationResult } from '../../src/result.js';
import { FakeClock, resultFor, settle } from './support.js';

const GREYLISTED = { status: 'unknown', sub_status: 'greylisted' } as const;

/** A verifier that greylists each address for its first `times[email]` calls, then accepts it. */
function greylisting(times: Record<string, number>) {
  const calls: string[] = [];
  return {
    calls,
    async verify(email: string): Promise<VerificationResult> {
      calls.push(email);
      const left = times[email] ?? 0;
      times[email] = left - 1;
      return left > 0 ? resultFor(email, GREYLISTED) : resultFor(email);
    },
  };
}

describe('BulkJobManager: greylisting', () => {
  it('retries a greylisted address after each delay and completes when it gets a final answer', async () => {
    const clock = new FakeClock();
    const verifier = greylisting({ 'g@x.example': 2 });
    const jobs = new BulkJobManager({ verifier, clock, greylistRetry: { delaysMs: [1000, 5000] } });
    const job = await jobs.create({ emails: ['g@x.example', 'v@y.example'] });
    await settle();
    expect(await jobs.get(job.id)).toMatchObject({ status: 'processing', completed: 1, total: 2 });
    expect((await jobs.results(job.id, { partial: true })).map((result) => result.email)).toEqual([
      'v@y.example',
    ]);

    clock.advance(999);
    await settle();
    expect(verifier.calls).toEqual(['g@x.example', 'v@y.example']);
    clock.advance(1);
    await settle();
    expect(verifier.calls).toHaveLength(3); // first retry: still greylisted
    expect((await jobs.get(job.id))?.status).toBe('processing');

    clock.advance(4999);
    await settle();
    expect(verifier.calls).toHaveLength(3);
    clock.advance(1);
    await settle();
    expect(verifier.calls).toHaveLength(4);
    const done = await jobs.get(job.id);
    expect(done).toMatchObject({ status: 'complete', completed: 2, counts: { valid: 2, unknown: 0 } });
    expect(done?.completed_at).toBe(new Date(clock.now()).toISOString());
    expect(clock.pending).toBe(0);
    await jobs.close();
  });

  it('keeps the last greylisted result once the retries are exhausted', async () => {
    const clock = new FakeClock();
    const verifier = greylisting({ 'g@x.example': 99 });
    const jobs = new BulkJobManager({ verifier, clock, greylistRetry: { delaysMs: [10, 20, 30] } });
    const job = await jobs.create({ emails: ['g@x.example', 'g@x.example'] });
    for (const step of [10, 20, 30]) {
      await settle();
      expect((await jobs.get(job.id))?.status).toBe('processing');
      clock.advance(step);
    }
    await settle();
    expect(verifier.calls).toHaveLength(4); // 1 try + 3 retries, once for both positions
    expect(await jobs.get(job.id)).toMatchObject({
      status: 'complete',
      completed: 2,
      counts: { unknown: 2 },
    });
    expect((await jobs.results(job.id)).map((result) => result.sub_status)).toEqual([
      'greylisted',
      'greylisted',
    ]);
    await jobs.close();
  });

  it('uses the documented default delays (1, 5 and 15 minutes)', async () => {
    const clock = new FakeClock();
    const verifier = greylisting({ 'g@x.example': 99 });
    const jobs = new BulkJobManager({ verifier, clock });
    const job = await jobs.create({ emails: ['g@x.example'] });
    const seen: number[] = [];
    for (const step of [60_000, 300_000, 900_000]) {
      await settle();
      clock.advance(step - 1);
      await settle();
      seen.push(verifier.calls.length);
      clock.advance(1);
    }
    await settle();
    expect(seen).toEqual([1, 2, 3]);
    expect((await jobs.get(job.id))?.status).toBe('complete');
    await jobs.close();
  });

  it('with no delays, a greylisted result is final at once', async () => {
    const verifier = greylisting({ 'g@x.example': 1 });
    const jobs = new BulkJobManager({ verifier, clock: new FakeClock(), greylistRetry: { delaysMs: [] } });
    const job = await jobs.create({ emails: ['g@x.example'] });
    await settle();
    expect(await jobs.get(job.id)).toMatchObject({ status: 'complete', counts: { unknown: 1 } });
    await jobs.close();
  });

  it('on close, a job waiting for a retry fails and keeps the greylisted result; no timer is left', async () => {
    const clock = new FakeClock();
    const verifier = greylisting({ 'g@x.example': 99 });
    const jobs = new BulkJobManager({ verifier, clock });
    const job = await jobs.create({ emails: ['g@x.example', 'v@x.example'] });
    await settle();
    expect(clock.pending).toBe(1);
    await jobs.close();
    expect(clock.pending).toBe(0);
    expect(await jobs.get(job.id)).toMatchObject({
      status: 'failed',
      completed: 2,
      error: { code: 'disposed' },
    });
    expect((await jobs.results(job.id, { partial: true })).map((result) => result.sub_status)).toEqual([
      'greylisted',
      null,
    ]);
  });

  it('deleting a job waiting for a retry cancels its timer', async () => {
    const clock = new FakeClock();
    const verifier = greylisting({ 'g@x.example': 99 });
    const jobs = new BulkJobManager({ verifier, clock });
    const job = await jobs.create({ emails: ['g@x.example'] });
    await settle();
    expect(clock.pending).toBe(1);
    await jobs.delete(job.id);
    expect(clock.pending).toBe(0);
    clock.advance(3_600_000);
    await settle();
    expect(verifier.calls).toHaveLength(1);
    await jobs.close();
  });
});

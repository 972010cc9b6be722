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

describe('BulkJobManager: greylisting, per job and visible in the job', () => {
  it('shows the positions waiting for a retry and when the next is due', async () => {
    const clock = new FakeClock();
    const verifier = greylisting({ 'g@x.example': 1, 'h@x.example': 1 });
    const jobs = new BulkJobManager({ verifier, clock, greylistRetry: { delaysMs: [1000, 5000] } });
    const job = await jobs.create({ emails: ['g@x.example', 'h@x.example', 'v@y.example'] });
    expect(job.retries).toEqual({ waiting: 0, next_retry_at: null, delays_ms: [1000, 5000] });
    await settle();
    const waiting = await jobs.get(job.id);
    expect(waiting).toMatchObject({ status: 'processing', completed: 1 });
    expect(waiting?.retries).toEqual({
      waiting: 2,
      next_retry_at: new Date(clock.now() + 1000).toISOString(),
      delays_ms: [1000, 5000],
    });
    clock.advance(1000);
    await settle();
    expect(await jobs.get(job.id)).toMatchObject({
      status: 'complete',
      retries: { waiting: 0, next_retry_at: null },
    });
    await jobs.close();
  });

  it("takes a job's own schedule over the manager's; [] makes a greylisted answer final at once", async () => {
    const clock = new FakeClock();
    const verifier = greylisting({ 'g@x.example': 5, 'h@x.example': 5 });
    const jobs = new BulkJobManager({ verifier, clock, greylistRetry: { delaysMs: [60_000] } });
    const none = await jobs.create({ emails: ['g@x.example'], greylistRetry: { delaysMs: [] } });
    const short = await jobs.create({ emails: ['h@x.example'], greylistRetry: { delaysMs: [10] } });
    await settle();
    expect(await jobs.get(none.id)).toMatchObject({ status: 'complete', counts: { unknown: 1 } });
    expect((await jobs.results(none.id))[0]?.sub_status).toBe('greylisted');
    expect((await jobs.get(short.id))?.retries).toMatchObject({ waiting: 1, delays_ms: [10] });
    clock.advance(10);
    await settle();
    expect(await jobs.get(short.id)).toMatchObject({ status: 'complete', counts: { unknown: 1 } });
    expect(verifier.calls.filter((email) => email === 'h@x.example')).toHaveLength(2);
    await jobs.close();
  });

  it.each([
    [{ delaysMs: [-1] }, 'greylistRetry.delaysMs'],
    [{ delaysMs: [1.5] }, 'greylistRetry.delaysMs'],
    [{ delaysMs: new Array(11).fill(1) }, 'greylistRetry.delaysMs'],
    [{ delaysMs: [86_400_001] }, 'greylistRetry.delaysMs'],
    [{ delaysMs: '60' }, 'greylistRetry.delaysMs'],
    [{ delays: [1] }, 'greylistRetry.delays'],
    [null, 'greylistRetry'],
  ])('refuses the schedule %j naming %s', async (greylistRetry, field) => {
    const jobs = new BulkJobManager({ verifier: greylisting({}) });
    await expect(jobs.create({ greylistRetry } as never)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining(field),
    });
    await jobs.close();
  });
});

import { describe, expect, it } from 'vitest';
import { unretriedNote, unretriedResult } from '../../src/bulk/finish.js';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { Job } from '../../src/bulk/types.js';
import { isMailvetError, MailvetError } from '../../src/errors.js';
import type { VerificationResult } from '../../src/result.js';
import { FakeClock, manualVerifier, resultFor, settle, until } from './support.js';

/** A verifier that answers by `resultFor` (grey* greylisted, others valid) and records every call. */
function recording() {
  const calls: string[] = [];
  return {
    calls,
    async verify(email: string): Promise<VerificationResult> {
      calls.push(email);
      return {
        ...resultFor(email),
        ...(email.startsWith('grey') ? { reason: 'mx said 451 4.7.1 later' } : {}),
      };
    },
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isMailvetError(error) ? error.code : `not a mailvet error: ${String(error)}`;
  }
  return 'resolved';
}

describe('unretriedResult', () => {
  it('keeps the verdict and score and appends the note with the retry time in UTC', () => {
    const greylisted = { ...resultFor('grey@x.example'), reason: 'mx.x.example answered 451' };
    const due = Date.UTC(2026, 10, 27, 23, 5, 59);
    const finished = unretriedResult(greylisted, due);
    expect(finished).toEqual({
      ...greylisted,
      reason:
        'mx.x.example answered 451; not retried: the job was finished before the retry due at 23:05 UTC',
    });
    expect(greylisted.reason).toBe('mx.x.example answered 451'); // not changed in place
  });

  it('says greylisted when the result had no reason, and survives a time Date cannot hold', () => {
    expect(unretriedResult(resultFor('grey@x.example'), 0).reason).toBe(
      'greylisted; not retried: the job was finished before the retry due at 00:00 UTC',
    );
    expect(unretriedNote(Number.NaN)).toContain('due at --:-- UTC');
  });
});

describe('BulkJobManager.finish (in process, memory store)', () => {
  it('ends the waiting retries at once: complete, last verdict kept, reason says no retry was made', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 27, 10, 0, 0));
    const verifier = recording();
    const jobs = new BulkJobManager({ verifier, clock, greylistRetry: { delaysMs: [3_600_000, 7_200_000] } });
    const events: Job[] = [];
    jobs.on('complete', (job) => events.push(job));
    const job = await jobs.create({
      emails: ['grey1@x.example', 'ok@y.example', 'grey1@x.example', 'grey2@z.example'],
    });
    await until(async () => (await jobs.get(job.id))?.retries.waiting === 2);
    const waiting = (await jobs.get(job.id))!;
    expect(waiting).toMatchObject({ status: 'processing', completed: 1, retries: { waiting: 2 } });
    expect(waiting.retries.next_retry_at).toBe('2026-11-27T11:00:00.000Z');

    const finished = await jobs.finish(job.id);
    expect(finished).toMatchObject({
      status: 'complete',
      completed: 4,
      counts: { valid: 1, unknown: 3 },
      retries: { waiting: 0, next_retry_at: null, delays_ms: [] },
    });
    expect(finished.completed_at).toBe(new Date(clock.now()).toISOString());
    expect(events.map((event) => event.status)).toEqual(['complete']);
    const results = await jobs.results(job.id);
    expect(results.map((result) => [result.email, result.status, result.sub_status])).toEqual([
      ['grey1@x.example', 'unknown', 'greylisted'],
      ['ok@y.example', 'valid', null],
      ['grey1@x.example', 'unknown', 'greylisted'],
      ['grey2@z.example', 'unknown', 'greylisted'],
    ]);
    expect(results[0]!.reason).toBe(
      'mx said 451 4.7.1 later; not retried: the job was finished before the retry due at 11:00 UTC',
    );
    expect(results[2]).toEqual(results[0]);
    // No retry is ever made: the timers are gone and the clock passing the due times verifies nothing more.
    expect(clock.pending).toBe(0);
    clock.advance(10_000_000);
    await settle();
    expect(verifier.calls).toHaveLength(3);
    await jobs.close();
  });

  it('is idempotent on a complete job and refuses a queued or failed one with job_not_processing', async () => {
    const clock = new FakeClock();
    const jobs = new BulkJobManager({ verifier: recording(), clock, greylistRetry: { delaysMs: [1000] } });
    const job = await jobs.create({ emails: ['grey@x.example'] });
    await until(async () => (await jobs.get(job.id))?.retries.waiting === 1);
    const first = await jobs.finish(job.id);
    const second = await jobs.finish(job.id);
    expect(second).toEqual(first);
    expect(second.status).toBe('complete');

    const queued = await jobs.create({ emails: ['a@x.example'], autoStart: false });
    expect(await codeOf(jobs.finish(queued.id))).toBe('job_not_processing');
    expect((await jobs.get(queued.id))?.status).toBe('queued');
    await jobs.close();
  });

  it('answers job_not_found for an unknown, malformed, unicode or other owner’s id', async () => {
    const jobs = new BulkJobManager({ verifier: recording(), greylistRetry: { delaysMs: [60_000] } });
    const job = await jobs.create({ emails: ['grey@x.example'], owner: 'alice' });
    for (const id of ['no-such-job', '', '../etc', 'j\u00f6b-\u{1F600}', 'a'.repeat(10_000)]) {
      expect(await codeOf(jobs.finish(id, { owner: 'alice' }))).toBe('job_not_found');
    }
    expect(await codeOf(jobs.finish(job.id, { owner: 'mallory' }))).toBe('job_not_found');
    expect(await codeOf(jobs.finish(job.id))).toBe('job_not_found');
    expect(await codeOf(jobs.finish(42 as unknown as string, { owner: 'alice' }))).toBe('job_not_found');
    expect((await jobs.get(job.id, { owner: 'alice' }))?.status).toBe('processing');
    await jobs.close();
  });

  it('lets work still running finish, and makes a greylisted answer that comes after it final', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 27, 10, 0, 0));
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, clock, greylistRetry: { delaysMs: [60_000] } });
    const job = await jobs.create({ emails: ['grey1@x.example', 'grey2@y.example'] });
    await until(() => verifier.held.length === 2);
    verifier.held.shift()!.resolve(); // grey1: greylisted, waits
    await until(async () => (await jobs.get(job.id))?.retries.waiting === 1);
    const finishing = await jobs.finish(job.id);
    expect(finishing).toMatchObject({
      status: 'processing',
      completed: 1,
      retries: { waiting: 0, delays_ms: [] },
    });
    verifier.held.shift()!.resolve(); // grey2 answers greylisted after the finish: final at once
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    const results = await jobs.results(job.id);
    expect(results[1]).toEqual(resultFor('grey2@y.example'));
    expect(clock.pending).toBe(0);
    await jobs.close();
  });

  it('refuses a failed job with job_not_processing, and answers disposed after close', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, greylistRetry: { delaysMs: [60_000] } });
    const job = await jobs.create({ emails: ['a@x.example'] });
    await until(() => verifier.held.length === 1);
    verifier.held.shift()!.reject(new MailvetError('disposed', 'gone'));
    await until(async () => (await jobs.get(job.id))?.status === 'failed');
    expect(await codeOf(jobs.finish(job.id))).toBe('job_not_processing');
    await jobs.close();
    expect(await codeOf(jobs.finish(job.id))).toBe('disposed');
  });
});

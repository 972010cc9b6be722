import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResultColumns } from '../../src/bulk/columns.js';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import type { JobRecord, JobStore } from '../../src/bulk/types.js';
import { STATUSES, SUB_STATUSES, type VerificationResult } from '../../src/result.js';
import { addresses, instantVerifier, manualVerifier, resultFor, settle, until } from './support.js';

/** A memory store that starts throwing on the chosen operation after `after` successful calls of it. */
function faultyStore(operation: keyof JobStore, after: number) {
  const inner = memoryJobStore();
  let calls = 0;
  const guard =
    <A extends unknown[], R>(name: keyof JobStore, run: (...args: A) => R) =>
    (...args: A): R => {
      if (name === operation && calls++ >= after) throw new Error(`disk full during ${name}`);
      return run(...args);
    };
  const store: JobStore = {
    saveJob: guard('saveJob', (record: JobRecord) => inner.saveJob(record)),
    putResults: guard(
      'putResults',
      (id: string, positions: readonly number[], results: readonly VerificationResult[]) =>
        inner.putResults(id, positions, results),
    ),
    getResults: guard('getResults', (id: string, offset: number, limit: number) =>
      inner.getResults(id, offset, limit),
    ),
    deleteJob: guard('deleteJob', (id: string) => inner.deleteJob(id)),
  };
  return { store, inner };
}

describe('BulkJobManager over a failing store', () => {
  it('fails the job with store_error when writing results throws, and loses no result produced', async () => {
    const { store, inner } = faultyStore('putResults', 1);
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, store, concurrency: 1 });
    const emails = ['a@x.example', 'b@x.example', 'c@x.example', 'd@x.example'];
    const job = await jobs.create({ emails });
    await settle();
    verifier.held.shift()!.resolve(); // written
    await settle();
    verifier.held.shift()!.resolve(); // the write throws; c starts meanwhile
    await settle();
    const failed = await jobs.get(job.id);
    expect(failed).toMatchObject({ status: 'failed', completed: 2, error: { code: 'store_error' } });
    expect(failed?.error?.message).toMatch(/disk full/);
    await verifier.releaseAll(); // c was in flight: its result is kept too
    expect(verifier.calls).toEqual(['a@x.example', 'b@x.example', 'c@x.example']); // d never started
    expect(await jobs.get(job.id)).toMatchObject({ status: 'failed', completed: 3 });
    const results = await jobs.results(job.id, { partial: true });
    expect(results).toEqual([resultFor('a@x.example'), resultFor('b@x.example'), resultFor('c@x.example')]);
    expect((await inner.getResults(job.id, 0, 2))[1]).toBeUndefined(); // b is held by the manager
    await expect(jobs.results(job.id)).rejects.toMatchObject({ code: 'job_failed' });
    await expect(jobs.add(job.id, ['e@x.example'])).rejects.toMatchObject({ code: 'job_finished' });
    await jobs.close();
  });

  it('keeps the results of every verification in flight when the store fails', async () => {
    const { store } = faultyStore('putResults', 0);
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, store, concurrency: 2 });
    const job = await jobs.create({
      emails: ['a@x.example', 'b@x.example', 'c@x.example', 'd@x.example', 'e@x.example'],
    });
    await settle();
    verifier.held.shift()!.resolve(); // a done; c starts
    await settle();
    expect((await jobs.get(job.id))?.status).toBe('failed'); // reading flushed a, and the store threw
    await verifier.releaseAll();
    expect(verifier.calls).toEqual(['a@x.example', 'b@x.example', 'c@x.example']);
    expect(await jobs.get(job.id)).toMatchObject({ status: 'failed', completed: 3 });
    expect((await jobs.results(job.id, { partial: true })).map((result) => result.email)).toEqual([
      'a@x.example',
      'b@x.example',
      'c@x.example',
    ]);
    await jobs.close();
  });

  it('fails the job when saving its metadata throws, keeping every result', async () => {
    const { store } = faultyStore('saveJob', 1);
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, store, concurrency: 2 });
    const job = await jobs.create({ emails: addresses(10) });
    await settle(); // moving to processing saves the job: that save throws
    const failed = await jobs.get(job.id);
    expect(failed).toMatchObject({ status: 'failed', completed: 0, error: { code: 'store_error' } });
    await verifier.releaseAll();
    expect(verifier.calls).toHaveLength(2);
    expect(await jobs.results(job.id, { partial: true })).toEqual(
      verifier.calls.map((email) => resultFor(email)),
    );
    await jobs.close();
  });

  it('reports a job that could not be saved at creation as a store_error, and holds nothing', async () => {
    const { store } = faultyStore('saveJob', 0);
    const jobs = new BulkJobManager({ verifier: instantVerifier(), store });
    await expect(jobs.create({ emails: ['a@x.example'] })).rejects.toMatchObject({ code: 'store_error' });
    expect((await jobs.list()).total).toBe(0);
    await jobs.close();
  });

  it('turns a failing read into a store_error for the caller without failing the job', async () => {
    const { store } = faultyStore('getResults', 0);
    const jobs = new BulkJobManager({ verifier: instantVerifier(), store });
    const job = await jobs.create({ emails: ['a@x.example'] });
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    await expect(jobs.results(job.id)).rejects.toMatchObject({ code: 'store_error' });
    expect((await jobs.get(job.id))?.status).toBe('complete');
    await jobs.close();
  });

  it('fills a repeat of an address whose result is still on its way to a slow store', async () => {
    const inner = memoryJobStore();
    let open: (() => void) | undefined;
    const store: JobStore = {
      saveJob: (record) => inner.saveJob(record),
      putResults: async (id, positions, results) => {
        await new Promise<void>((resolve) => {
          open = resolve;
        });
        inner.putResults(id, positions, results);
      },
      getResults: (id, offset, limit) => inner.getResults(id, offset, limit),
      deleteJob: (id) => inner.deleteJob(id),
    };
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, store, concurrency: 1 });
    const job = await jobs.create({ emails: ['a@x.example', 'b@x.example', 'c@x.example'] });
    await settle();
    verifier.held.shift()!.resolve(); // a is final; b starts
    await settle();
    const polled = jobs.get(job.id); // flushes a: the store holds that write
    await settle();
    verifier.held.shift()!.resolve(); // b is final while the write of a waits
    await settle();
    const added = jobs.add(job.id, ['b@x.example']); // a repeat of b, whose result is not in the store yet
    open!();
    await settle();
    while (verifier.held.length > 0 || open !== undefined) {
      const release = open;
      open = undefined;
      release?.();
      await verifier.releaseAll();
    }
    await Promise.all([polled, added]);
    await until(async () => {
      open?.();
      return (await jobs.get(job.id))?.status !== 'processing';
    });
    expect(await jobs.get(job.id)).toMatchObject({ status: 'complete', completed: 4 });
    expect((await jobs.results(job.id)).map((result) => result.email)).toEqual([
      'a@x.example',
      'b@x.example',
      'c@x.example',
      'b@x.example',
    ]);
    await jobs.close();
  });

  it('works with an asynchronous store, one call at a time per job', async () => {
    const inner = memoryJobStore();
    let active = 0;
    let most = 0;
    const slow = <R>(run: () => R | Promise<R>) =>
      new Promise<R>((resolve) => {
        active++;
        most = Math.max(most, active);
        setImmediate(() => {
          active--;
          resolve(run());
        });
      });
    const store: JobStore = {
      saveJob: (record) => slow(() => inner.saveJob(record)),
      putResults: (id, positions, results) => slow(() => inner.putResults(id, positions, results)),
      getResults: (id, offset, limit) => slow(() => inner.getResults(id, offset, limit)),
      deleteJob: (id) => slow(() => inner.deleteJob(id)),
    };
    const jobs = new BulkJobManager({ verifier: instantVerifier(), store });
    const emails = addresses(600, 5);
    const job = await jobs.create({ emails });
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    expect((await jobs.results(job.id)).map((result) => result.email)).toEqual(emails);
    expect(most).toBe(1);
    await jobs.close();
  });
});

const nullableText = fc.option(fc.string({ maxLength: 30 }), { nil: null });
const resultArbitrary: fc.Arbitrary<VerificationResult> = fc
  .record({
    email: fc.string({ maxLength: 40 }),
    user: nullableText,
    domain: nullableText,
    normalizedKind: fc.constantFrom('null', 'derived', 'other'),
    otherNormalized: fc.string({ maxLength: 30 }),
    status: fc.constantFrom(...STATUSES),
    sub_status: fc.option(fc.constantFrom(...SUB_STATUSES), { nil: null }),
    score: fc.integer({ min: 0, max: 100 }),
    disposable: fc.boolean(),
    role: fc.boolean(),
    free: fc.boolean(),
    accept_all: fc.boolean(),
    did_you_mean: nullableText,
    mx_record: nullableText,
    smtp_provider: nullableText,
    userFromEmail: fc.boolean(),
    transcript: fc.option(fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }), { nil: undefined }),
    // checked_at: a canonical ISO 8601 time (kept in a column), or any other text (kept whole)
    checkedAt: fc.option(
      fc.oneof(
        fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms).toISOString()),
        fc.string({ maxLength: 30 }),
      ),
      { nil: undefined },
    ),
  })
  .map((r) => {
    const user = r.userFromEmail && r.user !== null ? r.user.replaceAll('@', '') : r.user;
    const email = r.userFromEmail && user !== null ? `${user}@${r.domain ?? ''}` : r.email;
    const normalized =
      r.normalizedKind === 'null'
        ? null
        : r.normalizedKind === 'derived' && user !== null && r.domain !== null
          ? `${user}@${r.domain}`
          : r.otherNormalized;
    const result: VerificationResult = {
      email,
      normalized,
      user,
      domain: r.domain,
      status: r.status,
      sub_status: r.sub_status,
      score: r.score,
      disposable: r.disposable,
      role: r.role,
      free: r.free,
      accept_all: r.accept_all,
      did_you_mean: r.did_you_mean,
      mx_record: r.mx_record,
      smtp_provider: r.smtp_provider,
    };
    if (r.transcript !== undefined) result.smtp_transcript = r.transcript;
    if (r.checkedAt !== undefined) result.checked_at = r.checkedAt;
    return result;
  });

describe('ResultColumns', () => {
  it('gives back exactly what was stored, for any result (property)', () => {
    fc.assert(
      fc.property(fc.array(resultArbitrary, { minLength: 1, maxLength: 40 }), (results) => {
        const columns = new ResultColumns();
        const positions = results.map((_, i) => (i * 7919) % 50_000);
        for (const [i, result] of results.entries()) columns.set(positions[i]!, result);
        for (const [i, result] of results.entries()) expect(columns.get(positions[i]!)).toEqual(result);
      }),
    );
  });

  it('keeps unknown fields by storing such a result whole', () => {
    const columns = new ResultColumns();
    const odd = { ...resultFor('a@x.example'), extra: 1 } as VerificationResult;
    columns.set(0, odd);
    expect(columns.get(0)).toEqual(odd);
    expect(() => columns.set(-1, odd)).toThrow(RangeError);
    expect(() => columns.set(1.5, odd)).toThrow(RangeError);
    expect(columns.get(1)).toBeUndefined();
    expect(columns.get(10_000_000)).toBeUndefined();
  });
});

describe('BulkJobManager over a store that loses data', () => {
  it('reports a complete job with a missing result as a store_error instead of a short page', async () => {
    const inner = memoryJobStore();
    let lose = false;
    const store: JobStore = {
      ...inner,
      getResults: (id, offset, limit) => {
        const page = inner.getResults(id, offset, limit) as (VerificationResult | undefined)[];
        return lose ? page.map((result, i) => (i === 1 ? undefined : result)) : page;
      },
    };
    const jobs = new BulkJobManager({ verifier: instantVerifier(), store });
    const job = await jobs.create({ emails: ['a@x.example', 'b@x.example', 'c@x.example'] });
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    lose = true;
    await expect(jobs.results(job.id)).rejects.toMatchObject({ code: 'store_error' });
    expect(await jobs.results(job.id, { partial: true })).toHaveLength(2);
    await jobs.close();
  });
});

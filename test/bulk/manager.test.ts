import { describe, expect, it, vi } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import { JOB_STATUSES, type Job, type JobStatus, type JobStore } from '../../src/bulk/types.js';
import { isMailvetError } from '../../src/errors.js';
import {
  addresses,
  FakeClock,
  instantVerifier,
  manualVerifier,
  resultFor,
  settle,
  until,
} from './support.js';

function statusOf(job: Job | undefined): JobStatus | undefined {
  return job?.status;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isMailvetError(error)) return error.code;
    throw error;
  }
  throw new Error('expected a rejection');
}

/** Keeps the thread busy for `ms` without a turn of the event loop, as a caller's synchronous work would. */
function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin: no await, no timer
  }
}

describe('BulkJobManager: states and transitions', () => {
  it('queued → processing → complete, with timestamps set on entry to each state', async () => {
    const clock = new FakeClock();
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, clock });
    const created = await jobs.create({
      name: 'two',
      emails: ['a@x.example', 'b@y.example'],
      autoStart: false,
    });
    expect(created).toMatchObject({
      status: 'queued',
      total: 2,
      completed: 0,
      progress: 0,
      started_at: null,
    });
    expect(created.created_at).toBe('2024-01-01T00:00:00.000Z');

    clock.advance(1000);
    await jobs.start(created.id);
    const processing = await jobs.get(created.id);
    expect(processing).toMatchObject({
      status: 'processing',
      completed: 0,
      started_at: '2024-01-01T00:00:01.000Z',
    });
    expect(processing?.completed_at).toBeNull();

    verifier.held.shift()!.resolve();
    await settle();
    expect(await jobs.get(created.id)).toMatchObject({ status: 'processing', completed: 1, progress: 0.5 });

    clock.advance(1000);
    verifier.held.shift()!.resolve();
    await settle();
    const done = await jobs.get(created.id);
    expect(done).toMatchObject({ status: 'complete', completed: 2, progress: 1, error: null });
    expect(done?.completed_at).toBe('2024-01-01T00:00:02.000Z');
    await jobs.close();
  });

  it('create returns the job queued; with autoStart it is processing once its first verification starts', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier });
    const created = await jobs.create({ emails: ['a@x.example'] });
    expect(created.status).toBe('queued');
    expect(statusOf(await jobs.get(created.id))).toBe('processing');
    await verifier.releaseAll();
    await jobs.close();
  });

  it('a started job with no addresses is complete at once (polling ends), and an add reopens it', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    const completions: Job[] = [];
    jobs.on('complete', (done) => completions.push(done));
    const empty = await jobs.create({ name: 'empty' });
    expect(empty).toMatchObject({ status: 'queued', total: 0, progress: 0 }); // as created
    const polled = await jobs.get(empty.id);
    expect(polled).toMatchObject({ status: 'complete', total: 0, progress: 0 });
    expect(polled?.started_at).not.toBeNull();
    expect(polled?.completed_at).not.toBeNull();
    const waiting = await jobs.create({ name: 'waiting', autoStart: false });
    expect(waiting.status).toBe('queued');
    expect(await jobs.start(waiting.id)).toMatchObject({ status: 'complete', total: 0 });
    expect(completions.map((job) => job.id)).toEqual([empty.id, waiting.id]);
    const reopened = await jobs.add(empty.id, ['a@x.example']);
    expect(reopened.total).toBe(1);
    expect(['processing', 'complete']).toContain(reopened.status); // the instant verifier may be done already
    await until(async () => statusOf(await jobs.get(empty.id)) === 'complete');
    expect(await jobs.results(empty.id)).toHaveLength(1);
    expect(completions.map((job) => job.id)).toEqual([empty.id, waiting.id, empty.id]);
    await jobs.close();
  });

  it('autoStart: false waits in queued through several adds until start()', async () => {
    const verifier = instantVerifier();
    const jobs = new BulkJobManager({ verifier });
    const job = await jobs.create({ autoStart: false, emails: ['a@x.example'] });
    await jobs.add(job.id, ['b@x.example']);
    await jobs.add(job.id, ['c@y.example']);
    await settle();
    expect(await jobs.get(job.id)).toMatchObject({ status: 'queued', total: 3, completed: 0 });
    expect(verifier.calls).toEqual([]);
    await jobs.start(job.id);
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    expect(verifier.calls.sort()).toEqual(['a@x.example', 'b@x.example', 'c@y.example']);
    await jobs.close();
  });

  it('an add reopens a complete job: processing until the new addresses are final, never complete before', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier });
    const job = await jobs.create({ emails: ['a@x.example'] });
    await settle();
    verifier.held.shift()!.resolve();
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    const firstCompletion = (await jobs.get(job.id))!.completed_at;
    const reopened = await jobs.add(job.id, ['b@x.example', 'a@x.example']);
    expect(reopened).toMatchObject({ status: 'processing', total: 3, completed: 1, completed_at: null });
    expect(reopened.started_at).not.toBeNull();
    await settle();
    expect(await jobs.get(job.id)).toMatchObject({ status: 'processing', completed: 1 });
    expect(await codeOf(jobs.results(job.id))).toBe('job_not_complete');
    await verifier.releaseAll();
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    const done = (await jobs.get(job.id))!;
    expect(done).toMatchObject({ total: 3, completed: 3 });
    expect(done.completed_at).not.toBeNull();
    expect(firstCompletion).not.toBeNull();
    expect((await jobs.results(job.id)).map((result) => result.email)).toEqual([
      'a@x.example',
      'b@x.example',
      'a@x.example',
    ]);
    expect(await jobs.start(job.id)).toMatchObject({ status: 'complete' }); // start is idempotent
    await jobs.close();
  });

  it('failed is final: add and start throw job_finished', async () => {
    const inner = memoryJobStore();
    const store: JobStore = {
      saveJob: (record) => inner.saveJob(record),
      putResults: () => {
        throw new Error('disk full');
      },
      getResults: (id, offset, limit) => inner.getResults(id, offset, limit),
      deleteJob: (id) => inner.deleteJob(id),
    };
    const open = new BulkJobManager({ verifier: instantVerifier(), store });
    const broken = await open.create({ emails: ['a@x.example'] });
    await until(async () => statusOf(await open.get(broken.id)) === 'failed');
    expect(await codeOf(open.add(broken.id, ['b@x.example']))).toBe('job_finished');
    expect(await codeOf(open.start(broken.id))).toBe('job_finished');
    expect(await open.get(broken.id)).toMatchObject({ status: 'failed', total: 1 });
    await open.close();
  });

  it('queued → failed and processing → failed on close(); no state outside the four', async () => {
    const verifier = manualVerifier();
    const seen = new Set<JobStatus>();
    const jobs = new BulkJobManager({ verifier, concurrency: 1 });
    for (const event of ['progress', 'complete', 'failed'] as const)
      jobs.on(event, (job) => seen.add(job.status));
    const waiting = await jobs.create({ autoStart: false, emails: ['a@x.example'] });
    const running = await jobs.create({ emails: ['b@x.example', 'c@x.example', 'd@x.example'] });
    await settle();
    expect(statusOf(await jobs.get(running.id))).toBe('processing');
    verifier.held.shift()!.resolve();
    await settle();
    const closing = jobs.close();
    verifier.held.shift()!.resolve();
    await closing;
    expect(verifier.calls).toHaveLength(2);
    const failedQueued = await jobs.get(waiting.id);
    const failedRunning = await jobs.get(running.id);
    expect(failedQueued).toMatchObject({ status: 'failed', error: { code: 'disposed' }, completed: 0 });
    expect(failedRunning).toMatchObject({ status: 'failed', error: { code: 'disposed' }, completed: 2 });
    for (const status of seen) expect(JOB_STATUSES).toContain(status);
    expect(await jobs.results(running.id, { partial: true })).toHaveLength(2);
    expect(await codeOf(jobs.results(running.id))).toBe('job_failed');
  });
});

describe('BulkJobManager: progress arithmetic', () => {
  it('progress is completed / total exactly, and 0 when total is 0', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier });
    const empty = await jobs.create();
    expect(empty.progress).toBe(0);
    const job = await jobs.create({ emails: ['a@x.example', 'b@y.example', 'c@z.example'] });
    await settle();
    const seen: number[] = [];
    for (let i = 0; i < 3; i++) {
      verifier.held.shift()!.resolve();
      await settle();
      const current = await jobs.get(job.id);
      expect(current?.progress).toBe(current!.completed / current!.total);
      seen.push(current!.progress);
    }
    expect(seen).toEqual([1 / 3, 2 / 3, 1]);
    await jobs.close();
  });

  it('counts results per status, with every status present', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier(), greylistRetry: { delaysMs: [] } });
    const job = await jobs.create({
      emails: [
        'ok@x.example',
        'bad1@x.example',
        'bad2@x.example',
        'grey@x.example',
        'info@x.example',
        'nope',
      ],
    });
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    expect((await jobs.get(job.id))?.counts).toEqual({
      valid: 1,
      invalid: 3,
      catch_all: 0,
      unknown: 1,
      do_not_mail: 1,
    });
    await jobs.close();
  });
});

describe('BulkJobManager: adding while processing', () => {
  it('grows total while processing and completes only when the additions are done', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier });
    const job = await jobs.create({ emails: ['a@x.example', 'b@x.example'] });
    await settle();
    verifier.held.shift()!.resolve();
    await settle();
    const grown = await jobs.add(job.id, ['c@y.example', 'd@y.example']);
    expect(grown).toMatchObject({ status: 'processing', total: 4, completed: 1, progress: 0.25 });
    await verifier.releaseAll();
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    expect((await jobs.results(job.id)).map((result) => result.email)).toEqual([
      'a@x.example',
      'b@x.example',
      'c@y.example',
      'd@y.example',
    ]);
    await jobs.close();
  });
});

describe('BulkJobManager: results', () => {
  it('keeps input order although work is grouped by domain and answers arrive out of order', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, perDomainConcurrency: 1 });
    const emails = ['a@one.example', 'b@two.example', 'c@one.example', 'd@three.example', 'e@two.example'];
    const job = await jobs.create({ emails });
    await settle();
    // One per domain in flight, and the calls of a domain are grouped: a and c never run side by side.
    expect(verifier.held.map((call) => call.email).sort()).toEqual([
      'a@one.example',
      'b@two.example',
      'd@three.example',
    ]);
    for (const call of verifier.held.splice(0).reverse()) call.resolve();
    await settle();
    expect(verifier.held.map((call) => call.email).sort()).toEqual(['c@one.example', 'e@two.example']);
    await verifier.releaseAll();
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    const results = await jobs.results(job.id);
    expect(results.map((result) => result.email)).toEqual(emails);
    expect(results).toEqual(emails.map((email) => resultFor(email)));
    await jobs.close();
  });

  it('sends the addresses of one domain to the verifier together', async () => {
    const verifier = instantVerifier();
    const jobs = new BulkJobManager({ verifier, concurrency: 1 });
    const emails = addresses(60, 3);
    const job = await jobs.create({ emails });
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    const domains = verifier.calls.map((email) => email.split('@')[1]);
    const switches = domains.filter((domain, i) => i > 0 && domain !== domains[i - 1]).length;
    expect(switches).toBe(2);
    await jobs.close();
  });

  it('pages by input position with offset and limit', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    const emails = addresses(10);
    const job = await jobs.create({ emails });
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    expect((await jobs.results(job.id, { offset: 3, limit: 4 })).map((result) => result.email)).toEqual(
      emails.slice(3, 7),
    );
    expect(await jobs.results(job.id, { offset: 10 })).toEqual([]);
    expect(await jobs.results(job.id, { offset: 99, limit: 5 })).toEqual([]);
    expect(await jobs.results(job.id, { limit: 0 })).toEqual([]);
    await jobs.close();
  });

  it('throws job_not_complete before completion unless partial, which skips unfinished positions', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier });
    const job = await jobs.create({ emails: ['a@x.example', 'b@y.example', 'c@z.example'] });
    await settle();
    const error = await jobs.results(job.id).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      code: 'job_not_complete',
      job: { id: job.id, status: 'processing', total: 3 },
    });
    verifier.held.find((call) => call.email === 'b@y.example')!.resolve();
    await settle();
    expect((await jobs.results(job.id, { partial: true })).map((result) => result.email)).toEqual([
      'b@y.example',
    ]);
    await verifier.releaseAll();
    await jobs.close();
  });

  it('verifies a repeated address once and reports it at each position, also when repeated in a later add', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier });
    const job = await jobs.create({ emails: ['a@x.example', ' a@x.example ', 'b@x.example', 'a@x.example'] });
    await settle();
    expect(verifier.calls.sort()).toEqual(['a@x.example', 'b@x.example']);
    verifier.held.find((call) => call.email === 'a@x.example')!.resolve();
    await settle();
    await jobs.add(job.id, ['a@x.example', 'A@x.example']);
    await verifier.releaseAll();
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    expect(verifier.calls.sort()).toEqual(['A@x.example', 'a@x.example', 'b@x.example']);
    const results = await jobs.results(job.id);
    expect(results.map((result) => result.email)).toEqual([
      'a@x.example',
      'a@x.example',
      'b@x.example',
      'a@x.example',
      'a@x.example',
      'A@x.example',
    ]);
    expect(await jobs.get(job.id)).toMatchObject({ total: 6, completed: 6 });
    await jobs.close();
  });

  it('turns an exception on one address into unknown/exception_occurred and goes on', async () => {
    const verifier = instantVerifier({ throwFor: (email) => email.startsWith('x') });
    const jobs = new BulkJobManager({ verifier });
    const job = await jobs.create({ emails: ['a@d.example', 'x1@d.example', 'b@d.example'] });
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    const results = await jobs.results(job.id);
    expect(results.map((result) => [result.email, result.status, result.sub_status])).toEqual([
      ['a@d.example', 'valid', null],
      ['x1@d.example', 'unknown', 'exception_occurred'],
      ['b@d.example', 'valid', null],
    ]);
    await jobs.close();
  });

  it('treats a verifier that throws synchronously or answers garbage like an exception', async () => {
    let call = 0;
    const jobs = new BulkJobManager({
      verifier: {
        verify(email: string) {
          call++;
          if (call === 1) throw new TypeError('sync');
          if (call === 2) return Promise.resolve({ nonsense: true } as never);
          return Promise.resolve(resultFor(email));
        },
      },
      concurrency: 1,
    });
    const job = await jobs.create({ emails: ['a@d.example', 'b@d.example', 'c@d.example'] });
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    expect((await jobs.results(job.id)).map((result) => result.sub_status)).toEqual([
      'exception_occurred',
      'exception_occurred',
      null,
    ]);
    await jobs.close();
  });

  it('fails the job when the verifier is disposed under it', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, concurrency: 1 });
    const job = await jobs.create({ emails: ['a@d.example', 'b@d.example'] });
    await settle();
    verifier.held.shift()!.resolve();
    await settle();
    const { MailvetError } = await import('../../src/errors.js');
    verifier.held.shift()!.reject(new MailvetError('disposed', 'gone'));
    await settle();
    expect(await jobs.get(job.id)).toMatchObject({
      status: 'failed',
      completed: 1,
      error: { code: 'disposed' },
    });
    await jobs.close();
  });
});

describe('BulkJobManager: stream', () => {
  it('yields in input order as results become final, across adds, and ends at completion', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier });
    const job = await jobs.create({ emails: ['a@x.example', 'b@y.example'] });
    const seen: string[] = [];
    const done = (async () => {
      for await (const result of jobs.stream(job.id)) seen.push(result.email);
    })();
    await settle();
    verifier.held.find((call) => call.email === 'b@y.example')!.resolve();
    await settle();
    expect(seen).toEqual([]); // b waits for a
    await jobs.add(job.id, ['c@z.example']);
    verifier.held.find((call) => call.email === 'a@x.example')!.resolve();
    await settle();
    expect(seen).toEqual(['a@x.example', 'b@y.example']);
    await verifier.releaseAll();
    await done;
    expect(seen).toEqual(['a@x.example', 'b@y.example', 'c@z.example']);
    await jobs.close();
  });

  it('ends with job_not_found when the job is deleted mid-stream, and supports an offset', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier });
    const job = await jobs.create({ emails: ['a@x.example', 'b@x.example', 'c@x.example'] });
    const seen: string[] = [];
    const done = (async () => {
      for await (const result of jobs.stream(job.id, { offset: 1 })) seen.push(result.email);
    })().catch((error: unknown) => error);
    await settle();
    verifier.held.find((call) => call.email === 'b@x.example')!.resolve();
    await settle();
    await jobs.delete(job.id);
    expect(await done).toMatchObject({ code: 'job_not_found' });
    expect(seen).toEqual(['b@x.example']);
    await verifier.releaseAll();
    await jobs.close();
  });
});

describe('BulkJobManager: owners', () => {
  it('isolates owners: another owner (or none) sees no job, and cannot touch it', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    const mine = await jobs.create({ owner: 'alice', emails: ['a@x.example'] });
    const theirs = await jobs.create({ owner: 'bob', emails: ['b@x.example'] });
    const nobody = await jobs.create({ emails: ['c@x.example'] });
    await until(async () => statusOf(await jobs.get(mine.id, { owner: 'alice' })) === 'complete');
    expect(await jobs.get(mine.id, { owner: 'bob' })).toBeUndefined();
    expect(await jobs.get(mine.id)).toBeUndefined();
    expect(await jobs.get(nobody.id, { owner: 'alice' })).toBeUndefined();
    expect(await codeOf(jobs.add(mine.id, ['z@x.example'], { owner: 'bob' }))).toBe('job_not_found');
    expect(await codeOf(jobs.results(mine.id, { owner: 'bob' }))).toBe('job_not_found');
    expect(await codeOf(jobs.delete(mine.id, { owner: 'bob' }))).toBe('job_not_found');
    expect(await codeOf(jobs.start(mine.id))).toBe('job_not_found');
    expect(() => jobs.stream(mine.id, { owner: 'bob' })).toThrow(
      expect.objectContaining({ code: 'job_not_found' }),
    );
    expect((await jobs.list({ owner: 'alice' })).jobs.map((job) => job.id)).toEqual([mine.id]);
    expect((await jobs.list({ owner: 'bob' })).jobs.map((job) => job.id)).toEqual([theirs.id]);
    expect((await jobs.list()).jobs.map((job) => job.id)).toEqual([nobody.id]);
    expect(await jobs.get(mine.id, { owner: 'alice' })).toBeDefined();
    await jobs.close();
  });

  it('lists the caller’s jobs oldest first, with paging and a total', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await jobs.create({ owner: 'k', name: `job ${i}` })).id);
    const page = await jobs.list({ owner: 'k', offset: 1, limit: 2 });
    expect(page.total).toBe(5);
    expect(page.jobs.map((job) => job.id)).toEqual(ids.slice(1, 3));
    expect(page.jobs.map((job) => job.name)).toEqual(['job 1', 'job 2']);
    await jobs.close();
  });

  it('makes ids that are distinct UUIDs (122 random bits) unless an id generator is given', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    const ids = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const job = await jobs.create();
      expect(job.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      ids.add(job.id);
    }
    expect(ids.size).toBe(50);
    let n = 0;
    const counted = new BulkJobManager({ verifier: instantVerifier(), ids: () => `job-${++n}` });
    expect((await counted.create()).id).toBe('job-1');
    await jobs.close();
    await counted.close();
  });
});

describe('BulkJobManager: delete and close', () => {
  it('delete stops the work of a processing job and forgets it', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, concurrency: 2, perDomainConcurrency: 2 });
    const job = await jobs.create({ emails: addresses(20, 1) });
    await settle();
    expect(verifier.calls).toHaveLength(2);
    await jobs.delete(job.id);
    await verifier.releaseAll();
    expect(verifier.calls).toHaveLength(2);
    expect(await jobs.get(job.id)).toBeUndefined();
    expect(await codeOf(jobs.results(job.id, { partial: true }))).toBe('job_not_found');
    expect(await codeOf(jobs.delete(job.id))).toBe('job_not_found');
    expect((await jobs.list()).total).toBe(0);
    await jobs.close();
  });

  it('close() waits for verifications in flight, stores their results, then refuses new work', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, concurrency: 2 });
    const job = await jobs.create({ emails: addresses(6, 6) });
    await settle();
    expect(verifier.held).toHaveLength(2);
    let closed = false;
    const closing = jobs.close().then(() => {
      closed = true;
    });
    await settle();
    expect(closed).toBe(false);
    await verifier.releaseAll();
    await closing;
    expect(verifier.calls).toHaveLength(2);
    expect(await jobs.get(job.id)).toMatchObject({
      status: 'failed',
      completed: 2,
      error: { code: 'disposed' },
    });
    expect(await jobs.results(job.id, { partial: true })).toHaveLength(2);
    expect(await codeOf(jobs.create())).toBe('disposed');
    expect(await codeOf(jobs.add(job.id, ['a@x.example']))).toBe('disposed');
    await jobs.close(); // idempotent
  });

  it('disposes the verifier it made itself, and leaves a given one alone', async () => {
    let disposed = 0;
    const given = { ...instantVerifier(), dispose: async () => void disposed++ };
    const jobs = new BulkJobManager({ verifier: given });
    await jobs.close();
    expect(disposed).toBe(0);
    const owning = new BulkJobManager({ verifierOptions: { dns: false } });
    await owning.close();
  });
});

describe('BulkJobManager: events', () => {
  it('emits progress, then complete with the final job; unsubscribing stops the events', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    const events: [string, number, string][] = [];
    jobs.on('progress', (job) => events.push(['progress', job.completed, job.status]));
    const off = jobs.on('complete', (job) => events.push(['complete', job.completed, job.status]));
    const job = await jobs.create({ emails: ['a@x.example'] });
    await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
    expect(events.at(-1)).toEqual(['complete', 1, 'complete']);
    expect(events.some(([name]) => name === 'progress')).toBe(true);
    off();
    const before = events.length;
    const again = await jobs.create({ emails: ['b@x.example'] });
    await until(async () => statusOf(await jobs.get(again.id)) === 'complete');
    expect(events.slice(before).every(([name]) => name === 'progress')).toBe(true);
    expect(() => jobs.on('nope' as never, () => {})).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
    await jobs.close();
  });

  it('re-throws a listener’s exception in a separate microtask, and the job carries on', async () => {
    const thrown: unknown[] = [];
    const original = globalThis.queueMicrotask;
    const spy = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) =>
      original(() => {
        try {
          callback();
        } catch (error) {
          thrown.push(error);
        }
      }),
    );
    try {
      const jobs = new BulkJobManager({ verifier: instantVerifier() });
      jobs.on('progress', () => {
        throw new Error('listener bug');
      });
      const job = await jobs.create({ emails: ['a@x.example', 'b@x.example'] });
      await until(async () => statusOf(await jobs.get(job.id)) === 'complete');
      await settle();
      expect(thrown).not.toHaveLength(0);
      expect(thrown[0]).toMatchObject({ message: 'listener bug' });
      expect(await jobs.results(job.id)).toHaveLength(2);
      await jobs.close();
    } finally {
      spy.mockRestore();
    }
  });
});

describe('BulkJobManager: fairness to the event loop', () => {
  it('gives timers and I/O a turn during a large job whose verifications settle in microtasks', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier(), yieldAfterMs: 2 });
    let completedAt: number | undefined;
    const turns: number[] = [];
    const done = new Promise<void>((resolve) =>
      jobs.on('complete', () => {
        completedAt = performance.now();
        resolve();
      }),
    );
    const job = await jobs.create({ emails: addresses(60_000) });
    const tick = () => {
      turns.push(performance.now());
      if (completedAt === undefined) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    await done;
    // The timer ran while the job was running, more than once: the manager did not hold the loop throughout.
    expect(turns.filter((at) => at < (completedAt ?? 0)).length).toBeGreaterThan(1);
    expect((await jobs.get(job.id))?.completed).toBe(60_000);
    await jobs.close();
  });

  it('starts a job at once however long its caller worked in the same turn: a stretch begins at a verification', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, yieldAfterMs: 1 });
    const job = await jobs.create({ emails: ['a@x.example'], autoStart: false });
    busyFor(5); // the caller's own work, in the turn where create() ran the pump
    const started = await jobs.start(job.id);
    expect(started.status).toBe('processing');
    expect(verifier.calls).toEqual(['a@x.example']);
    await verifier.releaseAll();
    await jobs.close();
  });

  it('validates yieldAfterMs', () => {
    for (const bad of [0, -1, 1.5, 1001, '5', Number.NaN])
      expect(() => new BulkJobManager({ verifier: instantVerifier(), yieldAfterMs: bad as never })).toThrow(
        /yieldAfterMs/,
      );
  });
});

describe('BulkJobManager: a verifier that never answers', () => {
  /** Never answers for `hang@...`, answers at once otherwise. */
  function hanging() {
    const instant = instantVerifier();
    return {
      calls: instant.calls,
      verify: (email: string) =>
        email.startsWith('hang@') ? new Promise<never>(() => undefined) : instant.verify(email),
    };
  }

  it('ends such a verification unknown/timeout_exceeded after verificationTimeoutMs, and the job completes', async () => {
    const jobs = new BulkJobManager({ verifier: hanging(), verificationTimeoutMs: 50, concurrency: 2 });
    const job = await jobs.create({ emails: ['hang@x.example', 'ok@y.example', 'hang@z.example'] });
    // The deadline is real time: wait in real time (up to 10 s on a loaded machine).
    for (let i = 0; i < 1000 && statusOf(await jobs.get(job.id)) !== 'complete'; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(statusOf(await jobs.get(job.id))).toBe('complete');
    const results = await jobs.results(job.id);
    expect(results.map((result) => [result.email, result.status, result.sub_status])).toEqual([
      ['hang@x.example', 'unknown', 'timeout_exceeded'],
      ['ok@y.example', 'valid', null],
      ['hang@z.example', 'unknown', 'timeout_exceeded'],
    ]);
    await jobs.close();
  });

  it('frees the slots of a deleted job at once, and close() resolves', async () => {
    const verifier = hanging();
    const jobs = new BulkJobManager({ verifier, verificationTimeoutMs: 3_600_000, concurrency: 1 });
    const stuck = await jobs.create({ emails: ['hang@x.example'] });
    await settle();
    const next = await jobs.create({ emails: ['ok@y.example'] });
    await settle();
    expect(statusOf(await jobs.get(next.id))).toBe('queued'); // the only slot is held
    await jobs.delete(stuck.id);
    await until(async () => statusOf(await jobs.get(next.id)) === 'complete');
    await jobs.close(); // nothing in flight is left to wait for
  });

  it('validates verificationTimeoutMs', () => {
    for (const bad of [0, 9, 1.5, 86_400_001, '50'])
      expect(
        () => new BulkJobManager({ verifier: instantVerifier(), verificationTimeoutMs: bad as never }),
      ).toThrow(/verificationTimeoutMs/);
  });
});

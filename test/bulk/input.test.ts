import { describe, expect, it } from 'vitest';
import { LimitError } from '../../src/bulk/errors.js';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { BulkJobManagerOptions } from '../../src/bulk/types.js';
import { isMailvetError, OptionsError } from '../../src/errors.js';
import { instantVerifier, until } from './support.js';

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: string; message: string; field?: string }> {
  try {
    await promise;
  } catch (error) {
    if (isMailvetError(error)) return error as never;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('BulkJobManager: limits', () => {
  it('maxJobs: creating one job too many throws limit_exceeded; deleting frees a slot', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier(), maxJobs: 2 });
    const first = await jobs.create();
    await jobs.create({ owner: 'someone-else' });
    const error = await rejection(jobs.create());
    expect(error).toBeInstanceOf(LimitError);
    expect(error).toMatchObject({ code: 'limit_exceeded', limit: 'maxJobs', max: 2 });
    await jobs.delete(first.id);
    await expect(jobs.create()).resolves.toMatchObject({ status: 'queued', total: 0 });
    await jobs.close();
  });

  it('maxAddressesPerJob: an add that would exceed it changes nothing', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier(), maxAddressesPerJob: 5 });
    const job = await jobs.create({
      autoStart: false,
      emails: ['a@x.example', 'b@x.example', 'c@x.example'],
    });
    const error = await rejection(jobs.add(job.id, ['d@x.example', 'e@x.example', 'f@x.example']));
    expect(error).toMatchObject({ code: 'limit_exceeded', limit: 'maxAddressesPerJob', max: 5 });
    expect(error.message).toMatch(/6 addresses/);
    expect((await jobs.get(job.id))?.total).toBe(3);
    await jobs.add(job.id, ['d@x.example', 'e@x.example']);
    expect((await jobs.get(job.id))?.total).toBe(5);
    await expect(jobs.create({ emails: Array(6).fill('a@x.example') })).rejects.toMatchObject({
      code: 'limit_exceeded',
    });
    await jobs.close();
  });

  it('maxAddressesPerAdd applies to create and add, before anything is read', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier(), maxAddressesPerAdd: 2 });
    expect(
      await rejection(jobs.create({ emails: ['a@x.example', 'b@x.example', 'c@x.example'] })),
    ).toMatchObject({
      code: 'limit_exceeded',
      limit: 'maxAddressesPerAdd',
    });
    expect((await jobs.list()).total).toBe(0);
    const job = await jobs.create({ autoStart: false });
    const huge = new Array(10_000_000);
    expect(await rejection(jobs.add(job.id, huge))).toMatchObject({ limit: 'maxAddressesPerAdd' });
    await jobs.close();
  });

  it('the default per-job limit is 1,000,000 addresses', async () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier(), maxAddressesPerAdd: 1_000_000 });
    const job = await jobs.create({ autoStart: false });
    const million = new Array<string>(1_000_000).fill('same@x.example');
    await jobs.add(job.id, million);
    expect(await rejection(jobs.add(job.id, ['one.more@x.example']))).toMatchObject({
      limit: 'maxAddressesPerJob',
      max: 1_000_000,
    });
    await jobs.delete(job.id);
    await jobs.close();
  });
});

describe('BulkJobManager: bad input', () => {
  const jobs = new BulkJobManager({ verifier: instantVerifier(), maxEmailLength: 300 });

  it.each([
    ['a number', [42], 'emails[0]'],
    ['null', ['a@x.example', null], 'emails[1]'],
    ['an object', [{ toString: () => 'a@x.example' }], 'emails[0]'],
    ['a hole', Object.assign(new Array(2), { 1: 'a@x.example' }), 'emails[0]'],
    ['an over-long string', ['a'.repeat(301)], 'emails[0]'],
  ])('rejects %s among the emails, naming the entry, and adds nothing', async (_, emails, field) => {
    const job = await jobs.create({ autoStart: false, emails: ['ok@x.example'] });
    const error = await rejection(jobs.add(job.id, emails as string[]));
    expect(error).toMatchObject({ code: 'invalid_request', field });
    expect((await jobs.get(job.id))?.total).toBe(1);
    await jobs.delete(job.id);
  });

  it.each([
    ['a string', 'a@x.example'],
    ['an object', { 0: 'a@x.example', length: 1 }],
    ['null', null],
  ])('rejects emails that are %s instead of an array', async (_, emails) => {
    expect(await rejection(jobs.create({ emails: emails as never }))).toMatchObject({
      code: 'invalid_request',
      field: 'emails',
    });
  });

  it.each([
    ['control characters', 'line\r\nBreak: injected'],
    ['a NUL', 'a\u0000b'],
    ['a lone surrogate', 'x\uD800y'],
    ['over 256 characters', 'n'.repeat(257)],
    ['not a string', 12],
  ])('rejects a name with %s', async (_, name) => {
    expect(await rejection(jobs.create({ name: name as string }))).toMatchObject({
      code: 'invalid_request',
      field: 'name',
    });
  });

  it('accepts unicode names and addresses, and hostile-looking but harmless text', async () => {
    const name = '名前 <script>alert(1)</script> "; DROP TABLE jobs; -- 🚀';
    const emails = ['用户@例子.广告', 'josé@exämple.com', '=cmd|"/c calc"!A1@x.example', '  '];
    const job = await jobs.create({ name, emails });
    expect(job.name).toBe(name);
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    const results = await jobs.results(job.id);
    expect(results.map((result) => result.email)).toEqual([
      '用户@例子.广告',
      'josé@exämple.com',
      emails[2],
      '',
    ]);
    await jobs.delete(job.id);
  });

  it('rejects unknown create fields, a non-boolean autoStart, a bad owner and a non-object input', async () => {
    expect(await rejection(jobs.create({ auto_start: false } as never))).toMatchObject({
      field: 'auto_start',
    });
    expect(await rejection(jobs.create({ autoStart: 'no' as never }))).toMatchObject({ field: 'autoStart' });
    expect(await rejection(jobs.create({ owner: '' }))).toMatchObject({ field: 'owner' });
    expect(await rejection(jobs.create({ owner: 7 as never }))).toMatchObject({ field: 'owner' });
    expect(await rejection(jobs.create('x' as never))).toMatchObject({ field: 'input' });
  });

  it('rejects bad paging and a non-boolean partial', async () => {
    const job = await jobs.create({ emails: ['a@x.example'] });
    for (const bad of [-1, 1.5, Number.NaN, '3', Number.POSITIVE_INFINITY]) {
      expect(await rejection(jobs.results(job.id, { offset: bad as number }))).toMatchObject({
        field: 'offset',
      });
      expect(await rejection(jobs.list({ limit: bad as number }))).toMatchObject({ field: 'limit' });
    }
    expect(await rejection(jobs.results(job.id, { partial: 'yes' as never }))).toMatchObject({
      field: 'partial',
    });
    expect(() => jobs.stream(job.id, { offset: -3 })).toThrow(expect.objectContaining({ field: 'offset' }));
    await jobs.delete(job.id);
  });

  it('treats unknown, non-string and hostile ids as missing jobs', async () => {
    for (const id of ['nope', '', '../../etc/passwd', '__proto__', 'constructor', 42, null]) {
      expect(await jobs.get(id as string)).toBeUndefined();
      expect(await rejection(jobs.add(id as string, ['a@x.example']))).toMatchObject({
        code: 'job_not_found',
      });
    }
  });
});

describe('BulkJobManager: options', () => {
  it.each<[string, BulkJobManagerOptions, string]>([
    ['concurrency 0', { concurrency: 0 }, 'concurrency'],
    ['a fractional maxJobs', { maxJobs: 1.5 }, 'maxJobs'],
    [
      'maxAddressesPerAdd above maxAddressesPerJob',
      { maxAddressesPerJob: 10, maxAddressesPerAdd: 11 },
      'maxAddressesPerAdd',
    ],
    ['a negative delay', { greylistRetry: { delaysMs: [-1] } }, 'greylistRetry.delaysMs'],
    ['delays that are not an array', { greylistRetry: { delaysMs: 5 as never } }, 'greylistRetry.delaysMs'],
    ['an unknown greylistRetry key', { greylistRetry: { delay: 1 } as never }, 'greylistRetry.delay'],
    [
      'a store without getResults',
      { store: { saveJob() {}, putResults() {}, deleteJob() {} } as never },
      'store',
    ],
    ['a clock without setTimeout', { clock: { now: () => 0, clearTimeout() {} } as never }, 'clock'],
    ['ids that are not a function', { ids: 'x' as never }, 'ids'],
    ['a verifier without verify', { verifier: {} as never }, 'verifier'],
    [
      'both verifier and verifierOptions',
      { verifier: instantVerifier(), verifierOptions: {} },
      'verifierOptions',
    ],
    ['an unknown option', { concurency: 2 } as never, 'concurency'],
  ])('rejects %s, naming the option', (_, options, option) => {
    expect(() => new BulkJobManager(options)).toThrow(OptionsError);
    expect(() => new BulkJobManager(options)).toThrow(expect.objectContaining({ option }));
  });

  it('rejects ids that are malformed or reused, and a clock that returns no time', async () => {
    const bad = new BulkJobManager({ verifier: instantVerifier(), ids: () => 'has space' });
    expect(await rejection(bad.create())).toMatchObject({ code: 'invalid_option', option: 'ids' });
    const same = new BulkJobManager({ verifier: instantVerifier(), ids: () => 'fixed' });
    await same.create();
    expect(await rejection(same.create())).toMatchObject({ option: 'ids' });
    const broken = new BulkJobManager({
      verifier: instantVerifier(),
      clock: { now: () => Number.NaN, setTimeout: () => 0, clearTimeout: () => {} },
    });
    expect(await rejection(broken.create())).toMatchObject({ option: 'clock' });
    expect((await broken.list()).total).toBe(0);
  });
});

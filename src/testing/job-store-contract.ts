/**
 * The contract every {@link JobStore} implementation runs (after unstorage's `testDriver`): one vitest suite
 * that saves jobs, writes results at positions and reads them back. Import it from a test file of your own store.
 * @module
 */
import { describe, expect, it } from 'vitest';
import { type DurableJobStore, isDurableStore, type JobStore } from '../bulk/types.js';
import type { VerificationResult } from '../result.js';
import { ROWS, record, rejects, result, SOURCE } from './job-store-fixtures.js';

/** A store under test, fresh for each test, and how to tear it down. */
export interface JobStoreFixture {
  readonly store: JobStore;
  /** Releases whatever the fixture made (a database file, a connection). */
  close?(): void | Promise<void>;
  /**
   * Durable stores: opens a second store instance on the same database (as another process, or the same one
   * after a restart, would), for the lease and recovery tests. The fixture's `close` closes it too.
   */
  reopen?(): Promise<DurableJobStore>;
}

/**
 * Registers the contract suite for the store that `make` returns (a fresh one per test).
 * @example
 * import { jobStoreContract } from 'mailvet/testing';
 * jobStoreContract('sqliteJobStore', () => ({ store: sqliteJobStore(':memory:') }));
 */
export function jobStoreContract(name: string, make: () => JobStoreFixture | Promise<JobStoreFixture>): void {
  const withStore = (test: (store: JobStore, fixture: JobStoreFixture) => Promise<void>) => async () => {
    const fixture = await make();
    try {
      await test(fixture.store, fixture);
    } finally {
      await fixture.close?.();
    }
  };
  /** The durable tests: a no-op for a store that is not durable (the base contract only). */
  const withDurable = (test: (store: DurableJobStore, fixture: JobStoreFixture) => Promise<void>) =>
    withStore(async (store, fixture) => {
      if (isDurableStore(store)) await test(store, fixture);
    });

  describe(`JobStore contract: ${name}`, () => {
    it(
      'reads back results by position, in order, with undefined where nothing was written',
      withStore(async (store) => {
        await store.saveJob(record('j1'));
        await store.putResults('j1', [3, 0], [result('d@x.test'), result('a@x.test')]);
        await store.putResults(
          'j1',
          [1],
          [result('b@y.test', { status: 'invalid', sub_status: 'mailbox_not_found' })],
        );
        expect(await store.getResults('j1', 0, 5)).toEqual([
          result('a@x.test'),
          result('b@y.test', { status: 'invalid', sub_status: 'mailbox_not_found' }),
          undefined,
          result('d@x.test'),
          undefined,
        ]);
        expect(await store.getResults('j1', 3, 1)).toEqual([result('d@x.test')]);
        expect(await store.getResults('j1', 100, 2)).toEqual([undefined, undefined]);
        expect(await store.getResults('j1', 0, 0)).toEqual([]);
      }),
    );

    it(
      'keeps every field, including a transcript, nulls, unicode and odd local parts',
      withStore(async (store) => {
        await store.saveJob(record('j'));
        const results = [
          result('"a b"@x.test', { user: '"a b"', normalized: '"a b"@x.test' }),
          result('用户@例子.广告', {
            domain: 'xn--fsqu00a.xn--4gq62f52gdss',
            normalized: '用户@xn--fsqu00a.xn--4gq62f52gdss',
          }),
          result('no address', {
            user: null,
            domain: null,
            normalized: null,
            mx_record: null,
            status: 'invalid',
            sub_status: 'failed_syntax_check',
            score: 0,
          }),
          result('typo@gmial.com', {
            did_you_mean: 'typo@gmail.com',
            free: true,
            role: true,
            disposable: true,
            accept_all: true,
            score: 35,
          }),
          result('t@x.test', {
            status: 'unknown',
            sub_status: 'greylisted',
            smtp_provider: 'google',
            smtp_transcript: ['220 hi', '250 ok'],
          }),
          result('r@x.test', {
            status: 'invalid',
            sub_status: 'mailbox_not_found',
            reason: 'mx.x.test [192.0.2.1] answered RCPT TO with 550 5.1.1 no such user',
          }),
          result('s@x.test', { status: 'invalid', sub_status: 'mailbox_not_found', reason: '' }),
        ];
        await store.putResults('j', [0, 1, 2, 3, 4, 5, 6], results);
        const read = await store.getResults('j', 0, 7);
        expect(read).toEqual(results);
        expect(read[0]).not.toHaveProperty('reason');
      }),
    );

    it(
      'stores one result object at several positions (repeats of one address)',
      withStore(async (store) => {
        await store.saveJob(record('j'));
        const shared = result('same@x.test');
        await store.putResults('j', [0, 2, 5], [shared, shared, shared]);
        const page = await store.getResults('j', 0, 6);
        expect(page.filter((entry) => entry !== undefined)).toEqual([shared, shared, shared]);
        expect([page[0], page[2], page[5]]).toEqual([shared, shared, shared]);
      }),
    );

    it(
      'hands out results the caller may change without changing what is stored',
      withStore(async (store) => {
        await store.saveJob(record('j'));
        await store.putResults('j', [0], [result('a@x.test', { smtp_transcript: ['220 hi'] })]);
        const [first] = (await store.getResults('j', 0, 1)) as VerificationResult[];
        first!.status = 'invalid';
        first!.smtp_transcript!.push('forged');
        expect(await store.getResults('j', 0, 1)).toEqual([
          result('a@x.test', { smtp_transcript: ['220 hi'] }),
        ]);
      }),
    );

    it(
      'keeps results when the job record is saved again, and keeps jobs apart',
      withStore(async (store) => {
        await store.saveJob(record('a'));
        await store.saveJob(record('b', { owner: 'tenant' }));
        await store.putResults('a', [0], [result('a@x.test')]);
        await store.putResults('b', [0], [result('b@x.test')]);
        await store.saveJob(
          record('a', { status: 'complete', total: 1, completed: 1, completedAt: 1_700_000_001_000 }),
        );
        expect(await store.getResults('a', 0, 1)).toEqual([result('a@x.test')]);
        expect(await store.getResults('b', 0, 1)).toEqual([result('b@x.test')]);
      }),
    );

    it(
      'forgets a deleted job, and deleting an unknown job is not an error',
      withStore(async (store) => {
        await store.saveJob(record('gone'));
        await store.putResults('gone', [0], [result('a@x.test')]);
        await store.deleteJob('gone');
        await store.deleteJob('never-existed');
        expect(await rejects(() => store.putResults('gone', [1], [result('b@x.test')]))).toBe(true);
        expect(await rejects(() => store.getResults('gone', 0, 1))).toBe(true);
        await store.saveJob(record('gone'));
        expect(await store.getResults('gone', 0, 1)).toEqual([undefined]);
      }),
    );

    it(
      'writes a position once: a second write of it is a no-op',
      withStore(async (store) => {
        await store.saveJob(record('j'));
        await store.putResults('j', [0, 1], [result('a@x.test'), result('b@x.test')]);
        await store.putResults('j', [1, 2], [result('forged@x.test'), result('c@x.test')]);
        expect(await store.getResults('j', 0, 3)).toEqual([
          result('a@x.test'),
          result('b@x.test'),
          result('c@x.test'),
        ]);
      }),
    );

    it(
      'holds a large job: 50,000 positions written out of order in batches',
      withStore(async (store) => {
        await store.saveJob(record('big'));
        const count = 50_000;
        const order = Array.from({ length: count }, (_, i) => (i * 7919) % count);
        for (let start = 0; start < count; start += 256) {
          const positions = order.slice(start, start + 256);
          await store.putResults(
            'big',
            positions,
            positions.map((position) => result(`u${position}@d${position % 97}.test`)),
          );
        }
        const page = await store.getResults('big', 0, count);
        expect(page).toHaveLength(count);
        for (let i = 0; i < count; i += 997) expect(page[i]).toEqual(result(`u${i}@d${i % 97}.test`));
        expect(page.every((entry) => entry !== undefined)).toBe(true);
      }),
      // 196 writes in a row: a few seconds on an idle machine, over the default 20 s on a loaded one.
      120_000,
    );

    it(
      'keeps source rows by position (once each), with undefined where none was written; none for a plain job',
      withStore(async (store) => {
        if (isDurableStore(store) || store.putRows === undefined || store.getRows === undefined) return;
        await store.saveJob(record('plain'));
        expect(await store.getRows('plain', 0, 3)).toEqual([undefined, undefined, undefined]);
        await store.saveJob(record('r', { source: SOURCE }));
        await store.putRows('r', 1, ROWS.slice(0, 2));
        await store.putRows('r', 20_000, ROWS.slice(2));
        await store.putRows('r', 1, ['written again']);
        expect(await store.getRows('r', 0, 4)).toEqual([undefined, ROWS[0], ROWS[1], undefined]);
        expect(await store.getRows('r', 20_000, 2)).toEqual([ROWS[2], ROWS[3]]);
        expect(await store.getRows('r', 0, 0)).toEqual([]);
        await store.deleteJob('r');
        await store.saveJob(record('r'));
        expect(await store.getRows('r', 1, 1)).toEqual([undefined]);
      }),
    );

    describe('durable stores', () => {
      it(
        'keeps source rows with their inputs and the header with the job; addresses without rows read undefined',
        withDurable(async (store, fixture) => {
          const plain = Array.from({ length: 5000 }, (_, i) => `p${i}@x.test`);
          await store.putInputs(record('s', { total: 5000, armed: true }), 0, plain);
          expect((await store.getJob('s'))?.source ?? null).toBeNull();
          const emails = ROWS.map((_, i) => `r${i}@x.test`);
          const withSource = record('s', { total: 5000 + ROWS.length, armed: true, source: SOURCE });
          await store.putInputs(withSource, 5000, emails, ROWS);
          // A later source does not replace the first.
          const other = { columns: ['x'], emailColumn: 0 };
          await store.putInputs(
            record('s', { total: 5001 + ROWS.length, source: other }),
            5000 + ROWS.length,
            ['z@x.test'],
            ['z@x.test'],
          );
          expect(await store.getInputs('s', 4999, 2)).toEqual([plain[4999], emails[0]]);
          expect(await store.getRows('s', 4998, ROWS.length + 3)).toEqual([
            undefined,
            undefined,
            ...ROWS,
            'z@x.test',
          ]);
          expect((await store.getJob('s'))?.source).toEqual(SOURCE);
          await store.releaseLeases();
          const reopened = await fixture.reopen!();
          const [claimed] = await reopened.claimJobs();
          expect(claimed?.source).toEqual(SOURCE);
          expect(await reopened.getRows('s', 5000, ROWS.length)).toEqual(ROWS);
          await reopened.deleteJob('s');
          expect(await reopened.getJob('s')).toBeUndefined();
        }),
      );

      it(
        'keeps inputs by position across batches, with unicode, and reads any range',
        withDurable(async (store) => {
          const emails = Array.from({ length: 10_000 }, (_, i) =>
            i % 3 === 0 ? `用户${i}@例子.广告` : `u${i}@x.test`,
          );
          await store.putInputs(record('in', { total: 6000, armed: true }), 0, emails.slice(0, 6000));
          await store.putInputs(record('in', { total: 10_000, armed: true }), 6000, emails.slice(6000));
          expect(await store.getInputs('in', 0, 10_000)).toEqual(emails);
          expect(await store.getInputs('in', 4090, 20)).toEqual(emails.slice(4090, 4110));
          expect(await store.getInputs('in', 9995, 100)).toEqual(emails.slice(9995));
          expect(await store.getInputs('in', 20_000, 5)).toEqual([]);
        }),
      );

      it(
        'writes results, the record and greylisting retries in one commit, and drops a retry once final',
        withDurable(async (store, fixture) => {
          await store.putInputs(record('c', { total: 3, armed: true }), 0, [
            'a@x.test',
            'b@x.test',
            'c@x.test',
          ]);
          const grey = result('b@x.test', { status: 'unknown', sub_status: 'greylisted' });
          await store.putResults('c', [0], [result('a@x.test')], {
            record: record('c', {
              total: 3,
              completed: 1,
              counts: { ...record('c').counts, valid: 1 },
              armed: true,
            }),
            retries: [{ position: 1, attempt: 1, dueAt: 1_700_000_060_000, result: grey }],
          });
          expect(await store.getRetries('c')).toEqual([
            { position: 1, attempt: 1, dueAt: 1_700_000_060_000, result: grey },
          ]);
          expect((await store.finalPositions('c')).sort()).toEqual([0]);
          await store.putResults('c', [1], [result('b@x.test')], {
            record: record('c', {
              total: 3,
              completed: 2,
              counts: { ...record('c').counts, valid: 2 },
              armed: true,
            }),
            retries: [],
          });
          expect(await store.getRetries('c')).toEqual([]);
          await store.releaseLeases();
          const other = await fixture.reopen!();
          const [claimed] = await other.claimJobs();
          expect(claimed).toMatchObject({ id: 'c', total: 3, completed: 2, armed: true });
          expect(claimed!.counts.valid).toBe(2);
        }),
      );

      it(
        'keeps the first result of a position written again in a commit, and writes the rest of that commit',
        withDurable(async (store) => {
          await store.putInputs(record('w', { total: 3 }), 0, ['a@x.test', 'b@x.test', 'c@x.test']);
          const first = result('a@x.test');
          await store.putResults('w', [0], [first], {
            record: record('w', { total: 3, completed: 1, counts: { ...record('w').counts, valid: 1 } }),
            retries: [],
          });
          const again = result('a@x.test', { status: 'invalid', sub_status: 'mailbox_not_found' });
          await store.putResults('w', [2, 0, 1], [result('c@x.test'), again, result('b@x.test')], {
            record: record('w', { total: 3, completed: 3, counts: { ...record('w').counts, valid: 3 } }),
            retries: [],
          });
          expect(await store.getResults('w', 0, 3)).toEqual([first, result('b@x.test'), result('c@x.test')]);
          expect(await store.getJob('w')).toMatchObject({ completed: 3 });
        }),
      );

      it(
        'reads results at scattered positions in one call, repeats and gaps included',
        withDurable(async (store) => {
          const emails = Array.from({ length: 10 }, (_, i) => `u${i}@x.test`);
          await store.putInputs(record('g', { total: 10 }), 0, emails);
          await store.putResults(
            'g',
            [7, 1, 4],
            [result(emails[7]!), result(emails[1]!), result(emails[4]!)],
            {
              record: record('g', { total: 10, completed: 3 }),
              retries: [],
            },
          );
          expect(await store.getResultsAt('g', [4, 2, 7, 4, 1])).toEqual([
            result(emails[4]!),
            undefined,
            result(emails[7]!),
            result(emails[4]!),
            result(emails[1]!),
          ]);
          expect(await store.getResultsAt('g', [])).toEqual([]);
          await expect(store.getResultsAt('missing', [0])).rejects.toThrow(RangeError);
        }),
      );

      it(
        'drops the retry of a position that ends in the same commit, and keeps the others',
        withDurable(async (store) => {
          await store.putInputs(record('r', { total: 3, armed: true }), 0, [
            'a@x.test',
            'b@x.test',
            'c@x.test',
          ]);
          const grey = (email: string) => result(email, { status: 'unknown', sub_status: 'greylisted' });
          await store.putResults('r', [], [], {
            record: record('r', { total: 3, armed: true }),
            retries: [
              { position: 0, attempt: 1, dueAt: 10, result: grey('a@x.test') },
              { position: 1, attempt: 1, dueAt: 20, result: grey('b@x.test') },
            ],
          });
          await store.putResults('r', [0, 2], [result('a@x.test'), result('c@x.test')], {
            record: record('r', { total: 3, completed: 2, armed: true }),
            retries: [
              { position: 1, attempt: 2, dueAt: 40, result: grey('b@x.test') },
              { position: 2, attempt: 1, dueAt: 30, result: grey('c@x.test') },
            ],
          });
          expect(await store.getRetries('r')).toEqual([
            { position: 1, attempt: 2, dueAt: 40, result: grey('b@x.test') },
          ]);
        }),
      );

      it(
        'rolls a failed commit back whole: neither the record nor any result of it is kept',
        withDurable(async (store, fixture) => {
          await store.putInputs(record('t', { total: 2 }), 0, ['a@x.test', 'b@x.test']);
          await expect(
            store.putResults('t', [0, 2 ** 31], [result('a@x.test'), result('b@x.test')], {
              record: record('t', {
                total: 2,
                completed: 2,
                status: 'complete',
                completedAt: 1_700_000_001_000,
              }),
              retries: [],
            }),
          ).rejects.toThrow();
          expect(await store.getResults('t', 0, 2)).toEqual([undefined, undefined]);
          expect((await store.listJobs()).map((job) => job.status)).toEqual(['processing']);
          expect((await store.getJob('t'))?.completed).toBe(0);
          await store.releaseLeases();
          expect((await (await fixture.reopen!()).claimJobs()).map((job) => job.status)).toEqual([
            'processing',
          ]);
        }),
      );

      it(
        'leases an unfinished job to one store at a time; another takes it over only once it is released',
        withDurable(async (store, fixture) => {
          await store.putInputs(record('l', { total: 1 }), 0, ['a@x.test']);
          const other = await fixture.reopen!();
          expect(await other.claimJobs()).toEqual([]);
          expect(await store.renewLeases()).toEqual(['l']);
          await store.releaseLeases();
          expect((await other.claimJobs()).map((job) => job.id)).toEqual(['l']);
          expect(await store.renewLeases()).toEqual([]);
          // The first store lost the job: its writes are refused and write nothing.
          await expect(
            store.putResults('l', [0], [result('a@x.test')], {
              record: record('l', { total: 1, completed: 1 }),
              retries: [],
            }),
          ).rejects.toMatchObject({ code: 'lease_lost' });
          expect(await other.getResults('l', 0, 1)).toEqual([undefined]);
          await other.putResults('l', [0], [result('a@x.test')], {
            record: record('l', {
              total: 1,
              completed: 1,
              status: 'complete',
              completedAt: 1_700_000_001_000,
            }),
            retries: [],
          });
          expect(await store.getJob('l')).toMatchObject({ status: 'complete', completed: 1 });
          // Nor can it write once the new holder has finished the job and no one holds it: it lost the job.
          await expect(
            store.putResults('l', [], [], { record: record('l', { total: 1 }), retries: [] }),
          ).rejects.toMatchObject({ code: 'lease_lost' });
          expect(await store.getJob('l')).toMatchObject({ status: 'complete', completed: 1 });
          expect(await store.getJob('missing')).toBeUndefined();
          expect(await store.getResults('l', 0, 1)).toEqual([result('a@x.test')]);
        }),
      );

      it(
        'answers a ping, and forgets inputs, results and retries of a deleted job',
        withDurable(async (store) => {
          await store.ping();
          await store.putInputs(record('d', { total: 1 }), 0, ['a@x.test']);
          await store.putResults('d', [], [], {
            record: record('d', { total: 1 }),
            retries: [{ position: 0, attempt: 1, dueAt: 1, result: result('a@x.test') }],
          });
          await store.deleteJob('d');
          await store.saveJob(record('d'));
          expect(await store.getInputs('d', 0, 1)).toEqual([]);
          expect(await store.getRetries('d')).toEqual([]);
          expect(await store.finalPositions('d')).toEqual([]);
        }),
      );
    });
  });
}

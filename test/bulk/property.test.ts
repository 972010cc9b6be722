import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import type { JobStore } from '../../src/bulk/types.js';
import { FakeClock, manualVerifier, resultFor, settle } from './support.js';

const LOCALS = ['a', 'b', 'A', 'bad', 'grey', ' a ', 'nodomain'];
const DELAYS = [500, 1500];

type Action =
  | { kind: 'create'; locals: number[]; autoStart: boolean }
  | { kind: 'add'; job: number; locals: number[] }
  | { kind: 'start'; job: number }
  | { kind: 'answer'; call: number; fail: boolean }
  | { kind: 'poll'; job: number }
  | { kind: 'delete'; job: number }
  | { kind: 'tick' }
  | { kind: 'turn' };

const locals = fc.array(fc.nat({ max: LOCALS.length - 1 }), { maxLength: 6 });
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), locals, autoStart: fc.boolean() }),
  fc.record({ kind: fc.constant('add' as const), job: fc.nat({ max: 5 }), locals }),
  fc.record({ kind: fc.constant('start' as const), job: fc.nat({ max: 5 }) }),
  fc.record({ kind: fc.constant('answer' as const), call: fc.nat({ max: 20 }), fail: fc.boolean() }),
  fc.record({ kind: fc.constant('answer' as const), call: fc.nat({ max: 20 }), fail: fc.constant(false) }),
  fc.record({ kind: fc.constant('poll' as const), job: fc.nat({ max: 5 }) }),
  fc.record({ kind: fc.constant('delete' as const), job: fc.nat({ max: 5 }) }),
  fc.record({ kind: fc.constant('tick' as const) }),
  fc.record({ kind: fc.constant('turn' as const) }),
);

/** Addresses of job `n`: each job has its own domain, so verifier calls can be told apart per job. */
function emailsOf(n: number, picks: readonly number[]): string[] {
  return picks.map((pick) =>
    LOCALS[pick] === 'nodomain' ? `nodomain${n}` : `${LOCALS[pick]}@j${n}.example`,
  );
}

/** The memory store behind a turn of the event loop on every call, so that calls overlap with everything else. */
function deferredStore(): JobStore {
  const inner = memoryJobStore();
  const later = <R>(run: () => R | Promise<R>) =>
    new Promise<R>((resolve, reject) =>
      setImmediate(() => {
        try {
          resolve(run());
        } catch (error) {
          reject(error);
        }
      }),
    );
  return {
    saveJob: (record) => later(() => inner.saveJob(record)),
    putResults: (id, positions, results) => later(() => inner.putResults(id, positions, results)),
    getResults: (id, offset, limit) => later(() => inner.getResults(id, offset, limit)),
    deleteJob: (id) => later(() => inner.deleteJob(id)),
  };
}

interface Tracked {
  id: string;
  n: number;
  inputs: string[];
  deleted: boolean;
  lastCompleted: number;
  /** Successful adds: each may have reopened a complete job. */
  adds: number;
}

describe('BulkJobManager under random interleavings (property)', () => {
  it('never loses or duplicates a result, keeps input order, and completed never decreases (sync or async store)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { maxLength: 60 }), fc.boolean(), async (actions, slowStore) => {
        const clock = new FakeClock();
        const verifier = manualVerifier();
        const jobs = new BulkJobManager({
          verifier,
          clock,
          store: slowStore ? deferredStore() : memoryJobStore(),
          concurrency: 3,
          perDomainConcurrency: 2,
          greylistRetry: { delaysMs: DELAYS },
        });
        const tracked: Tracked[] = [];
        const pick = (index: number) => (tracked.length === 0 ? undefined : tracked[index % tracked.length]);

        const check = async (job: Tracked) => {
          const current = await jobs.get(job.id);
          if (job.deleted) {
            expect(current).toBeUndefined();
            return;
          }
          expect(current).toBeDefined();
          expect(current!.total).toBe(job.inputs.length);
          expect(current!.completed).toBeGreaterThanOrEqual(job.lastCompleted);
          expect(current!.progress).toBe(current!.total === 0 ? 0 : current!.completed / current!.total);
          job.lastCompleted = current!.completed;
          const partial = await jobs.results(job.id, { partial: true });
          // Results may land between the two calls: the page holds at least what was completed before it,
          // and at most what is completed after it.
          expect(partial.length).toBeGreaterThanOrEqual(current!.completed);
          expect(partial.length).toBeLessThanOrEqual((await jobs.get(job.id))!.completed);
          // In input order: the emails of the results are a subsequence of the trimmed inputs.
          let at = 0;
          for (const result of partial) {
            while (at < job.inputs.length && job.inputs[at]!.trim() !== result.email) at++;
            expect(at).toBeLessThan(job.inputs.length);
            at++;
          }
        };

        for (const step of actions) {
          if (step.kind === 'create') {
            const n = tracked.length;
            const inputs = emailsOf(n, step.locals);
            const job = await jobs.create({ emails: inputs, autoStart: step.autoStart });
            // As created: queued (a started job with no address is complete right after).
            expect(job.status).toBe('queued');
            tracked.push({ id: job.id, n, inputs, deleted: false, lastCompleted: 0, adds: 0 });
          } else if (step.kind === 'add' || step.kind === 'start' || step.kind === 'delete') {
            const job = pick(step.job);
            if (job === undefined) continue;
            if (job.deleted) {
              await expect(jobs.delete(job.id)).rejects.toMatchObject({ code: 'job_not_found' });
            } else if (step.kind === 'delete') {
              await jobs.delete(job.id);
              job.deleted = true;
            } else {
              // No read first: the call lands wherever the job's store calls happen to be.
              const more = step.kind === 'add' ? emailsOf(job.n, step.locals) : [];
              try {
                await (step.kind === 'add' ? jobs.add(job.id, more) : jobs.start(job.id));
                if (step.kind === 'add') {
                  job.inputs.push(...more);
                  job.adds++;
                }
              } catch (error) {
                // Only a failed job refuses: a complete one reopens on an add, and start is idempotent.
                expect(error).toMatchObject({ code: 'job_finished' });
                expect((await jobs.get(job.id))?.status).toBe('failed');
              }
            }
          } else if (step.kind === 'answer') {
            if (verifier.held.length === 0) continue;
            const [call] = verifier.held.splice(step.call % verifier.held.length, 1);
            if (step.fail) call!.reject(new Error('verifier blew up'));
            else call!.resolve();
          } else if (step.kind === 'tick') {
            clock.advance(1000);
          } else if (step.kind === 'turn') {
            await settle(1);
          } else {
            const job = pick(step.job);
            if (job !== undefined) await check(job);
          }
        }

        // Drain: start everything, answer everything, let every retry fall due.
        for (const job of tracked) {
          if (!job.deleted && (await jobs.get(job.id))?.status === 'queued') await jobs.start(job.id);
        }
        for (let round = 0; round < 10; round++) {
          await verifier.releaseAll();
          clock.advance(2000);
          await settle();
        }
        expect(verifier.held).toHaveLength(0);
        for (const job of tracked) {
          await check(job);
          if (job.deleted) continue;
          // Every job completes, reopened ones and those with no addresses included.
          expect((await jobs.get(job.id))?.status).toBe('complete');
          if (job.inputs.length === 0) continue;
          const results = await jobs.results(job.id);
          expect(results.map((result) => result.email)).toEqual(job.inputs.map((email) => email.trim()));
          const byAddress = new Map<string, unknown>();
          results.forEach((result, i) => {
            const expected = resultFor(job.inputs[i]!);
            if (result.sub_status === 'exception_occurred') expect(result.email).toBe(expected.email);
            else expect(result).toEqual(expected);
            // The same address has the same result at every position; but an add to a complete job reopens it
            // with a fresh deduplication index, so an address verified again after a reopen may get a result
            // where an earlier try threw (or throw where an earlier try answered).
            const earlier = byAddress.get(result.email) as typeof result | undefined;
            const threw = (one: typeof result) => one.sub_status === 'exception_occurred';
            if (earlier !== undefined && !(job.adds > 0 && (threw(earlier) || threw(result)))) {
              expect(result).toEqual(earlier);
            }
            byAddress.set(result.email, result);
          });
          // Each distinct address of the job was verified once per run of the job (greylisted ones: once per
          // retry at most): an add to a complete job reopens it with a fresh deduplication index.
          const runs = 1 + job.adds;
          for (const email of new Set(job.inputs.map((input) => input.trim()))) {
            const calls = verifier.calls.filter((call) => call === email).length;
            expect(calls).toBeGreaterThanOrEqual(1);
            if (email.startsWith('grey')) expect(calls).toBeLessThanOrEqual(runs * (1 + DELAYS.length));
            else expect(calls).toBeLessThanOrEqual(runs);
          }
        }
        await jobs.close();
      }),
      { numRuns: 500 },
    );
  });
});

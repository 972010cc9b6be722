/**
 * A durable store's result buffers are bounded in bytes, not rows (issue 30): a few huge results reach the bound
 * as many small ones do, and the job is held back once its unwritten results pass the larger bound.
 */
import { describe, expect, it } from 'vitest';
import { bufferResult, type LiveJob, resultBytes } from '../../src/bulk/job.js';
import type { DurableJobStore } from '../../src/bulk/job-types.js';
import { DURABLE_BUFFER_DEFAULTS, durableResults } from '../../src/bulk/sink.js';
import type { VerificationResult } from '../../src/result.js';
import { processingJob, resultFor } from './support.js';

function job(): LiveJob {
  const live = processingJob();
  live.flushedAt = performance.now() + 60_000; // the time bound stays out of the way
  return live;
}

/** A result with an SMTP transcript of `lines` lines of 30,000 characters (about 60 KB a line). */
function huge(email: string, lines: number): VerificationResult {
  return { ...resultFor(email), smtp_transcript: Array.from({ length: lines }, () => 'x'.repeat(30_000)) };
}

/** Buffers results until `due` says to flush; returns how many it took. */
function untilDue(
  writes: ReturnType<typeof durableResults>,
  make: (i: number) => VerificationResult,
): number {
  const live = job();
  for (let i = 0; i < 100_000; i++) {
    const result = make(i);
    bufferResult(live, i, result, resultBytes(result));
    if (writes.due(live)) return i + 1;
  }
  return Number.POSITIVE_INFINITY;
}

describe('durable result buffers in bytes', () => {
  const writes = durableResults({} as DurableJobStore, { storeFailed() {} });

  it('counts a result by its texts: a transcript makes it large, a typical one is a few hundred bytes', () => {
    const typical = resultBytes(resultFor('anna.meyer@company.example'));
    expect(typical).toBeGreaterThan(160);
    expect(typical).toBeLessThan(500);
    expect(resultBytes(huge('a@b.example', 10))).toBeGreaterThan(600_000);
  });

  it('flushes after 3 huge results and after thousands of small ones: at the byte bound (1 MiB) either way', () => {
    const bound = DURABLE_BUFFER_DEFAULTS.flushBytes;
    const hugeBytes = resultBytes(huge('a@b.example', 10));
    expect(untilDue(writes, (i) => huge(`u${i}@b.example`, 10))).toBe(Math.ceil(bound / hugeBytes));
    const small = resultBytes(resultFor('u1@company.example'));
    const smallCount = untilDue(writes, (i) => resultFor(`u${i % 10}@company.example`));
    expect(smallCount).toBe(Math.ceil(bound / small));
    expect(smallCount).toBeGreaterThan(2000);
  });

  it('holds a job back once its buffered and committing results pass maxUnwrittenBytes', () => {
    const bounded = durableResults(
      {} as DurableJobStore,
      { storeFailed() {} },
      {
        flushBytes: 1000,
        maxUnwrittenBytes: 3000,
      },
    );
    const live = job();
    const result = huge('a@b.example', 0);
    const bytes = resultBytes(result);
    let held = 0;
    while (!bounded.backlogged(live)) {
      bounded.write(live, [held], [result], bytes); // in the commit under way
      held++;
    }
    expect(held).toBe(Math.ceil(3000 / bytes));
    const committing = new Map<number, VerificationResult>();
    bounded.unwritten(live, new Set([0, held - 1, held]), committing);
    expect([...committing.keys()]).toEqual([0, held - 1]); // the wanted positions it holds, and only those
    expect(bounded.due(live)).toBe(false); // what is committing is not buffered
    bufferResult(live, held, result, 1000);
    expect(bounded.due(live)).toBe(true);
  });
});

/**
 * Chunk sizing by pace: the size a measured time per address gives, within the runner's bounds, and a worker's
 * running pace of each job.
 */
import { describe, expect, it } from 'vitest';
import { chunkSizeFor, PaceMeter, parsePace, spreadChunkSize } from '../../src/bullmq/pace.js';

const sizing = { chunkSize: 100, maxChunkSize: 4096, chunkTargetMs: 2000 };

describe('chunkSizeFor', () => {
  it.each([
    ['unknown pace: the smallest chunks', undefined, 100],
    ['SMTP work, 40 ms an address: never below chunkSize', 40, 100],
    ['10 ms an address: 200 addresses hold the target', 10, 200],
    ['1 ms an address', 1, 2000],
    ['offline, 30 µs an address: the largest chunks', 0.03, 4096],
    ['a pace of zero: the largest chunks', 0, 4096],
    ['a negative pace is no pace', -1, 100],
    ['an infinite pace is no pace', Number.POSITIVE_INFINITY, 100],
    ['NaN is no pace', Number.NaN, 100],
  ])('%s', (_name, pace, size) => {
    expect(chunkSizeFor(pace, sizing)).toBe(size);
  });
});

describe('parsePace', () => {
  it('reads a number of milliseconds, and nothing else', () => {
    expect(parsePace('0.25')).toBe(0.25);
    expect(parsePace(null)).toBeUndefined();
    expect(parsePace('fast')).toBeUndefined();
    expect(parsePace('-3')).toBeUndefined();
  });
});

describe('PaceMeter', () => {
  it("takes a job's first chunk as its pace, then moves towards each new measure", () => {
    const meter = new PaceMeter();
    expect(meter.add('job', 100, 50)).toBe(0.5);
    const next = meter.add('job', 100, 150);
    expect(next).toBeGreaterThan(0.5);
    expect(next).toBeLessThan(1.5);
    expect(meter.add('other', 10, 10)).toBe(1); // jobs apart
  });

  it('starts again on a forgotten job, and keeps at most `limit` jobs', () => {
    const meter = new PaceMeter(2);
    meter.add('a', 1, 10);
    expect(meter.has('a')).toBe(true);
    meter.forget('a');
    expect(meter.has('a')).toBe(false); // a chunk of it still in flight reports no pace
    expect(meter.add('a', 1, 2)).toBe(2);
    meter.add('b', 1, 5);
    meter.add('c', 1, 7); // drops 'a', the oldest
    expect(meter.add('a', 1, 4)).toBe(4);
    expect(meter.add('c', 1, 7)).toBe(7);
  });

  it('counts an empty chunk as one address (no division by zero)', () => {
    expect(new PaceMeter().add('job', 0, 3)).toBe(3);
  });
});

describe('spreadChunkSize', () => {
  it.each([
    ['one worker keeps the pace size', 100, 8000, 1, 100],
    ['no live worker counted keeps it', 100, 8000, 0, 100],
    ['nothing pending keeps it', 100, 0, 4, 100],
    ['4 workers, 8,000 pending: chunks of 8,000 / 256', 100, 8000, 4, 32],
    ['4 workers, 100,000 pending: the pace size is smaller', 100, 100_000, 4, 100],
    ['a small job spread over many workers: chunks of 1', 100, 10, 8, 1],
    ['offline work at the end of a big job: the rest still spread', 4096, 50_000, 2, 391],
  ])('%s', (_name, size, pending, workers, expected) => {
    expect(spreadChunkSize(size, pending, workers)).toBe(expected);
  });
});

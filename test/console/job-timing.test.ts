import { describe, expect, it } from 'vitest';
import { clockTime, elapsedMs, retryLine, timeLeft } from '../../src/console/job-timing.js';
import type { Job } from '../../src/console/types.js';

const START = Date.parse('2026-11-27T08:00:00.000Z');
const at = (ms: number) => new Date(START + ms).toISOString();

function job(overrides: Partial<Job> = {}): Job {
  return {
    id: 'j1',
    name: 'contacts.csv',
    status: 'processing',
    total: 10,
    completed: 9,
    progress: 0.9,
    created_at: at(0),
    started_at: at(0),
    completed_at: null,
    counts: { valid: 9, invalid: 0, catch_all: 0, unknown: 0, do_not_mail: 0 },
    retries: { waiting: 1, next_retry_at: at(60_000), delays_ms: [60_000, 300_000, 900_000] },
    ...overrides,
  };
}

/** A job as a server without greylisting retries sends it (no `retries` field). */
function withoutRetries(overrides: Partial<Job> = {}): Job {
  const { retries, ...rest } = job(overrides);
  expect(retries).toBeDefined();
  return rest;
}

describe('what a job says about time', () => {
  it('counts the elapsed time up to now while the job runs, and up to its end after', () => {
    expect(elapsedMs(job(), START + 42_000)).toBe(42_000);
    expect(elapsedMs(job({ status: 'complete', completed_at: at(5_000) }), START + 99_000)).toBe(5_000);
    expect(elapsedMs(job({ started_at: null, status: 'queued' }), START + 99_000)).toBe(0);
  });

  it('never says "about 0 s left" while a greylisting retry waits: the retry time is the floor', () => {
    expect(timeLeft(job(), START + 2_000)).toBe('at least 58 s left (greylisting retries)');
    expect(timeLeft(job(), START + 61_000)).toBe('waiting for greylisting retries');
    // Addresses not yet checked are estimated from the pace, and the larger of the two wins.
    const busy = job({
      completed: 2,
      total: 10,
      retries: { waiting: 1, next_retry_at: at(3_000), delays_ms: [] },
    });
    expect(timeLeft(busy, START + 2_000)).toBe('at least 7 s left (greylisting retries)');
  });

  it('estimates from the pace when nothing waits, and gives none before the first result or after the end', () => {
    const running = job({ completed: 5, retries: { waiting: 0, next_retry_at: null, delays_ms: [] } });
    expect(timeLeft(running, START + 10_000)).toBe('about 10 s left');
    expect(timeLeft(withoutRetries({ completed: 0 }), START + 10_000)).toBeNull();
    expect(timeLeft(job({ status: 'complete', completed_at: at(1_000) }), START + 10_000)).toBeNull();
  });

  it('says how many addresses retry and when, in local time', () => {
    expect(retryLine(job())).toBe(`1 address retries at ${clockTime(at(60_000))} (greylisting)`);
    expect(retryLine(job({ retries: { waiting: 1200, next_retry_at: at(0), delays_ms: [] } }))).toBe(
      `1,200 addresses retry at ${clockTime(at(0))} (greylisting)`,
    );
    expect(retryLine(job({ retries: { waiting: 0, next_retry_at: null, delays_ms: [] } }))).toBeNull();
    expect(retryLine(withoutRetries())).toBeNull();
    expect(retryLine(job({ status: 'complete' }))).toBeNull();
    expect(clockTime('2026-11-27T08:05:00.000Z')).toMatch(/^\d\d:05$/);
  });
});

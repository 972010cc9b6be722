import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/http/rate-limit.js';

function clock(start = 0): { now: () => number; advance: (ms: number) => void } {
  let time = start;
  return { now: () => time, advance: (ms) => (time += ms) };
}

describe('createRateLimiter', () => {
  it('allows a burst, then refuses with a Retry-After, then refills at the rate', () => {
    const time = clock();
    const limiter = createRateLimiter({ requestsPerSecond: 2, burst: 3, clock: time.now });
    const first = limiter.take('a');
    expect(first).toMatchObject({ allowed: true, retryAfter: 0 });
    expect(first.headers).toEqual({
      'ratelimit-limit': '3',
      'ratelimit-remaining': '2',
      'ratelimit-reset': '1',
    });
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').headers['ratelimit-remaining']).toBe('0');
    const refused = limiter.take('a');
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfter).toBe(1);
    expect(refused.headers['ratelimit-reset']).toBe('2');
    time.advance(499);
    expect(limiter.take('a').allowed).toBe(false);
    time.advance(1);
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
  });

  it('keeps one bucket per tenant', () => {
    const time = clock();
    const limiter = createRateLimiter({ requestsPerSecond: 1, burst: 1, clock: time.now });
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    expect(limiter.take('b').allowed).toBe(true);
  });

  it('never fills a bucket beyond the burst, however long the pause', () => {
    const time = clock();
    const limiter = createRateLimiter({ requestsPerSecond: 10, burst: 2, clock: time.now });
    limiter.take('a');
    time.advance(3_600_000);
    expect(limiter.take('a').headers['ratelimit-remaining']).toBe('1');
  });

  it('rounds Retry-After up to whole seconds at slow rates', () => {
    const time = clock();
    const limiter = createRateLimiter({ requestsPerSecond: 0.1, burst: 1, clock: time.now });
    limiter.take('a');
    expect(limiter.take('a').retryAfter).toBe(10);
  });

  it('tolerates a clock that goes backwards', () => {
    const time = clock(10_000);
    const limiter = createRateLimiter({ requestsPerSecond: 1, burst: 1, clock: time.now });
    limiter.take('a');
    time.advance(-5_000);
    expect(limiter.take('a').allowed).toBe(false);
  });

  it('drops full buckets once it tracks too many tenants, keeping the state of busy ones', () => {
    const time = clock();
    const limiter = createRateLimiter({ requestsPerSecond: 1, burst: 2, clock: time.now, maxTracked: 3 });
    limiter.take('idle-1');
    limiter.take('idle-2');
    time.advance(1000); // both idle buckets are full again
    limiter.take('busy');
    limiter.take('busy');
    limiter.take('busy');
    expect(limiter.size()).toBe(3);
    limiter.take('new');
    expect(limiter.size()).toBe(2); // busy and new
    expect(limiter.take('busy').allowed).toBe(false);
  });

  it('is off with Infinity', () => {
    const limiter = createRateLimiter({ requestsPerSecond: Number.POSITIVE_INFINITY, burst: 1 });
    for (let i = 0; i < 1000; i++) expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').headers).toEqual({});
  });
});

import { describe, expect, it } from 'vitest';
import { chunksOf, firstTries, isChunkData } from '../../src/bullmq/chunks.js';
import { fleetKeys } from '../../src/bullmq/connection.js';

describe('chunksOf', () => {
  const emails = ['a@x.test', 'b@y.test', 'c@x.test', 'd@Y.test', 'e@z.test', 'f@x.test', 'nodomain'];

  it('keeps a domain together, bounds the size, and covers every position once', () => {
    const chunks = chunksOf('job', firstTries(10, emails), 2);
    expect(chunks.every((chunk) => chunk.positions.length <= 2 && chunk.job === 'job')).toBe(true);
    // Domain-sorted chunks [nodomain a] [c f] [b d] [e], spread with a stride of 2 (√4).
    expect(chunks.map((chunk) => chunk.emails)).toEqual([
      ['nodomain', 'a@x.test'],
      ['b@y.test', 'd@Y.test'],
      ['c@x.test', 'f@x.test'],
      ['e@z.test'],
    ]);
    expect(chunks.flatMap((chunk) => chunk.positions).sort((a, b) => a - b)).toEqual([
      10, 11, 12, 13, 14, 15, 16,
    ]);
    for (const chunk of chunks) {
      for (const [i, position] of chunk.positions.entries())
        expect(chunk.emails[i]).toBe(emails[position - 10]);
    }
  });

  it('spreads a domain’s chunks over the queue, so that a worker’s first chunks span many domains', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `u${i}@d${Math.floor(i / 100)}.test`); // 10 domains
    const chunks = chunksOf('job', firstTries(0, many), 20); // 50 chunks, 5 per domain
    const domains = (from: number, count: number) =>
      new Set(chunks.slice(from, from + count).map((chunk) => chunk.emails[0]!.split('@')[1])).size;
    expect(domains(0, 8)).toBeGreaterThanOrEqual(7); // unspread, 8 chunks would hold 2 domains
    expect(domains(8, 8)).toBeGreaterThanOrEqual(7);
    expect(chunks.flatMap((chunk) => chunk.positions).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 1000 }, (_, i) => i),
    );
  });

  it('cuts the same items into the same chunks (their queue ids match across API nodes)', () => {
    expect(chunksOf('job', firstTries(0, emails), 3)).toEqual(chunksOf('job', firstTries(0, emails), 3));
  });

  it('carries each position’s try', () => {
    const [chunk] = chunksOf('job', [{ position: 4, email: 'a@x.test', attempt: 2 }], 10);
    expect(chunk).toEqual({ job: 'job', positions: [4], emails: ['a@x.test'], attempts: [2] });
    expect(isChunkData(chunk)).toBe(true);
    expect(isChunkData({ job: 'job', positions: [1], emails: [], attempts: [0] })).toBe(false);
  });
});

describe('fleetKeys', () => {
  it('reads a redis URL and names the keys under the prefix', () => {
    const keys = fleetKeys({ connection: 'redis://user:p%40ss@10.0.0.5:6380/2', prefix: 'acme' });
    expect(keys.redis).toMatchObject({
      host: '10.0.0.5',
      port: 6380,
      username: 'user',
      password: 'p@ss',
      db: 2,
    });
    expect(keys.redis.maxRetriesPerRequest).toBeNull();
    expect(keys.events).toBe('acme:fleet:events');
    expect(keys.retryQueue('w1')).toBe('verify-retry-w1');
    expect(fleetKeys({ connection: 'rediss://cache' }).redis).toMatchObject({
      host: 'cache',
      port: 6379,
      tls: {},
    });
  });

  it('refuses what is not a Redis URL or a valid prefix, naming the option', () => {
    expect(() => fleetKeys({ connection: 'http://x' })).toThrow(/connection must be a redis/);
    expect(() => fleetKeys({ connection: 42 as never })).toThrow(/connection/);
    expect(() => fleetKeys({ connection: 'redis://x', prefix: 'a:b' })).toThrow(/prefix must be/);
  });
});

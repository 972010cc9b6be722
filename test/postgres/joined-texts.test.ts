/**
 * A commit's columns (`resultColumnsInSlices`: positions, statuses and result texts, built slice by slice between
 * event-loop turns) are the very texts that one join of each makes, across slice boundaries and for results that
 * share one object (duplicates of an address); stored texts parsed in slices (`parsedInSlices`) give each position
 * its result, in order.
 */
import { describe, expect, it } from 'vitest';
import { parsedInSlices, resultColumnsInSlices, texts } from '../../src/postgres/rows.js';
import type { VerificationResult } from '../../src/result.js';
import { result } from '../../src/testing/job-store-fixtures.js';

describe('resultColumnsInSlices', () => {
  it('joins positions, statuses and texts as one join each would, for one slice, several and none', async () => {
    const shared = result('shared@example.com', { reason: 'a "quoted"\nreason' });
    for (const count of [0, 1, 255, 256, 257, 1000]) {
      const results: VerificationResult[] = [];
      const positions: number[] = [];
      for (let i = 0; i < count; i++) {
        results.push(
          i % 7 === 0 ? shared : result(`user${i}@example.com`, { status: i % 3 ? 'valid' : 'unknown' }),
        );
        positions.push(count - i);
      }
      const { list, statuses, joined } = await resultColumnsInSlices(positions, results, 0);
      expect(list).toBe(positions.join(','));
      expect(statuses).toBe(results.map((r) => r.status).join(','));
      expect(joined).toBe(texts(results).join('\n'));
      expect(joined === '' ? [] : joined.split('\n').map((line) => JSON.parse(line))).toEqual(
        JSON.parse(JSON.stringify(results)),
      );
    }
  });
});

describe('parsedInSlices', () => {
  it('parses each position its text, undefined where there is none, across slices', async () => {
    const byPosition = new Map<number, string>();
    for (let p = 0; p < 1000; p += 2) byPosition.set(p, JSON.stringify(result(`user${p}@example.com`)));
    const positions = [...Array.from({ length: 1000 }, (_, i) => 999 - i), 4, 4];
    const found = await parsedInSlices(positions, byPosition, 0);
    expect(found).toHaveLength(positions.length);
    positions.forEach((position, i) => {
      if (position % 2 === 1) expect(found[i]).toBeUndefined();
      else expect(found[i]).toEqual(result(`user${position}@example.com`));
    });
    expect(found.at(-1)).toBe(found.at(-2)); // a position asked twice is parsed once
  });
});

/**
 * `joinedTextsInSlices` (a commit's result column, serialised slice by slice between event-loop turns) writes the
 * very text that the results' JSON texts joined by `\n` in one call make, across slice boundaries and for results
 * that share one object (duplicates of an address).
 */
import { describe, expect, it } from 'vitest';
import { joinedTextsInSlices, texts } from '../../src/postgres/rows.js';
import type { VerificationResult } from '../../src/result.js';
import { result } from '../../src/testing/job-store-fixtures.js';

describe('joinedTextsInSlices', () => {
  it('writes the texts joined by line feeds, for one slice, several and none', async () => {
    const shared = result('shared@example.com', { reason: 'a "quoted"\nreason' });
    for (const count of [0, 1, 255, 256, 257, 1000]) {
      const results: VerificationResult[] = [];
      for (let i = 0; i < count; i++) results.push(i % 7 === 0 ? shared : result(`user${i}@example.com`));
      const joined = await joinedTextsInSlices(results, 0);
      expect(joined).toBe(texts(results).join('\n'));
      expect(joined === '' ? [] : joined.split('\n').map((line) => JSON.parse(line))).toEqual(
        JSON.parse(JSON.stringify(results)),
      );
    }
  });
});

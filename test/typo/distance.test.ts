import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { osaDistance } from '../../src/typo/distance.js';

/** Textbook optimal-string-alignment distance, full matrix, no bound: the reference. */
function reference(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = value;
    }
  }
  return d[a.length]![b.length]!;
}

describe('osaDistance', () => {
  it('counts a swap of adjacent characters as one edit', () => {
    expect(osaDistance('gmial.com', 'gmail.com')).toBe(1);
    expect(osaDistance('gmailc.om', 'gmail.com')).toBe(1);
    expect(osaDistance('ab', 'ba')).toBe(1);
  });

  it('counts insertions, deletions and substitutions', () => {
    expect(osaDistance('', '')).toBe(0);
    expect(osaDistance('', 'abc')).toBe(3);
    expect(osaDistance('abc', '')).toBe(3);
    expect(osaDistance('gmal.com', 'gmail.com')).toBe(1);
    expect(osaDistance('gmaill.com', 'gmail.com')).toBe(1);
    expect(osaDistance('gnail.con', 'gmail.com')).toBe(2);
    expect(osaDistance('kitten', 'sitting')).toBe(3);
  });

  it('is the restricted distance: a substring is not edited twice', () => {
    // Unrestricted Damerau-Levenshtein gives 2 (ca -> ac -> abc); optimal string alignment gives 3.
    expect(osaDistance('ca', 'abc')).toBe(3);
  });

  it('stops at the bound and reports bound + 1', () => {
    expect(osaDistance('hotmail.com', 'yahoo.com', 2)).toBe(3);
    expect(osaDistance('abcdef', 'a', 2)).toBe(3);
    expect(osaDistance('', 'abcdef', 2)).toBe(3);
    expect(osaDistance('gmial.com', 'gmail.com', 1)).toBe(1);
    expect(osaDistance('same', 'same', 0)).toBe(0);
    expect(osaDistance('same', 'sane', 0)).toBe(1);
  });

  it('handles strings longer than its reusable buffers', () => {
    const long = 'a'.repeat(1_000);
    expect(osaDistance(long, `${long}b`)).toBe(1);
    expect(osaDistance(long, `b${long.slice(1)}`, 3)).toBe(1);
    expect(osaDistance('gmial.com', 'gmail.com')).toBe(1);
  });

  it('compares by UTF-16 code unit, so unicode and lone surrogates never break it', () => {
    expect(osaDistance('bücher.de', 'bucher.de')).toBe(1);
    expect(osaDistance('\ud800x', 'x\ud800')).toBe(1);
    expect(osaDistance('😀', '😁')).toBe(1);
  });

  it('agrees with the reference implementation, bounded or not', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '.', 'm'), maxLength: 9 });
    fc.assert(
      fc.property(text, text, fc.integer({ min: 0, max: 4 }), (a, b, max) => {
        const exact = reference(a, b);
        expect(osaDistance(a, b)).toBe(exact);
        expect(osaDistance(a, b, max)).toBe(Math.min(exact, max + 1));
        expect(osaDistance(b, a)).toBe(exact);
      }),
      { numRuns: 2_000 },
    );
  });
});

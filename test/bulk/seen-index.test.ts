import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactSeenIndex, hashedSeenIndex } from '../../src/bulk/seen-index.js';

describe('hashedSeenIndex', () => {
  it('answers like the exact index, through growth and clear', () => {
    const hashed = hashedSeenIndex();
    const exact = exactSeenIndex();
    for (let i = 0; i < 200_000; i++) {
      const email = `user${i % 150_000}@d${i % 97}.example`;
      if (exact.get(email) === undefined) {
        exact.set(email, i);
        hashed.set(email, i);
      }
    }
    for (let i = 0; i < 200_000; i += 7) {
      const email = `user${i % 150_000}@d${i % 97}.example`;
      expect(hashed.get(email)).toBe(exact.get(email));
    }
    expect(hashed.get('never@seen.example')).toBeUndefined();
    hashed.clear();
    expect(hashed.get('user1@d1.example')).toBeUndefined();
  });

  it('tells apart any distinct strings (unicode, empty, long) as the exact index does', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: 'grapheme', maxLength: 80 }), { maxLength: 300 }),
        (texts) => {
          const hashed = hashedSeenIndex();
          for (const [i, text] of texts.entries()) hashed.set(text, i);
          for (const [i, text] of texts.entries()) expect(hashed.get(text)).toBe(i);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('claim and delete', () => {
  it('claim answers the first position or records this one; delete forgets exactly one address (both indexes)', () => {
    for (const index of [exactSeenIndex(), hashedSeenIndex()]) {
      const emails = Array.from({ length: 5000 }, (_, i) => `user${i}@d${i % 13}.example`);
      for (const [i, email] of emails.entries()) expect(index.claim(email, i)).toBeUndefined();
      for (const [i, email] of emails.entries()) expect(index.claim(email, i + 10_000)).toBe(i);
      // Deleting every third address (backward shifts through the hashed table's clusters) keeps the others.
      for (let i = 0; i < emails.length; i += 3) index.delete(emails[i]!);
      index.delete('never@seen.example');
      for (const [i, email] of emails.entries()) expect(index.get(email)).toBe(i % 3 === 0 ? undefined : i);
      expect(index.claim(emails[0]!, 77)).toBeUndefined();
      expect(index.get(emails[0]!)).toBe(77);
    }
  });

  it('deletes as a Map does under any sequence of claims and deletes (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 60 })), { maxLength: 400 }),
        (steps) => {
          const hashed = hashedSeenIndex();
          const exact = new Map<string, number>();
          for (const [i, [claim, n]] of steps.entries()) {
            const email = `a${n}@x.example`;
            if (claim) {
              const had = exact.get(email);
              if (had === undefined) exact.set(email, i);
              expect(hashed.claim(email, i)).toBe(had);
            } else {
              exact.delete(email);
              hashed.delete(email);
            }
          }
          for (let n = 0; n <= 60; n++)
            expect(hashed.get(`a${n}@x.example`)).toBe(exact.get(`a${n}@x.example`));
        },
      ),
      { numRuns: 200 },
    );
  });
});

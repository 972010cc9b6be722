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

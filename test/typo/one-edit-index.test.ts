import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { osaDistance } from '../../src/typo/distance.js';
import { oneEditIndex } from '../../src/typo/one-edit-index.js';

const always = (): boolean => true;

describe('oneEditIndex', () => {
  const index = oneEditIndex(['gazeta.pl', 'sapo.pt', 'walla.co.il', 'inbox.lv', 'gazeta.pk']);

  it('finds a target one insertion, deletion, substitution or swap away', () => {
    expect(index.closest('gazeta.p', always)).toBe('gazeta.pl');
    expect(index.closest('gazzeta.pl', always)).toBe('gazeta.pl');
    expect(index.closest('gazeya.pl', always)).toBe('gazeta.pl');
    expect(index.closest('gaezta.pl', always)).toBe('gazeta.pl');
    expect(index.closest('sapo.tp', always)).toBe('sapo.pt');
    expect(index.closest('wala.co.il', always)).toBe('walla.co.il');
  });

  it('gives the earliest target on a tie, and lets `accept` pass over one', () => {
    expect(index.closest('gazeta.px', always)).toBe('gazeta.pl');
    expect(index.closest('gazeta.px', (domain) => domain !== 'gazeta.pl')).toBe('gazeta.pk');
    expect(index.closest('gazeta.pl', always)).toBe('gazeta.pl');
  });

  it('finds nothing two edits away or in an empty index', () => {
    expect(index.closest('gzaeta.pm', always)).toBeNull();
    expect(index.closest('inbx.lt', always)).toBeNull();
    expect(index.closest('', always)).toBeNull();
    expect(oneEditIndex([]).closest('gazeta.pl', always)).toBeNull();
    expect(index.closest('x'.repeat(300), always)).toBeNull();
  });

  it('agrees with the distance on random strings', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom('a', 'b', 'c', '.') }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.string({ maxLength: 9, unit: fc.constantFrom('a', 'b', 'c', '.') }),
        (targets, text) => {
          const expected = targets.find((target) => osaDistance(text, target, 1) <= 1) ?? null;
          expect(oneEditIndex(targets).closest(text, always)).toBe(expected);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

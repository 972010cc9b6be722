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

  it('finds only targets within one edit, and finds one for any edit but a swap of the last dot', () => {
    const label = (min: number, max: number) =>
      fc.string({ minLength: min, maxLength: max, unit: fc.constantFrom('a', 'b', 'c') });
    const domain = fc.tuple(label(1, 5), label(2, 3)).map(([name, suffix]) => `${name}.${suffix}`);
    fc.assert(
      fc.property(
        fc.array(domain, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.nat(),
        fc.constantFrom('insert', 'delete', 'substitute', 'swap'),
        fc.constantFrom('a', 'b', 'c', 'd'),
        (targets, pick, at, edit, letter) => {
          const index = oneEditIndex(targets);
          const target = targets[pick % targets.length]!;
          const i = at % target.length;
          const lastDot = target.lastIndexOf('.');
          const text =
            edit === 'insert'
              ? target.slice(0, i) + letter + target.slice(i)
              : edit === 'delete'
                ? target.slice(0, i) + target.slice(i + 1)
                : edit === 'substitute'
                  ? target.slice(0, i) + letter + target.slice(i + 1)
                  : i + 1 < target.length && i !== lastDot
                    ? target.slice(0, i) + target[i + 1] + target[i] + target.slice(i + 2)
                    : target;
          const found = index.closest(text, always);
          if (found !== null) expect(osaDistance(text, found, 1)).toBeLessThanOrEqual(1);
          // An edit that leaves a dot after the first character is found: this target or an earlier one.
          if (text.indexOf('.') >= 1 && text.length >= 3) {
            expect(found).not.toBeNull();
            expect(targets.indexOf(found!)).toBeLessThanOrEqual(targets.indexOf(target));
          }
        },
      ),
      { numRuns: 3_000 },
    );
  });
});

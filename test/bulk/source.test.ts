import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeRow,
  encodedRowLength,
  encodeRow,
  encodeSource,
  MAX_SOURCE_ROW_CHARS,
  sourceRowProblem,
} from '../../src/bulk/source.js';

/** Cells drawn mostly from the characters that change the encoding: quotes, commas, CR, LF. */
const cell = fc.oneof(
  fc.string(),
  fc.string({ unit: fc.constantFrom('"', ',', '\r', '\n', 'a', 'é', '😀') }),
);

describe('encodedRowLength', () => {
  it('is the length of the line encodeRow builds, for any cells', () => {
    fc.assert(
      fc.property(fc.array(cell, { maxLength: 8 }), (cells) => {
        expect(encodedRowLength(cells)).toBe(encodeRow(cells).length);
      }),
      { numRuns: 2000 },
    );
  });

  it('counts the quotes and doubled quotes of quoted cells', () => {
    expect(encodedRowLength(['a,b', 'say "hi"', ''])).toBe(19);
    expect(encodedRowLength(['"'])).toBe(4); // """"
    expect(encodedRowLength([])).toBe(0);
    expect(encodedRowLength(['', ''])).toBe(1);
  });
});

describe('sourceRowProblem', () => {
  it('accepts a row of exactly the longest length and refuses one code unit more, quotes counted', () => {
    // One quoted cell: 2 outer quotes + the doubled quote + the rest.
    const exact = `"${'x'.repeat(MAX_SOURCE_ROW_CHARS - 4)}`;
    expect(encodeRow([exact])).toHaveLength(MAX_SOURCE_ROW_CHARS);
    expect(sourceRowProblem([exact], 1)).toBeUndefined();
    expect(sourceRowProblem([`${exact}x`], 1)).toBe(
      `is ${MAX_SOURCE_ROW_CHARS + 1} characters as a CSV line, at most ${MAX_SOURCE_ROW_CHARS}`,
    );
  });

  it('refuses rows that are not arrays of strings of the header width', () => {
    expect(sourceRowProblem('a,b', 2)).toBe('must be an array of strings');
    expect(sourceRowProblem(['a', 1], 2)).toBe('must be an array of strings');
    expect(sourceRowProblem(null, 1)).toBe('must be an array of strings');
    expect(sourceRowProblem(['a'], 2)).toBe('has 1 cells, the header has 2');
    expect(sourceRowProblem(['a', 'b'], 2)).toBeUndefined();
  });

  it('agrees with encodeSource, which keeps the rows it accepts as lines that decode to the same cells', () => {
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 2, maxLength: 2 }), { maxLength: 5 }), (rows) => {
        const encoded = encodeSource({ columns: ['email', 'name'], emailColumn: 0, rows }, rows.length);
        if ('problem' in encoded) throw new Error(encoded.problem);
        expect(encoded.rows.map(decodeRow)).toEqual(rows);
        for (const row of rows) expect(sourceRowProblem(row, 2)).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });

  it('names the row encodeSource refuses, with the same problem', () => {
    const rows = [
      ['a', 'b'],
      ['a', 'x'.repeat(MAX_SOURCE_ROW_CHARS)],
    ];
    expect(encodeSource({ columns: ['email', 'name'], emailColumn: 0, rows }, 2)).toEqual({
      field: 'source.rows[1]',
      problem: sourceRowProblem(rows[1], 2),
    });
  });
});

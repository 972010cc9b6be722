import { describe, expect, it } from 'vitest';
import { nfkcCasefold, uts46Map } from '../../src/syntax/uts46.js';

describe('uts46Map', () => {
  it('lower-cases, maps full stops and applies NFC', () => {
    expect(uts46Map('Bücher。DE')).toBe('bücher.de');
    expect(uts46Map('a\uff0eb\uff61c\u3002d')).toBe('a.b.c.d');
    expect(uts46Map('Bu\u0308cher')).toBe('bücher');
  });

  it('maps compatibility forms to their plain forms', () => {
    expect(uts46Map('ｅｘａｍｐｌｅ')).toBe('example');
    expect(uts46Map('ex™')).toBe('extm');
    expect(uts46Map('Ⅻ')).toBe('xii');
    expect(uts46Map('\uff0d')).toBe('-');
  });

  it('keeps the deviation characters (non-transitional processing)', () => {
    expect(uts46Map('faß')).toBe('faß');
    expect(uts46Map('\u1e9e')).toBe('ß'); // CAPITAL SHARP S (UTS #46 15.1)
    expect(uts46Map('ς')).toBe('ς');
  });

  it('folds case fully, as Unicode case folding does', () => {
    expect(uts46Map('\u1f88')).toBe('\u1f00\u03b9'); // capital alpha with psili and prosgegrammeni
    expect(uts46Map('\uab70')).toBe('\u13a0'); // Cherokee folds to upper case
    expect(uts46Map('\u0131')).toBe('\u0131'); // dotless i folds to itself
    expect(uts46Map('İ')).toBe('i\u0307');
  });

  it('returns null when a code point maps to ASCII a host name cannot hold', () => {
    expect(uts46Map('⒈a')).toBeNull(); // '1.'
    expect(uts46Map('\u037e')).toBeNull(); // ';'
    expect(uts46Map('\u2474')).toBeNull(); // '(1)'
    expect(uts46Map('\u00a0')).toBeNull(); // ' '
    expect(uts46Map('\ufe52')).toBeNull(); // SMALL FULL STOP is not a label separator
  });
});

describe('nfkcCasefold', () => {
  it('is the identity on stable code points', () => {
    expect(nfkcCasefold('é')).toBe('é');
    expect(nfkcCasefold('中')).toBe('中');
  });

  it('changes unstable code points', () => {
    expect(nfkcCasefold('É')).toBe('é');
    expect(nfkcCasefold('ﬀ')).toBe('ff');
  });
});

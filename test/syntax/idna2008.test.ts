import { describe, expect, it } from 'vitest';
import { isValidIdnaLabel } from '../../src/syntax/idna2008.js';

/** A label made of `char` between two Latin letters that no mark composes with, so that only its class decides. */
function around(char: string): string {
  return `q${char}z`;
}

describe('isValidIdnaLabel: code point classes (RFC 5892)', () => {
  it.each([
    ['LATIN SMALL LETTER E WITH ACUTE', '\u00e9'],
    ['LATIN SMALL LETTER SHARP S (exception, PVALID)', '\u00df'],
    ['GREEK SMALL LETTER FINAL SIGMA (exception, PVALID)', '\u03c2'],
    ['IDEOGRAPHIC NUMBER ZERO (exception, PVALID)', '\u3007'],
    ['LATIN SMALL LETTER DOTLESS I (folds to itself)', '\u0131'],
    ['CHEROKEE LETTER A (upper case is the folded form)', '\u13a0'],
    ['DEVANAGARI DIGIT ONE', '\u0967'],
    ['COMBINING ACUTE ACCENT after a letter', '\u0301'],
  ])('accepts %s', (_name, char) => {
    expect(isValidIdnaLabel(around(char))).toBe(true);
  });

  it.each([
    ['LATIN CAPITAL LETTER A (unstable under case folding)', 'A'],
    ['LATIN CAPITAL LETTER E WITH ACUTE', '\u00c9'],
    ['ARABIC TATWEEL (exception, DISALLOWED)', '\u0640'],
    ['VERTICAL KANA REPEAT MARK (exception, DISALLOWED)', '\u3031'],
    ['COMBINING GREEK YPOGEGRAMMENI (folds to iota)', '\u0345'],
    ['CYRILLIC SMALL LETTER ROUNDED VE (folds to ve)', '\u1c80'],
    ['GREEK SMALL LETTER ALPHA WITH PSILI AND YPOGEGRAMMENI (full folding)', '\u1f80'],
    ['CHEROKEE SMALL LETTER A (folds to upper case)', '\uab70'],
    ['ROMAN NUMERAL ONE (NFKC changes it)', '\u2160'],
    ['SNOWMAN (a symbol)', '\u2603'],
    ['HANGUL CHOSEONG KIYEOK (old jamo)', '\u1100'],
    ['COMBINING LEFT HARPOON ABOVE (ignorable block)', '\u20d0'],
    ['ZERO WIDTH NON-JOINER (joiners are refused)', '\u200c'],
    ['an unassigned code point', '\u0378'],
    ['a private-use code point', '\ue000'],
    ['a full stop', '.'],
    ['an underscore', '_'],
  ])('rejects %s', (_name, char) => {
    expect(isValidIdnaLabel(around(char))).toBe(false);
  });
});

describe('isValidIdnaLabel: label rules (RFC 5891 5.4)', () => {
  it('requires NFC', () => {
    expect(isValidIdnaLabel('e\u0301')).toBe(false);
    expect(isValidIdnaLabel('\u00e9')).toBe(true);
  });

  it('rejects hyphens at the ends and in both the 3rd and 4th position', () => {
    expect(isValidIdnaLabel('-ü')).toBe(false);
    expect(isValidIdnaLabel('ü-')).toBe(false);
    expect(isValidIdnaLabel('ab--ü')).toBe(false);
    expect(isValidIdnaLabel('a-b-ü')).toBe(true);
  });

  it('rejects a leading combining mark', () => {
    expect(isValidIdnaLabel('\u0301a')).toBe(false);
  });

  it('rejects an empty label', () => {
    expect(isValidIdnaLabel('')).toBe(false);
  });
});

describe('isValidIdnaLabel: CONTEXTO rules (RFC 5892 Appendix A)', () => {
  it('allows MIDDLE DOT only between two l', () => {
    expect(isValidIdnaLabel('l\u00b7l')).toBe(true);
    expect(isValidIdnaLabel('a\u00b7l')).toBe(false);
    expect(isValidIdnaLabel('l\u00b7')).toBe(false);
  });

  it('allows GREEK LOWER NUMERAL SIGN only before Greek', () => {
    expect(isValidIdnaLabel('\u0375\u03b1')).toBe(true);
    expect(isValidIdnaLabel('\u0375a')).toBe(false);
  });

  it('allows HEBREW GERESH only after Hebrew', () => {
    expect(isValidIdnaLabel('\u05d0\u05f3')).toBe(true);
    expect(isValidIdnaLabel('\u05f3\u05d0')).toBe(false);
  });

  it('allows KATAKANA MIDDLE DOT only in a label with Hiragana, Katakana or Han', () => {
    expect(isValidIdnaLabel('\u30a2\u30fb\u30a2')).toBe(true);
    expect(isValidIdnaLabel('a\u30fbb')).toBe(false);
  });

  it('forbids mixing Arabic-Indic and extended Arabic-Indic digits', () => {
    expect(isValidIdnaLabel('\u0628\u0660\u0661')).toBe(true);
    expect(isValidIdnaLabel('\u0628\u06f0\u06f1')).toBe(true);
    expect(isValidIdnaLabel('\u0628\u0660\u06f0')).toBe(false);
  });
});

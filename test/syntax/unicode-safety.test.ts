import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasUnsafeCharacter } from '../../src/syntax/unicode-safety.js';

describe('hasUnsafeCharacter', () => {
  it('passes letters, digits, punctuation, symbols and non-leading marks', () => {
    expect(hasUnsafeCharacter("jürgen.o'brien+日本-١٢٣★")).toBe(false);
    expect(hasUnsafeCharacter('s\u0323\u0307')).toBe(false);
  });

  it.each([
    ['NUL', '\0'],
    ['CR', '\r'],
    ['LF', '\n'],
    ['TAB', '\t'],
    ['DEL', '\x7f'],
    ['C1 control', '\u0085'],
    ['zero-width space', '\u200b'],
    ['zero-width non-joiner', '\u200c'],
    ['left-to-right mark', '\u200e'],
    ['right-to-left override', '\u202e'],
    ['first strong isolate', '\u2068'],
    ['byte order mark', '\ufeff'],
    ['space', ' '],
    ['no-break space', '\u00a0'],
    ['line separator', '\u2028'],
    ['paragraph separator', '\u2029'],
    ['private use', '\ue000'],
    ['supplementary private use', '\u{10fdef}'],
    ['unassigned', '\u0378'],
    ['noncharacter', '\ufffe'],
    ['lone high surrogate', '\ud800'],
    ['lone low surrogate', '\udc00'],
    ['combining grapheme joiner', '\u034f'],
    ['Hangul filler', '\u3164'],
    ['variation selector', '\ufe0f'],
  ])('finds a %s', (_name, char) => {
    expect(hasUnsafeCharacter(`a${char}b`)).toBe(true);
  });

  it('finds a combining mark in first position only', () => {
    expect(hasUnsafeCharacter('\u0300a')).toBe(true);
    expect(hasUnsafeCharacter('a\u0300')).toBe(false);
  });

  it('allows the ASCII space, and no other space, when asked', () => {
    expect(hasUnsafeCharacter('a b', true)).toBe(false);
    expect(hasUnsafeCharacter('a\u3000b', true)).toBe(true);
    expect(hasUnsafeCharacter('a\u00a0b', true)).toBe(true);
    expect(hasUnsafeCharacter('a\tb', true)).toBe(true);
  });

  it('finds any C0 control, whatever surrounds it', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 0x1f }), fc.string(), (before, code, after) => {
        expect(hasUnsafeCharacter(before + String.fromCharCode(code) + after, true)).toBe(true);
      }),
    );
  });
});

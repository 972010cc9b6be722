import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Length } from '../../src/syntax/limits.js';

describe('utf8Length', () => {
  it('counts 1, 2, 3 and 4 bytes per code point', () => {
    expect(utf8Length('')).toBe(0);
    expect(utf8Length('abc')).toBe(3);
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('葉')).toBe(3);
    expect(utf8Length('😆')).toBe(4);
  });

  it('counts a lone surrogate as the 3 bytes of its replacement character', () => {
    expect(utf8Length('\ud800')).toBe(3);
    expect(utf8Length('a\udc00b')).toBe(5);
    expect(utf8Length('\ud800\ud800\udc00')).toBe(7);
  });

  it('agrees with TextEncoder on any string of UTF-16 code units', () => {
    const encoder = new TextEncoder();
    const units = fc.string({
      unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
    });
    fc.assert(
      fc.property(fc.oneof(units, fc.string({ unit: 'binary' })), (text) => {
        expect(utf8Length(text)).toBe(encoder.encode(text).length);
      }),
    );
  });

  it.each([
    ['empty', ''],
    ['ASCII', 'alice@example.com'],
    ['two-byte', 'jürgen@bücher.de'],
    ['three-byte', '用户@例子.广告'],
    ['astral (surrogate pairs)', '😀x😀@mail.test'],
    ['lone high surrogate at the end', 'a\ud83d'],
    ['lone high surrogate before ASCII', '\ud83dz'],
    ['lone low surrogate', '\ude00a'],
    ['two high surrogates then a low one', '\ud83d\ud83d\ude00'],
    ['U+FFFD', '\ufffd'],
    ['U+07FF / U+0800 boundary', '\u07ff\u0800'],
  ])('counts %s as TextEncoder would', (_, value) => {
    expect(utf8Length(value)).toBe(new TextEncoder().encode(value).byteLength);
  });
});

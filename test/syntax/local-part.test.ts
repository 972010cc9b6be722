import { describe, expect, it } from 'vitest';
import { parseLocalPart } from '../../src/syntax/local-part.js';

const defaults = {};
const quoted = { allowQuotedLocal: true };

describe('parseLocalPart: dot-atom', () => {
  it('accepts every atext character and keeps case', () => {
    expect(parseLocalPart("Az09!#$%&'*+-/=?^_`{|}~", defaults)).toEqual({
      local: "Az09!#$%&'*+-/=?^_`{|}~",
      smtpUtf8: false,
    });
    expect(parseLocalPart('John.Doe', defaults)).toEqual({ local: 'John.Doe', smtpUtf8: false });
  });

  it('rejects an empty local part', () => {
    expect(parseLocalPart('', defaults)).toBe('local_empty');
  });

  it.each(['.john', 'john.', 'jo..hn', '.'])('rejects misplaced dots in %j', (raw) => {
    expect(parseLocalPart(raw, defaults)).toBe('local_dot');
  });

  it.each([
    'jo hn',
    'jo(hn',
    'jo)hn',
    'jo,hn',
    'jo:hn',
    'jo;hn',
    'jo<hn',
    'jo>hn',
    'jo[hn',
    'jo\\hn',
    'jo"hn',
    '\x7f',
  ])('rejects the special or control character in %j', (raw) => {
    expect(parseLocalPart(raw, defaults)).toBe('local_invalid_character');
  });

  it('reports a bad character before a bad dot', () => {
    expect(parseLocalPart('.a b', defaults)).toBe('local_invalid_character');
  });

  it('limits the local part to 64 octets, counting UTF-8 bytes', () => {
    expect(parseLocalPart('a'.repeat(64), defaults)).toEqual({ local: 'a'.repeat(64), smtpUtf8: false });
    expect(parseLocalPart('a'.repeat(65), defaults)).toBe('local_too_long');
    expect(parseLocalPart('é'.repeat(32), defaults)).toMatchObject({ smtpUtf8: true }); // 64 bytes
    expect(parseLocalPart('é'.repeat(33), defaults)).toBe('local_too_long'); // 66 bytes, 33 characters
    expect(parseLocalPart('葉'.repeat(21), defaults)).toMatchObject({ smtpUtf8: true }); // 63 bytes
    expect(parseLocalPart('葉'.repeat(22), defaults)).toBe('local_too_long');
  });
});

describe('parseLocalPart: internationalized (RFC 6531)', () => {
  it('accepts non-ASCII and flags SMTPUTF8', () => {
    expect(parseLocalPart('伊昭傑', defaults)).toEqual({ local: '伊昭傑', smtpUtf8: true });
    expect(parseLocalPart('чебурашка.ящик', defaults)).toEqual({ local: 'чебурашка.ящик', smtpUtf8: true });
  });

  it('normalizes to NFC and keeps case', () => {
    expect(parseLocalPart('Jose\u0301', defaults)).toEqual({ local: 'José', smtpUtf8: true });
  });

  it('re-checks after NFC, which can produce forbidden ASCII', () => {
    expect(parseLocalPart('me.\u037e', defaults)).toBe('local_invalid_character'); // GREEK QUESTION MARK is ';'
    expect(parseLocalPart('john\u212a', defaults)).toEqual({ local: 'johnK', smtpUtf8: false }); // KELVIN SIGN
  });

  it('rejects non-ASCII when SMTPUTF8 is not allowed', () => {
    expect(parseLocalPart('jürgen', { allowSmtpUtf8: false })).toBe('local_unicode_not_allowed');
    expect(parseLocalPart('jurgen', { allowSmtpUtf8: false })).toEqual({ local: 'jurgen', smtpUtf8: false });
  });

  it.each([
    ['zero-width space', 'jo\u200bhn'],
    ['zero-width joiner', 'jo\u200dhn'],
    ['right-to-left override', 'jo\u202ehn'],
    ['soft hyphen', 'jo\u00adhn'],
    ['no-break space', 'jo\u00a0hn'],
    ['line separator', 'jo\u2028hn'],
    ['C1 control', 'jo\u009chn'],
    ['private use', 'jo\ue000hn'],
    ['unassigned', 'jo\u0378hn'],
    ['noncharacter', 'jo\ufdefhn'],
    ['lone surrogate', 'jo\ud800hn'],
    ['Hangul filler', 'jo\u3164hn'],
    ['variation selector', 'jo\ufe0fhn'],
    ['leading combining mark', '\u0301john'],
  ])('rejects a %s', (_name, raw) => {
    expect(parseLocalPart(raw, defaults)).toBe('local_unsafe_character');
  });

  it('accepts a combining mark after a base character', () => {
    expect(parseLocalPart('s\u0323\u0307', defaults)).toEqual({ local: '\u1e69', smtpUtf8: true });
  });
});

describe('parseLocalPart: quoted strings', () => {
  it('is refused unless allowed', () => {
    expect(parseLocalPart('"john doe"', defaults)).toBe('quoted_local_not_allowed');
    expect(parseLocalPart('"john"', defaults)).toBe('quoted_local_not_allowed');
  });

  it('drops unnecessary quoting and escapes', () => {
    expect(parseLocalPart('"john.doe"', quoted)).toEqual({ local: 'john.doe', smtpUtf8: false });
    expect(parseLocalPart('"\\a"', quoted)).toEqual({ local: 'a', smtpUtf8: false });
    expect(parseLocalPart('"jürgen"', quoted)).toEqual({ local: 'jürgen', smtpUtf8: true });
  });

  it('keeps the quotes that are needed, with minimal escaping', () => {
    expect(parseLocalPart('"john doe"', quoted)).toEqual({ local: '"john doe"', smtpUtf8: false });
    expect(parseLocalPart('"a\\"b"', quoted)).toEqual({ local: '"a\\"b"', smtpUtf8: false });
    expect(parseLocalPart('"a\\\\b"', quoted)).toEqual({ local: '"a\\\\b"', smtpUtf8: false });
    expect(parseLocalPart('"a@b"', quoted)).toEqual({ local: '"a@b"', smtpUtf8: false });
    expect(parseLocalPart('"a..b"', quoted)).toEqual({ local: '"a..b"', smtpUtf8: false });
  });

  it.each(['"john', '"john\\"', '"a"b', '"a"."b"', '"a""b"', '"a\\'])('rejects the malformed %j', (raw) => {
    expect(parseLocalPart(raw, quoted)).toBe('quoted_local_invalid');
  });

  it.each(['"a\tb"', '"a\\\0b"', '"\x7f"', '"\\\x07"'])(
    'rejects the control character in %j, escaped or not',
    (raw) => {
      expect(parseLocalPart(raw, quoted)).toBe('quoted_local_invalid');
    },
  );

  it('rejects an empty quoted string', () => {
    expect(parseLocalPart('""', quoted)).toBe('local_empty');
  });

  it('allows only the ASCII space among spaces', () => {
    expect(parseLocalPart('"a\u3000b"', quoted)).toBe('local_unsafe_character');
    expect(parseLocalPart('"a\u200bb"', quoted)).toBe('local_unsafe_character');
  });

  it('needs SMTPUTF8 for non-ASCII inside quotes', () => {
    expect(parseLocalPart('"λ λ"', { ...quoted, allowSmtpUtf8: false })).toBe('local_unicode_not_allowed');
    expect(parseLocalPart('"λ λ"', quoted)).toEqual({ local: '"λ λ"', smtpUtf8: true });
  });

  it('counts the quotes in the 64-octet limit', () => {
    expect(parseLocalPart(`"${'a'.repeat(61)} "`, quoted)).toMatchObject({ smtpUtf8: false }); // 64 with quotes
    expect(parseLocalPart(`"${'a'.repeat(62)} "`, quoted)).toBe('local_too_long');
  });
});

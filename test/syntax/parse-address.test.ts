import { describe, expect, it } from 'vitest';
import { SYNTAX_FAILURES } from '../../src/syntax/failures.js';
import { parseAddress } from '../../src/syntax/parse-address.js';

function reasonOf(input: string, options = {}): string {
  const result = parseAddress(input, options);
  return result.ok ? 'valid' : result.reason;
}

describe('parseAddress: canonical parts', () => {
  it('returns the parts of a plain address, domain lower-cased, local case kept', () => {
    expect(parseAddress('John.Doe@Example.COM')).toEqual({
      ok: true,
      user: 'John.Doe',
      domain: 'example.com',
      address: {
        local: 'John.Doe',
        domain: 'example.com',
        unicodeDomain: 'example.com',
        normalized: 'John.Doe@example.com',
        smtpUtf8: false,
        literalAddress: null,
      },
    });
  });

  it('normalizes an internationalized address', () => {
    const result = parseAddress('Jose\u0301@Bücher.Example.org');
    expect(result).toMatchObject({
      ok: true,
      address: {
        local: 'José',
        domain: 'xn--bcher-kva.example.org',
        unicodeDomain: 'bücher.example.org',
        normalized: 'José@xn--bcher-kva.example.org',
        smtpUtf8: true,
      },
    });
  });

  it('does not need SMTPUTF8 for an IDN domain with an ASCII local part', () => {
    expect(parseAddress('jeff@臺網中心.tw')).toMatchObject({ ok: true, address: { smtpUtf8: false } });
  });

  it('splits at the last @, so a quoted local part may hold one', () => {
    expect(parseAddress('"a@b"@example.com', { allowQuotedLocal: true })).toMatchObject({
      ok: true,
      address: { local: '"a@b"', normalized: '"a@b"@example.com' },
    });
    expect(reasonOf('a@b@example.com')).toBe('local_invalid_character');
  });
});

describe('parseAddress: options', () => {
  it('refuses address literals unless allowed, and sets literalAddress when allowed', () => {
    expect(reasonOf('user@[192.0.2.1]')).toBe('domain_literal_not_allowed');
    expect(parseAddress('user@[192.0.2.1]', { allowDomainLiteral: true })).toMatchObject({
      ok: true,
      domain: '[192.0.2.1]',
      address: { domain: '[192.0.2.1]', unicodeDomain: '[192.0.2.1]', literalAddress: '192.0.2.1' },
    });
    expect(parseAddress('user@[IPv6:2001:DB8::1]', { allowDomainLiteral: true })).toMatchObject({
      ok: true,
      address: { normalized: 'user@[IPv6:2001:db8::1]', literalAddress: '2001:db8::1' },
    });
    expect(reasonOf('user@[300.0.0.1]', { allowDomainLiteral: true })).toBe('domain_literal_invalid');
  });

  it('refuses quoted local parts unless allowed', () => {
    expect(reasonOf('"john doe"@example.com')).toBe('quoted_local_not_allowed');
    expect(reasonOf('"john doe"@example.com', { allowQuotedLocal: true })).toBe('valid');
  });

  it('refuses internationalized local parts when SMTPUTF8 is off, but not IDN domains', () => {
    expect(reasonOf('jürgen@example.com', { allowSmtpUtf8: false })).toBe('local_unicode_not_allowed');
    expect(reasonOf('jurgen@bücher.de', { allowSmtpUtf8: false })).toBe('valid');
  });

  it('accepts allowTlds as a set or an array', () => {
    expect(reasonOf('a@test')).toBe('domain_dotless');
    expect(reasonOf('a@test', { allowTlds: ['TEST'] })).toBe('valid');
    expect(reasonOf('a@x.test', { allowTlds: new Set(['test']) })).toBe('valid');
  });
});

describe('parseAddress: limits', () => {
  const local64 = 'a'.repeat(64);
  const domain189 = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`; // 189 octets

  it('accepts an address of exactly 254 octets', () => {
    const address = `${local64}@${domain189}`;
    expect(address).toHaveLength(254);
    expect(reasonOf(address)).toBe('valid');
  });

  it('rejects 255 octets', () => {
    expect(reasonOf(`${local64}@e${domain189}`)).toBe('too_long');
  });

  it('counts octets in every form: UTF-8 input, and the domain in ASCII and in Unicode', () => {
    const longLocal = 'é'.repeat(32); // 32 characters, 64 octets
    const domain = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(50)}.com`; // 182 octets
    expect(reasonOf(`${longLocal}@${domain}`)).toBe('valid'); // 64 + 1 + 182 = 247
    expect(reasonOf(`${longLocal}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`)).toBe(
      'too_long',
    );
    const cjk = '一剣囆嬩後揯桒沵焘畻秞繁芤蜇譪迍鐰颓'; // a 58-octet A-label
    const idn = `${cjk}.${cjk}.${cjk}.${cjk}.com`; // 79 characters, 239 octets in ASCII
    expect(reasonOf(`${'a'.repeat(14)}@${idn}`)).toBe('valid'); // 14 + 1 + 239
    expect(reasonOf(`${'a'.repeat(15)}@${idn}`)).toBe('too_long'); // 15 + 1 + 239
  });

  it('rejects huge input at once, without reading parts from it', () => {
    const huge = `${'a'.repeat(500_000)}@example.com`;
    expect(parseAddress(huge)).toEqual({ ok: false, reason: 'too_long', user: null, domain: null });
  });

  it('still reads the parts of moderately long input', () => {
    expect(parseAddress(`${'a'.repeat(300)}@Example.com`)).toEqual({
      ok: false,
      reason: 'too_long',
      user: 'a'.repeat(300),
      domain: 'example.com',
    });
  });
});

describe('parseAddress: what can never pass', () => {
  const everything = {
    allowSmtpUtf8: true,
    allowQuotedLocal: true,
    allowDomainLiteral: true,
    allowTlds: ['test'],
  };

  it.each([
    'a@example.com\r\n',
    '\r\na@example.com',
    'a\r@example.com',
    'a\n@example.com',
    'a\0@example.com',
    'a@exa\0mple.com',
    '"a\nb"@example.com',
    '"a\\\rb"@example.com',
    '"a\\\0b"@example.com',
    'a@[127.0.0.1]\n',
  ])('rejects CR, LF or NUL in %j, under any option', (input) => {
    expect(parseAddress(input).ok).toBe(false);
    expect(parseAddress(input, everything)).toMatchObject({ ok: false, reason: 'forbidden_character' });
  });

  it.each(['Jos\uFFFD@example.com', 'jose@b\uFFFDcher.de', '"a\uFFFDb"@example.com', '\uFFFD@\uFFFD.com'])(
    'rejects the replacement character (a broken decoding upstream) in %j, under any option',
    (input) => {
      expect(parseAddress(input)).toMatchObject({ ok: false, reason: 'replacement_character' });
      expect(parseAddress(input, everything)).toMatchObject({ ok: false, reason: 'replacement_character' });
    },
  );

  it.each([
    ['', 'empty'],
    ['example.com', 'no_at_sign'],
    ['@example.com', 'local_empty'],
    ['a@', 'domain_empty'],
    [' a@example.com', 'local_invalid_character'],
    ['a@example.com ', 'domain_invalid_character'],
    ['Name <a@example.com>', 'local_invalid_character'],
    ['a@example.com>', 'domain_invalid_character'],
    ['(comment)a@example.com', 'local_invalid_character'],
  ])('rejects %j (%s)', (input, reason) => {
    expect(reasonOf(input)).toBe(reason);
  });

  it('gives only reasons from the published list', () => {
    for (const input of ['', 'x', '@', 'a@', '@a', 'a@b', 'a@b.c', '"a"@b.com', 'a@[1.2.3.4]', 'a@-b.com']) {
      const result = parseAddress(input);
      if (!result.ok) expect(SYNTAX_FAILURES).toContain(result.reason);
    }
  });
});

describe('parseAddress: best-effort parts of an invalid address', () => {
  it('reads user and domain around the last @', () => {
    expect(parseAddress('john..doe@Example.COM')).toEqual({
      ok: false,
      reason: 'local_dot',
      user: 'john..doe',
      domain: 'example.com',
    });
    expect(parseAddress('john@-Example.com')).toMatchObject({ user: 'john', domain: '-example.com' });
  });

  it('converts a Unicode domain to ASCII when it can', () => {
    expect(parseAddress('jo hn@Bücher.de')).toMatchObject({ user: 'jo hn', domain: 'xn--bcher-kva.de' });
    expect(parseAddress('john@☃.com')).toMatchObject({
      reason: 'domain_idna_invalid',
      domain: 'xn--n3h.com',
    });
    expect(parseAddress('john@⒈x.com')).toMatchObject({ domain: null });
  });

  it('leaves out empty parts and parts with control characters', () => {
    expect(parseAddress('@example.com')).toMatchObject({ user: null, domain: 'example.com' });
    expect(parseAddress('john@')).toMatchObject({ user: 'john', domain: null });
    expect(parseAddress('jo\nhn@exa\rmple.com')).toMatchObject({ user: null, domain: null });
    expect(parseAddress('jo\u0085hn@example.com')).toMatchObject({ user: null, domain: 'example.com' });
    expect(parseAddress('no at sign')).toMatchObject({ user: null, domain: null });
  });
});

import { describe, expect, it } from 'vitest';
import { parseDomainName } from '../../src/syntax/domain.js';

function label(length: number, char = 'a'): string {
  return char.repeat(length);
}

describe('parseDomainName: host name syntax', () => {
  it('lower-cases an ASCII domain', () => {
    expect(parseDomainName('Mail.Example.COM')).toEqual({
      ascii: 'mail.example.com',
      unicode: 'mail.example.com',
    });
  });

  it('rejects an empty domain', () => {
    expect(parseDomainName('')).toBe('domain_empty');
  });

  it.each(['.example.com', 'example.com.', 'example..com', '.'])('rejects empty labels in %j', (raw) => {
    expect(parseDomainName(raw)).toBe('domain_dot');
  });

  it.each(['-example.com', 'example-.com', 'example.-com', 'example.com-'])(
    'rejects a hyphen at the edge of a label in %j',
    (raw) => {
      expect(parseDomainName(raw)).toBe('domain_hyphen');
    },
  );

  it('allows hyphens inside labels, and two hyphens anywhere but the 3rd and 4th position', () => {
    expect(parseDomainName('mason-dixon.com')).toMatchObject({ ascii: 'mason-dixon.com' });
    expect(parseDomainName('g--a.com')).toMatchObject({ ascii: 'g--a.com' });
    expect(parseDomainName('abc--d.com')).toMatchObject({ ascii: 'abc--d.com' });
  });

  it('reserves "--" in positions 3-4 for A-labels (RFC 5891 4.2.3.1)', () => {
    expect(parseDomainName('ab--cd.com')).toBe('domain_reserved_hyphens');
    expect(parseDomainName('YY--0.com')).toBe('domain_reserved_hyphens');
    expect(parseDomainName('yy\uff0d\uff0d0.com')).toBe('domain_reserved_hyphens');
  });

  it.each([
    'exa_mple.com',
    'exa mple.com',
    'example.com!',
    'ex/ample.com',
    'exa\tmple.com',
    'a@b.com',
    'a[1].com',
  ])('rejects the invalid character in %j', (raw) => {
    expect(parseDomainName(raw)).toBe('domain_invalid_character');
  });

  it('limits labels to 63 octets', () => {
    expect(parseDomainName(`${label(63)}.com`)).toMatchObject({ ascii: `${label(63)}.com` });
    expect(parseDomainName(`${label(64)}.com`)).toBe('label_too_long');
  });

  it('limits the domain to 253 octets', () => {
    const domain253 = `${label(63)}.${label(63)}.${label(63)}.${label(57)}.com`;
    expect(domain253).toHaveLength(253);
    expect(parseDomainName(domain253)).toMatchObject({ ascii: domain253 });
    expect(parseDomainName(`${label(63)}.${label(63)}.${label(63)}.${label(58)}.com`)).toBe(
      'domain_too_long',
    );
  });
});

describe('parseDomainName: deliverable names', () => {
  it('rejects dotless domains', () => {
    expect(parseDomainName('localhost')).toBe('domain_dotless');
    expect(parseDomainName('com')).toBe('domain_dotless');
    expect(parseDomainName('xn--p1ai')).toBe('domain_dotless');
  });

  it.each(['example.123', '123.456', 'bad.tld-2', 'a.b1', 'a.b', '1.2.3.4'])(
    'rejects the invalid TLD in %j',
    (raw) => {
      expect(parseDomainName(raw)).toBe('domain_invalid_tld');
    },
  );

  it('accepts numeric labels below the TLD and unknown TLDs', () => {
    expect(parseDomainName('123.com')).toMatchObject({ ascii: '123.com' });
    expect(parseDomainName('example.tld')).toMatchObject({ ascii: 'example.tld' });
  });

  it.each([
    'x.test',
    'x.localhost',
    'x.invalid',
    'x.example',
    'x.local',
    'x.onion',
    'x.alt',
    'x.internal',
    'x.arpa',
    'printer.home.arpa',
    '1.0.0.127.in-addr.arpa',
    'x.corp',
    'x.home',
    'x.mail',
    'deep.sub.TEST',
  ])('rejects the special-use name %j', (raw) => {
    expect(parseDomainName(raw)).toBe('domain_special_use');
  });

  it('accepts the registered example.com domains (their null MX is a DNS answer)', () => {
    expect(parseDomainName('example.com')).toMatchObject({ ascii: 'example.com' });
    expect(parseDomainName('example.org')).toMatchObject({ ascii: 'example.org' });
    expect(parseDomainName('mail.example.net')).toMatchObject({ ascii: 'mail.example.net' });
  });

  it('accepts special-use and dotless names the caller allows, and only within them', () => {
    expect(parseDomainName('test', { allowTlds: ['test'] })).toMatchObject({ ascii: 'test' });
    expect(parseDomainName('mx.corp.test', { allowTlds: new Set(['test']) })).toMatchObject({
      ascii: 'mx.corp.test',
    });
    expect(parseDomainName('localhost', { allowTlds: ['.LocalHost'] })).toMatchObject({ ascii: 'localhost' });
    expect(parseDomainName('printer.home.arpa', { allowTlds: ['home.arpa'] })).toMatchObject({
      ascii: 'printer.home.arpa',
    });
    expect(parseDomainName('1.0.0.127.in-addr.arpa', { allowTlds: ['home.arpa'] })).toBe(
      'domain_special_use',
    );
    expect(parseDomainName('x.local', { allowTlds: ['test'] })).toBe('domain_special_use');
    expect(parseDomainName('localhost', { allowTlds: ['test'] })).toBe('domain_dotless');
  });
});

describe('parseDomainName: internationalized domains', () => {
  it('converts U-labels to A-labels (UTS #46 mapping, non-transitional)', () => {
    expect(parseDomainName('Bücher.Example.COM')).toEqual({
      ascii: 'xn--bcher-kva.example.com',
      unicode: 'bücher.example.com',
    });
    expect(parseDomainName('faß.de')).toEqual({ ascii: 'xn--fa-hia.de', unicode: 'faß.de' });
    expect(parseDomainName('臺網中心.台灣')).toEqual({
      ascii: 'xn--fiqq24b10vi0d.xn--kpry57d',
      unicode: '臺網中心.台灣',
    });
    expect(parseDomainName('ΣΑΣ.gr')).toEqual({ ascii: 'xn--mxa9ab.gr', unicode: 'σασ.gr' });
  });

  it('maps full-width forms and the ideographic full stops', () => {
    expect(parseDomainName('ｅｘａｍｐｌｅ．ｃｏｍ')).toEqual({
      ascii: 'example.com',
      unicode: 'example.com',
    });
    expect(parseDomainName('例え。テスト｡jp')).toMatchObject({ unicode: '例え.テスト.jp' });
    expect(parseDomainName('my\uff0e\uff0eexample.com')).toBe('domain_dot');
    expect(parseDomainName('\uff0dexample.com')).toBe('domain_hyphen');
  });

  it('decodes and checks A-labels given in ASCII', () => {
    expect(parseDomainName('XN--MNCHEN-3YA.de')).toEqual({
      ascii: 'xn--mnchen-3ya.de',
      unicode: 'münchen.de',
    });
    expect(parseDomainName('xn--hxajbheg2az3al.xn--jxalpdlp')).toEqual({
      ascii: 'xn--hxajbheg2az3al.xn--jxalpdlp',
      unicode: 'παράδειγμα.δοκιμή',
    });
  });

  it.each([
    ['malformed Punycode', 'xn--0.tld'],
    ['all-ASCII decoding', 'xn--abc.com'],
    ['a disallowed code point (emoji)', 'xn--ls8h.la'],
    ['upper case inside the U-label', 'xn--mnchen-psa.de'],
    ['a zero-width joiner inside the U-label', 'xn--1ug.com'],
  ])('rejects an A-label with %s', (_name, raw) => {
    expect(parseDomainName(raw)).toBe('domain_idna_invalid');
  });

  it('rejects an A-label that ends with a hyphen or has nothing to decode', () => {
    expect(parseDomainName('xn--abc-.com')).toBe('domain_hyphen');
    expect(parseDomainName('xn--.com')).toBe('domain_hyphen');
  });

  it.each([
    ['a symbol', '☃.net'],
    ['an emoji', '😆.org'],
    ['a Latin letter before Hebrew (Bidi Rule)', 'aשלום.com'],
    ['a middle dot outside l·l (CONTEXTO)', 'a·b.cat'],
    ['mixed Arabic-Indic digit sets (CONTEXTO)', 'ب٠۰.com'],
  ])('rejects a U-label with %s', (_name, raw) => {
    expect(parseDomainName(raw)).toBe('domain_idna_invalid');
  });

  it('accepts valid right-to-left and contextual labels', () => {
    expect(parseDomainName('שלום1.com')).toMatchObject({ ascii: 'xn--1-9hcuf1d.com' });
    expect(parseDomainName('مثال.إختبار')).toMatchObject({ ascii: 'xn--mgbh0fb.xn--kgbechtv' });
    expect(parseDomainName('l·l.cat')).toMatchObject({ ascii: 'xn--ll-0ea.cat' });
  });

  it.each([
    ['a code point that maps to a dot', '⒈wouldbeinvalid.com'],
    ['a code point that maps to a semicolon', '\u037e.com'],
    ['a code point that maps to a backtick', '\u1fef.com'],
    ['a code point that maps to a space', 'exa\u00a0mple.com'],
  ])('rejects %s', (_name, raw) => {
    expect(parseDomainName(raw)).not.toHaveProperty('ascii');
  });

  it.each([
    ['zero-width joiner', 'ex\u200dample.com'],
    ['bidi override', '\u202dforward-\u202ereversed.com'],
    ['leading combining mark', '\u0300a.com'],
    ['private use', '\ue000.com'],
    ['lone surrogate', '\ud800.com'],
    ['ideographic space', 'a\u3000b.com'],
  ])('rejects a domain with a %s', (_name, raw) => {
    expect(parseDomainName(raw)).toBe('domain_unsafe_character');
  });

  it('checks lengths on the A-label form', () => {
    expect(parseDomainName(`${'ü'.repeat(50)}.com`)).toMatchObject({ unicode: `${'ü'.repeat(50)}.com` });
    expect(parseDomainName(`中${label(59)}.com`)).toBe('label_too_long'); // 60 characters, 64 octets as an A-label
    const cjk = '一剣囆嬩後揯桒沵焘畻秞繁芤蜇譪迍鐰颓'; // 18 characters, a 58-octet A-label
    expect(parseDomainName(`${cjk}.com`)).toMatchObject({ unicode: `${cjk}.com` });
    const long = [cjk, cjk, cjk, cjk, cjk, 'com'].join('.'); // 98 characters, 298 octets in ASCII
    expect(parseDomainName(long)).toBe('domain_too_long');
  });
});

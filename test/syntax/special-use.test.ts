import { describe, expect, it } from 'vitest';
import { isSpecialUseTld, isWithin, SPECIAL_USE_TLDS } from '../../src/syntax/special-use.js';

describe('special-use names', () => {
  it("covers python-email-validator's list and the newer reservations", () => {
    for (const name of ['arpa', 'invalid', 'local', 'localhost', 'onion', 'test'])
      expect(SPECIAL_USE_TLDS.has(name)).toBe(true);
    for (const name of ['example', 'alt', 'internal', 'corp', 'home', 'mail'])
      expect(isSpecialUseTld(name)).toBe(true);
  });

  it('does not list real TLDs', () => {
    for (const name of ['com', 'org', 'io', 'tld', 'xn--p1ai', 'email', 'app'])
      expect(isSpecialUseTld(name)).toBe(false);
  });
});

describe('isWithin', () => {
  const names = new Set(['test', 'home.arpa']);

  it('matches a name and its subdomains, at label boundaries', () => {
    expect(isWithin('test', names)).toBe(true);
    expect(isWithin('a.b.test', names)).toBe(true);
    expect(isWithin('printer.home.arpa', names)).toBe(true);
    expect(isWithin('latest', names)).toBe(false);
    expect(isWithin('notest.com', names)).toBe(false);
    expect(isWithin('in-addr.arpa', names)).toBe(false);
  });

  it('matches nothing against an empty set', () => {
    expect(isWithin('test', new Set())).toBe(false);
  });
});

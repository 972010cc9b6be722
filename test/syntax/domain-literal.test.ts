import { describe, expect, it } from 'vitest';
import { parseDomainLiteral } from '../../src/syntax/domain-literal.js';

describe('parseDomainLiteral', () => {
  it('accepts an IPv4 literal as it is', () => {
    expect(parseDomainLiteral('[192.0.2.1]')).toEqual({ domain: '[192.0.2.1]', address: '192.0.2.1' });
  });

  it('accepts an IPv6 literal and writes it in RFC 5952 form', () => {
    expect(parseDomainLiteral('[IPv6:0000:0000:0000:0000:0000:0000:0000:0001]')).toEqual({
      domain: '[IPv6:::1]',
      address: '::1',
    });
    expect(parseDomainLiteral('[IPv6:2001:DB8::1]')).toEqual({
      domain: '[IPv6:2001:db8::1]',
      address: '2001:db8::1',
    });
  });

  it.each([
    '[192.0.2]',
    '[192.0.2.256]',
    '[1111:2222:3333:4444:5555:6666:7777:8888]', // IPv6 needs its tag
    '[IPv6:1::2::3]',
    '[ipv6:::1]',
    '[tag:text]',
    '[untaggedtext]',
    '[RFC 5322 domain literal]',
    '[192.0.2.1',
    '192.0.2.1]',
    '[]',
    '[',
    '[1.2.3.4]x',
  ])('rejects %j', (raw) => {
    expect(parseDomainLiteral(raw)).toBe('domain_literal_invalid');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatIPv6, parseIPv4, parseIPv6 } from '../../src/syntax/ip-address.js';

describe('parseIPv4', () => {
  it('parses dotted quads', () => {
    expect(parseIPv4('192.0.2.1')).toEqual([192, 0, 2, 1]);
    expect(parseIPv4('0.0.0.0')).toEqual([0, 0, 0, 0]);
    expect(parseIPv4('255.255.255.255')).toEqual([255, 255, 255, 255]);
  });

  it.each([
    '255.255.255',
    '1.2.3.4.5',
    '1.2.3.256',
    '1.2.3.01',
    '1..2.3',
    '1.2.3.',
    '',
    'a.b.c.d',
    '1.2.3.4 ',
  ])('rejects %j', (text) => {
    expect(parseIPv4(text)).toBeNull();
  });
});

describe('parseIPv6', () => {
  it('parses full, compressed and IPv4-suffixed forms', () => {
    expect(parseIPv6('1111:2222:3333:4444:5555:6666:7777:8888')).toEqual([
      0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0x7777, 0x8888,
    ]);
    expect(parseIPv6('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('2001:DB8::8:800:200C:417A')).toEqual([0x2001, 0xdb8, 0, 0, 8, 0x800, 0x200c, 0x417a]);
    expect(parseIPv6('1111:2222:3333:4444:5555:6666::8888')).toEqual([
      0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0, 0x8888,
    ]);
    expect(parseIPv6('::ffff:192.0.2.1')).toEqual([0, 0, 0, 0, 0, 0xffff, 0xc000, 0x201]);
    expect(parseIPv6('1111:2222:3333:4444:5555:6666:255.255.255.255')).toEqual([
      0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666, 0xffff, 0xffff,
    ]);
  });

  it.each([
    '1111:2222:3333:4444:5555:6666:7777',
    '1111:2222:3333:4444:5555:6666:7777:8888:9999',
    '1111:2222:3333:4444:5555:6666:7777:888G',
    '1111:2222:3333:4444:5555:6666::7777:8888',
    ':3333:4444:5555:6666:7777:8888',
    '1111::4444:5555::8888',
    '1111:2222:3333:4444:5555:255.255.255.255',
    '1111:2222:3333:4444:5555:6666:7777:255.255.255.255',
    '1111:2222:3333:4444:5555:6666::255.255.255.255',
    '1111:2222:3333:4444:::255.255.255.255',
    ':255.255.255.255',
    '1::2:',
    ':::',
    '12345::',
    'fe80::1%eth0',
    '::1.2.3.04',
    '',
  ])('rejects %j', (text) => {
    expect(parseIPv6(text)).toBeNull();
  });
});

describe('formatIPv6 (RFC 5952)', () => {
  it('writes lower-case hex without leading zeros and compresses the longest zero run', () => {
    expect(formatIPv6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1])).toBe('2001:db8::1');
    expect(formatIPv6([0, 0, 0, 0, 0, 0, 0, 0])).toBe('::');
    expect(formatIPv6([0, 0, 0, 0, 0, 0, 0, 1])).toBe('::1');
    expect(formatIPv6([1, 0, 0, 0, 0, 0, 0, 0])).toBe('1::');
    expect(formatIPv6([0x2001, 0xdb8, 0, 1, 0, 0, 0, 1])).toBe('2001:db8:0:1::1');
    expect(formatIPv6([0x2001, 0, 0, 1, 0, 0, 1, 1])).toBe('2001::1:0:0:1:1'); // first of two equal runs
    expect(formatIPv6([1, 2, 3, 4, 5, 6, 0, 8])).toBe('1:2:3:4:5:6:0:8'); // a single zero is not compressed
  });

  it('round-trips: formatting then parsing gives the same groups', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), {
          minLength: 8,
          maxLength: 8,
        }),
        (groups) => {
          expect(parseIPv6(formatIPv6(groups))).toEqual(groups);
        },
      ),
    );
  });
});

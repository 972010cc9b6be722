import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/errors.js';
import {
  BLOCKED_IPV4,
  BLOCKED_IPV6,
  createAddressGuard,
  isRoutable,
  parseCidr,
  parseCidrList,
  parseIp,
} from '../../src/net/guard.js';
import { resolveOptions } from '../../src/options.js';

const v4 = (a: number, b: number, c: number, d: number) => `${a}.${b}.${c}.${d}`;

/** First, last and a middle address of an IPv4 range. */
function samplesV4(range: string): string[] {
  const cidr = parseCidr(range);
  if (cidr === null) throw new Error(range);
  const base = cidr.bytes.reduce((sum, byte) => sum * 256 + byte, 0);
  const size = 2 ** (32 - cidr.prefix);
  return [base, base + Math.floor(size / 2) + 1, base + size - 1].map((value) =>
    v4(
      Math.floor(value / 2 ** 24) % 256,
      Math.floor(value / 2 ** 16) % 256,
      Math.floor(value / 256) % 256,
      value % 256,
    ),
  );
}

function hex(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let index = 0; index < 16; index += 2)
    groups.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  return groups.join(':');
}

/** First and last address of an IPv6 range, fully written out. */
function samplesV6(range: string): string[] {
  const cidr = parseCidr(range);
  if (cidr === null) throw new Error(range);
  const last = cidr.bytes.slice();
  for (let bit = cidr.prefix; bit < 128; bit++) last[bit >> 3] = (last[bit >> 3] ?? 0) | (0x80 >> (bit & 7));
  return [hex(cidr.bytes), hex(last)];
}

/** The IPv6 forms that carry an IPv4 address. */
function embeddings(address: string): string[] {
  const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  return [
    `::ffff:${address}`,
    `::ffff:${hi}:${lo}`,
    `0:0:0:0:0:FFFF:${address}`,
    `64:ff9b::${address}`,
    `64:ff9b::${hi}:${lo}`,
    `2002:${hi}:${lo}::1`,
    `2002:${hi}:${lo}:ffff:ffff:ffff:ffff:ffff`,
  ];
}

describe('parseIp', () => {
  it('reads IPv4 and the IPv6 text forms of RFC 4291', () => {
    expect(parseIp('192.0.2.1')).toEqual({ family: 4, bytes: Uint8Array.from([192, 0, 2, 1]) });
    const full = parseIp('2001:0db8:0000:0000:0000:0000:0000:0001');
    expect(full?.family).toBe(6);
    for (const same of ['2001:db8::1', '2001:DB8:0:0::1', '2001:db8:0:0:0:0:0:1', '2001:db8::0.0.0.1']) {
      expect(parseIp(same)).toEqual(full);
    }
    expect(parseIp('::')?.bytes).toEqual(new Uint8Array(16));
    expect(parseIp('::ffff:10.1.2.3')?.bytes.slice(10)).toEqual(Uint8Array.from([0xff, 0xff, 10, 1, 2, 3]));
    expect(parseIp('1::')?.bytes[1]).toBe(1);
  });

  it('refuses ambiguous, partial and hostile text', () => {
    for (const bad of [
      '',
      ' 192.0.2.1',
      '192.0.2.1 ',
      '010.0.0.1',
      '0x7f.0.0.1',
      '127.1',
      '2130706433',
      '256.0.0.1',
      '1.2.3.4.5',
      '1.2.3.',
      'fe80::1%eth0',
      'fe80::1%25eth0',
      '[::1]',
      '::1:',
      ':1::',
      ':::',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7',
      '12345::',
      'g::1',
      '::ffff:1.2.3',
      '::1.2.3.4:5',
      '::ffff:256.1.1.1',
      '1:2:3:4:5:6:7:1.2.3.4',
      '١٢٧.0.0.1',
      '127.0.0.1\u0000',
      'x'.repeat(1_000_000),
      '::ffff:0127.0.0.1',
    ]) {
      expect(parseIp(bad), bad).toBeNull();
    }
  });

  it('never throws, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        const ip = parseIp(text);
        expect(ip === null || ip.bytes.length === (ip.family === 4 ? 4 : 16)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(fc.ipV6(), (text) => {
        expect(parseIp(text)?.family).toBe(6);
      }),
    );
    fc.assert(
      fc.property(fc.ipV4(), (text) => {
        expect(parseIp(text)?.family).toBe(4);
      }),
    );
  });
});

describe('parseCidr and parseCidrList', () => {
  it('reads ranges and single addresses, clearing host bits', () => {
    expect(parseCidr('10.1.2.3/8')).toMatchObject({
      family: 4,
      prefix: 8,
      bytes: Uint8Array.from([10, 0, 0, 0]),
    });
    expect(parseCidr('192.0.2.7')).toMatchObject({ prefix: 32 });
    expect(parseCidr(' fd00::1/8 ')).toMatchObject({ family: 6, prefix: 8, text: 'fd00::1/8' });
    expect(parseCidr('::/0')).toMatchObject({ prefix: 0 });
  });

  it('refuses bad prefixes and addresses', () => {
    for (const bad of [
      '10.0.0.0/33',
      '::/129',
      '10.0.0.0/',
      '10.0.0.0/08',
      '10.0.0.0/-1',
      '10.0.0.0/8/8',
      'a/8',
      '/8',
    ]) {
      expect(parseCidr(bad), bad).toBeNull();
    }
  });

  it('names the bad entry and its position', () => {
    expect(() => parseCidrList(['10.0.0.0/8', '10.0.0.0/33'])).toThrow(OptionsError);
    expect(() => parseCidrList(['10.0.0.0/8', '10.0.0.0/33'])).toThrow(
      /allowAddresses entry 1 \("10\.0\.0\.0\/33"\)/,
    );
  });

  it('makes resolveOptions reject a bad allowAddresses entry', () => {
    expect(() => resolveOptions({ allowAddresses: ['127.0.0.0/8', 'localhost'] })).toThrow(
      expect.objectContaining({
        name: 'OptionsError',
        option: 'allowAddresses',
        message: expect.stringContaining('"localhost"'),
      }),
    );
    expect(resolveOptions({ allowAddresses: ['127.0.0.0/8', ' ::1 '] }).allowAddresses).toEqual([
      '127.0.0.0/8',
      '::1',
    ]);
  });
});

describe('the SSRF guard', () => {
  const guard = createAddressGuard();

  it.each(BLOCKED_IPV4.map((entry) => entry.range))('blocks IPv4 %s', (range) => {
    for (const address of samplesV4(range)) {
      expect(guard.check(address), address).toMatchObject({ allowed: false, reason: 'special_purpose' });
    }
  });

  it.each(BLOCKED_IPV4.map((entry) => entry.range))(
    'blocks the IPv4-mapped, NAT64 and 6to4 forms of %s',
    (range) => {
      for (const address of samplesV4(range).flatMap(embeddings)) {
        expect(guard.check(address), address).toMatchObject({ allowed: false, reason: 'special_purpose' });
      }
    },
  );

  it.each(BLOCKED_IPV6.map((entry) => entry.range))('blocks IPv6 %s', (range) => {
    for (const address of samplesV6(range)) {
      expect(guard.allows(address), address).toBe(false);
    }
  });

  it('blocks the IPv4-compatible form and everything outside global unicast 2000::/3', () => {
    for (const address of [
      '::8.8.8.8',
      '::127.0.0.1',
      '::ffff:0:8.8.8.8',
      '4000::1',
      'e000::1',
      '1::1',
      '100::1',
    ]) {
      expect(guard.allows(address), address).toBe(false);
    }
  });

  it('says which range blocked an address', () => {
    expect(guard.check('::ffff:10.1.2.3').detail).toBe(
      '10.0.0.0/8 private use (via ::ffff:0:0/96 IPv4-mapped)',
    );
    expect(guard.check('fe80::1').detail).toBe('fe80::/10 link local');
    expect(guard.check('not an ip')).toEqual({ allowed: false, reason: 'malformed', detail: null });
  });

  it('lets globally routable addresses through, in every form', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.0.1.255',
      '192.169.0.0',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.255',
      ...embeddings('8.8.4.4'),
      '2a00:1450:4001:81c::1b',
      '2607:f8b0:4004:c1b::1a',
      '2001:200::1',
      '2003::1',
    ]) {
      expect(guard.check(address), address).toEqual({ allowed: true, reason: 'global', detail: null });
    }
  });

  it('lets allow-listed ranges through, IPv4 ranges also in their IPv4-mapped form', () => {
    const allowing = createAddressGuard(['127.0.0.0/8', 'fd00::/8', '64:ff9b:1::/48']);
    for (const address of ['127.0.0.1', '127.255.0.9', '::ffff:127.0.0.2', 'fd12::1', '64:ff9b:1::a']) {
      expect(allowing.check(address), address).toMatchObject({ allowed: true, reason: 'allow_listed' });
    }
    for (const address of ['169.254.0.1', '10.0.0.1', '::1', 'fe80::1', 'fc00::1', '::ffff:10.0.0.1']) {
      expect(allowing.allows(address), address).toBe(false);
    }
    expect(isRoutable('::1', ['::1'])).toBe(true);
    expect(isRoutable('::1')).toBe(false);
  });

  it('does not open the NAT64 and 6to4 forms of an allowed IPv4 range: they leave the host', () => {
    const allowing = createAddressGuard(['127.0.0.0/8']);
    for (const address of [
      '64:ff9b::7f00:1',
      '64:ff9b::127.0.0.1',
      '2002:7f00:1::1',
      '2002:7f00:1:ffff::1',
    ]) {
      const decision = allowing.check(address);
      expect(decision, address).toMatchObject({ allowed: false, reason: 'special_purpose' });
      expect(decision.detail).toMatch(/127\.0\.0\.0\/8 loopback \(via (64:ff9b::\/96 NAT64|2002::\/16 6to4)/);
    }
    // Unless the IPv6 range itself is asked for.
    expect(createAddressGuard(['64:ff9b::/96']).check('64:ff9b::7f00:1')).toMatchObject({ allowed: true });
    expect(createAddressGuard(['2002::/16']).check('2002:7f00:1::1')).toMatchObject({ allowed: true });
  });

  it('refuses whatever it cannot parse, and never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 50, unit: 'binary' }), (text) => {
        const decision = guard.check(text);
        if (parseIp(text) === null) expect(decision.reason).toBe('malformed');
        expect(decision.allowed).toBe(decision.reason === 'global' || decision.reason === 'allow_listed');
      }),
      { numRuns: 2_000 },
    );
  });

  it('agrees with itself on every text form of an address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (address) => {
        const verdict = guard.allows(address);
        for (const form of embeddings(address)) expect(guard.allows(form), form).toBe(verdict);
      }),
      { numRuns: 500 },
    );
  });
});

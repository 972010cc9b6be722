/**
 * The contract every {@link Resolver} implementation runs (after unstorage's `testDriver`): one vitest suite that
 * asks it the same questions about the same {@link Zone}. Import it from a test file of your own resolver.
 * @module
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '../dns/types.js';
import { DnsError } from '../errors.js';
import type { Zone } from './zone.js';

/** A resolver under test, serving {@link CONTRACT_ZONE}, and how to tear it down. */
export interface ResolverFixture {
  readonly resolver: Resolver;
  /** Stops whatever the fixture started (a DNS server, the resolver). */
  close?(): void | Promise<void>;
}

const MANY_MX = Array.from({ length: 200 }, (_, index) => ({
  priority: 200 - index,
  exchange: `mx${index}.many.test`,
}));

/** The zone the contract asks about. Serve it the way your resolver gets its answers. */
export const CONTRACT_ZONE: Zone = {
  'mail.test': {
    mx: [
      { priority: 20, exchange: 'mx2.mail.test' },
      { priority: 10, exchange: 'mx1.mail.test' },
    ],
  },
  'mx1.mail.test': { a: ['192.0.2.1', '192.0.2.2'], aaaa: ['2001:db8::1'], ttl: 120 },
  'mx2.mail.test': { a: ['192.0.2.3'], ttl: 60 },
  'v6only.mail.test': { aaaa: ['2001:db8::6'] },
  'alias.mail.test': { cname: 'mx2.mail.test' },
  'null.test': { mx: [{ priority: 0, exchange: '.' }] },
  'implicit.test': { a: ['192.0.2.7'] },
  'empty.test': {},
  'servfail.test': { fail: 'servfail' },
  'refused.test': { fail: 'refused' },
  'timeout.test': { fail: 'timeout' },
  'badv6.test': { a: ['192.0.2.9'], fail: { aaaa: 'servfail' } },
  'many.test': { mx: MANY_MX },
  '1.2.0.192.in-addr.arpa': { ptr: ['mx1.mail.test'] },
  '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa': { ptr: ['MX1.mail.test.'] },
  '9.2.0.192.in-addr.arpa': { fail: 'servfail' },
  'spf.mail.test': {
    txt: ['v=spf1 ip4:192.0.2.0/24 -all', 'x'.repeat(300), 'verification=abc'],
  },
};

const HOSTILE_NAMES = [
  '',
  '.',
  'a..b',
  'exämple.test',
  'a\u0000b.test',
  'a b.test',
  'a\r\nb.test',
  `${'a'.repeat(64)}.test`,
  `${'abcdefghi.'.repeat(30)}test`,
  'x'.repeat(100_000),
  '[192.0.2.1]',
];

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the lookup to reject');
}

/**
 * Registers the resolver contract as a vitest `describe` block. `make` gets {@link CONTRACT_ZONE} and returns a
 * resolver serving it; it runs once for the block. The `timeout.test` name must fail within the test timeout
 * (give node:dns a short `timeoutMs`, e.g. 500).
 * @example
 * resolverContract('staticResolver', (zone) => ({ resolver: staticResolver(zone) }));
 * resolverContract('nodeResolver', async (zone) => {
 *   const server = await startDnsServer(zone);
 *   return { resolver: nodeResolver({ servers: [server.address], timeoutMs: 500, tries: 1 }), close: server.close };
 * });
 */
export function resolverContract(
  name: string,
  make: (zone: Zone) => ResolverFixture | Promise<ResolverFixture>,
): void {
  describe(`Resolver contract: ${name}`, () => {
    let fixture: ResolverFixture;
    let resolver: Resolver;

    beforeAll(async () => {
      fixture = await make(CONTRACT_ZONE);
      resolver = fixture.resolver;
    });
    afterAll(async () => {
      await fixture?.close?.();
    });

    it('returns the MX records of a domain, in any order', async () => {
      const answer = await resolver.mx('mail.test');
      expect(answer.kind).toBe('records');
      const records = answer.kind === 'records' ? answer.records : [];
      expect([...records].sort((a, b) => a.priority - b.priority)).toEqual([
        { priority: 10, exchange: 'mx1.mail.test' },
        { priority: 20, exchange: 'mx2.mail.test' },
      ]);
    });

    it('reports a null MX with an empty exchange', async () => {
      expect(await resolver.mx('null.test')).toMatchObject({
        kind: 'records',
        records: [{ priority: 0, exchange: '' }],
      });
    });

    it('answers nodata for a name without MX records and nxdomain for a missing name', async () => {
      expect((await resolver.mx('implicit.test')).kind).toBe('nodata');
      expect((await resolver.mx('empty.test')).kind).toBe('nodata');
      expect((await resolver.mx('missing.test')).kind).toBe('nxdomain');
    });

    it('ignores case and one trailing dot', async () => {
      const answer = await resolver.mx('MAIL.Test.');
      expect(answer.kind === 'records' ? answer.records.length : 0).toBe(2);
    });

    it('merges A and AAAA addresses, with the TTL of the records when it reports one', async () => {
      const answer = await resolver.addresses('mx1.mail.test');
      expect(answer.kind).toBe('records');
      if (answer.kind !== 'records') return;
      expect([...answer.records].sort()).toEqual(['192.0.2.1', '192.0.2.2', '2001:db8::1']);
      if (answer.ttlSeconds !== undefined) expect(answer.ttlSeconds).toBe(120);
    });

    it('returns addresses of a host with only one family', async () => {
      expect(await resolver.addresses('mx2.mail.test')).toMatchObject({ records: ['192.0.2.3'] });
      expect(await resolver.addresses('v6only.mail.test')).toMatchObject({ records: ['2001:db8::6'] });
    });

    it('follows a CNAME to the target addresses', async () => {
      expect(await resolver.addresses('alias.mail.test')).toMatchObject({
        kind: 'records',
        records: ['192.0.2.3'],
      });
    });

    it('keeps the addresses of one family when the other fails', async () => {
      expect(await resolver.addresses('badv6.test')).toMatchObject({
        kind: 'records',
        records: ['192.0.2.9'],
      });
    });

    it('answers nodata and nxdomain for addresses too', async () => {
      expect((await resolver.addresses('mail.test')).kind).toBe('nodata');
      expect((await resolver.addresses('missing.test')).kind).toBe('nxdomain');
    });

    it('throws a DnsError with the reason when the server fails, for both lookups', async () => {
      for (const [domain, reason] of [
        ['servfail.test', 'servfail'],
        ['refused.test', 'refused'],
        ['timeout.test', 'timeout'],
      ] as const) {
        for (const lookup of [resolver.mx(domain), resolver.addresses(domain)]) {
          const error = await rejection(lookup);
          expect(error).toBeInstanceOf(DnsError);
          expect((error as DnsError).reason).toBe(reason);
        }
      }
    });

    it('answers a huge MX set with a bounded number of records, the most preferred among them', async () => {
      const answer = await resolver.mx('many.test');
      expect(answer.kind).toBe('records');
      const records = answer.kind === 'records' ? answer.records : [];
      expect(records.length).toBeGreaterThan(0);
      expect(records.length).toBeLessThanOrEqual(MANY_MX.length);
      expect(Math.min(...records.map((record) => record.priority))).toBe(1);
    });

    it('rejects hostile and malformed names with a DnsError of reason malformed', async () => {
      for (const hostile of HOSTILE_NAMES) {
        for (const lookup of [resolver.mx(hostile), resolver.addresses(hostile)]) {
          const error = await rejection(lookup);
          expect(error).toBeInstanceOf(DnsError);
          expect((error as DnsError).reason).toBe('malformed');
          expect((error as DnsError).message.length).toBeLessThan(300);
        }
      }
    });

    it('returns PTR names of IPv4 and IPv6 addresses, lower case without a trailing dot (when it has ptr)', async () => {
      if (resolver.ptr === undefined) return;
      expect(await resolver.ptr('192.0.2.1')).toMatchObject({ kind: 'records', records: ['mx1.mail.test'] });
      expect(await resolver.ptr('2001:db8::1')).toMatchObject({
        kind: 'records',
        records: ['mx1.mail.test'],
      });
      expect((await resolver.ptr('192.0.2.77')).kind).toBe('nxdomain');
      const error = await rejection(resolver.ptr('192.0.2.9'));
      expect((error as DnsError).reason).toBe('servfail');
    });

    it('rejects a PTR lookup of anything but an IP address with reason malformed', async () => {
      if (resolver.ptr === undefined) return;
      for (const hostile of [
        '',
        'mail.test',
        '192.0.2',
        '010.0.0.1',
        '192.0.2.1\u0000',
        '[192.0.2.1]',
        'x'.repeat(10_000),
      ]) {
        const error = await rejection(resolver.ptr(hostile));
        expect(error).toBeInstanceOf(DnsError);
        expect((error as DnsError).reason).toBe('malformed');
      }
    });

    it('returns TXT records whole, a long one joined from its character-strings (when it has txt)', async () => {
      if (resolver.txt === undefined) return;
      const answer = await resolver.txt('spf.mail.test');
      expect(answer.kind).toBe('records');
      const records = answer.kind === 'records' ? [...answer.records].sort() : [];
      expect(records).toEqual(['v=spf1 ip4:192.0.2.0/24 -all', 'verification=abc', 'x'.repeat(300)]);
      expect((await resolver.txt('mail.test')).kind).toBe('nodata');
      expect((await resolver.txt('missing.test')).kind).toBe('nxdomain');
      expect(((await rejection(resolver.txt('servfail.test'))) as DnsError).reason).toBe('servfail');
      expect(((await rejection(resolver.txt('a b.test'))) as DnsError).reason).toBe('malformed');
    });

    it('rejects with reason aborted when the signal is already aborted', async () => {
      const signal = AbortSignal.abort();
      for (const lookup of [
        resolver.mx('mail.test', { signal }),
        resolver.addresses('mx1.mail.test', { signal }),
      ]) {
        const error = await rejection(lookup);
        expect(error).toBeInstanceOf(DnsError);
        expect((error as DnsError).reason).toBe('aborted');
      }
    });

    it('rejects with reason aborted as soon as the signal aborts, without waiting for the answer', async () => {
      const controller = new AbortController();
      const lookup = rejection(resolver.mx('timeout.test', { signal: controller.signal }));
      controller.abort();
      const error = await lookup;
      expect((error as DnsError).reason).toBe('aborted');
    });
  });
}

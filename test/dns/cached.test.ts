import { describe, expect, it } from 'vitest';
import { cachedResolver } from '../../src/dns/cached.js';
import { nodeResolver } from '../../src/dns/node.js';
import type { DnsAnswer, Resolver } from '../../src/dns/types.js';
import { DnsError, OptionsError } from '../../src/errors.js';
import { resolverContract } from '../../src/testing/resolver-contract.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import type { Zone } from '../../src/testing/zone.js';
import { startDnsServer } from '../support/dns-server.js';

resolverContract('cachedResolver(nodeResolver)', async (zone) => {
  const server = await startDnsServer(zone);
  const resolver = cachedResolver(nodeResolver({ servers: [server.address], timeoutMs: 500, tries: 1 }));
  return {
    resolver,
    async close() {
      resolver.close();
      await server.close();
    },
  };
});

resolverContract('cachedResolver(staticResolver)', (zone) => ({
  resolver: cachedResolver(staticResolver(zone)),
}));

const ZONE: Zone = {
  'example.test': { mx: [{ priority: 10, exchange: 'mx.example.test' }], ttl: 60 },
  'mx.example.test': { a: ['192.0.2.1'], ttl: 60 },
  'short.test': { a: ['192.0.2.2'], ttl: 0 },
  'empty.test': {},
  'broken.test': { fail: 'servfail' },
};

function fakeClock(start = 1_000_000) {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

describe('cachedResolver with a fake clock', () => {
  it('keeps an answer for its TTL and asks again once it has expired', async () => {
    const clock = fakeClock();
    const inner = staticResolver(ZONE);
    const resolver = cachedResolver(inner, { now: clock.now });
    await resolver.addresses('mx.example.test');
    clock.advance(59_999);
    await resolver.addresses('MX.example.test.');
    expect(inner.lookups).toHaveLength(2); // A and AAAA once
    clock.advance(1);
    await resolver.addresses('mx.example.test');
    expect(inner.lookups).toHaveLength(4);
    expect(resolver.stats()).toMatchObject({ hits: 1, misses: 2, coalesced: 0 });
  });

  it('keeps answers without a TTL for defaultTtlMs (node:dns MX answers)', async () => {
    const clock = fakeClock();
    let calls = 0;
    const noTtl: Resolver = {
      mx: async () => {
        calls++;
        return { kind: 'records', records: [{ priority: 1, exchange: 'mx.test' }] };
      },
      addresses: async () => ({ kind: 'nodata' }),
    };
    const resolver = cachedResolver(noTtl, { now: clock.now, defaultTtlMs: 10_000 });
    await resolver.mx('a.test');
    clock.advance(9_999);
    await resolver.mx('a.test');
    expect(calls).toBe(1);
    clock.advance(1);
    await resolver.mx('a.test');
    expect(calls).toBe(2);
  });

  it('caches nodata and nxdomain answers for negativeTtlMs', async () => {
    const clock = fakeClock();
    const inner = staticResolver(ZONE);
    const resolver = cachedResolver(inner, { now: clock.now, negativeTtlMs: 5_000 });
    expect((await resolver.mx('empty.test')).kind).toBe('nodata');
    expect((await resolver.mx('missing.test')).kind).toBe('nxdomain');
    clock.advance(4_999);
    expect((await resolver.mx('empty.test')).kind).toBe('nodata');
    expect((await resolver.mx('missing.test')).kind).toBe('nxdomain');
    expect(inner.lookups).toHaveLength(2);
    clock.advance(1);
    await resolver.mx('missing.test');
    expect(inner.lookups).toHaveLength(3);
  });

  it('uses the TTL a negative answer carries, within minTtlMs and maxTtlMs', async () => {
    const clock = fakeClock();
    let calls = 0;
    const inner: Resolver = {
      mx: async (): Promise<DnsAnswer<never>> => {
        calls++;
        return { kind: 'nxdomain', ttlSeconds: 100_000 };
      },
      addresses: async () => ({ kind: 'nodata', ttlSeconds: 1 }),
    };
    const resolver = cachedResolver(inner, { now: clock.now, maxTtlMs: 20_000, minTtlMs: 2_000 });
    await resolver.mx('a.test');
    clock.advance(19_999);
    await resolver.mx('a.test');
    expect(calls).toBe(1);
    clock.advance(1);
    await resolver.mx('a.test');
    expect(calls).toBe(2);
    await resolver.addresses('a.test');
    clock.advance(1_999);
    await resolver.addresses('a.test');
    expect(resolver.stats().misses).toBe(3); // the 1 s TTL was raised to minTtlMs
  });

  it('does not keep answers with a TTL of 0 by default', async () => {
    const inner = staticResolver(ZONE);
    const resolver = cachedResolver(inner, { now: fakeClock().now });
    await resolver.addresses('short.test');
    await resolver.addresses('short.test');
    expect(inner.lookups).toHaveLength(4);
  });

  it('remembers a failure for errorTtlMs only, and never an abort', async () => {
    const clock = fakeClock();
    const inner = staticResolver(ZONE);
    const resolver = cachedResolver(inner, { now: clock.now, errorTtlMs: 1_000 });
    const first = await resolver.mx('broken.test').catch((error: unknown) => error);
    const second = await resolver.mx('broken.test').catch((error: unknown) => error);
    expect(first).toBeInstanceOf(DnsError);
    expect(second).toBe(first);
    expect(inner.lookups).toHaveLength(1);
    clock.advance(1_000);
    await expect(resolver.mx('broken.test')).rejects.toMatchObject({ reason: 'servfail' });
    expect(inner.lookups).toHaveLength(2);

    await expect(resolver.mx('example.test', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      reason: 'aborted',
    });
    expect((await resolver.mx('example.test')).kind).toBe('records');
  });

  it('peek() gives a cached answer at once, never a failure, a bad name or an expired answer', async () => {
    const clock = fakeClock();
    const inner = staticResolver(ZONE);
    const resolver = cachedResolver(inner, { now: clock.now });
    expect(resolver.peek('addresses', 'mx.example.test')).toBeUndefined();
    const answer = await resolver.addresses('mx.example.test');
    expect(resolver.peek('addresses', 'MX.example.test.')).toEqual(answer);
    expect(resolver.peek('mx', 'mx.example.test')).toBeUndefined(); // another kind of lookup
    await resolver.mx('broken.test').catch(() => undefined);
    expect(resolver.peek('mx', 'broken.test')).toBeUndefined(); // remembered failures go through mx()
    expect(resolver.peek('mx', 'not a name')).toBeUndefined();
    expect(resolver.stats()).toMatchObject({ hits: 1, misses: 2 });
    clock.advance(60_000);
    expect(resolver.peek('addresses', 'mx.example.test')).toBeUndefined();
    expect(inner.lookups).toHaveLength(3); // peek never asks
  });

  it('does not remember failures with errorTtlMs 0', async () => {
    const inner = staticResolver(ZONE);
    const resolver = cachedResolver(inner, { errorTtlMs: 0 });
    await expect(resolver.mx('broken.test')).rejects.toBeInstanceOf(DnsError);
    await expect(resolver.mx('broken.test')).rejects.toBeInstanceOf(DnsError);
    expect(inner.lookups).toHaveLength(2);
  });

  it('evicts the least recently used answer beyond max', async () => {
    const inner = staticResolver(ZONE);
    const resolver = cachedResolver(inner, { max: 1 });
    await resolver.mx('example.test');
    await resolver.mx('empty.test');
    await resolver.mx('example.test');
    expect(inner.lookups.map((lookup) => lookup.name)).toEqual([
      'example.test',
      'empty.test',
      'example.test',
    ]);
    expect(resolver.stats().size).toBe(1);
  });

  it('close() empties the cache, resets the counters and closes the inner resolver', async () => {
    let closed = 0;
    const inner = staticResolver(ZONE);
    const resolver = cachedResolver({ ...inner, close: () => closed++ });
    await resolver.mx('example.test');
    await resolver.mx('example.test');
    resolver.close();
    expect(closed).toBe(1);
    expect(resolver.stats()).toEqual({ hits: 0, misses: 0, coalesced: 0, size: 0 });
    await resolver.mx('example.test');
    expect(inner.lookups).toHaveLength(2);
  });

  it('validates its options, naming the bad one', () => {
    const inner = staticResolver(ZONE);
    for (const [options, option] of [
      [{ max: 0 }, 'max'],
      [{ maxTtlMs: -1 }, 'maxTtlMs'],
      [{ minTtlMs: 10, maxTtlMs: 5 }, 'minTtlMs'],
      [{ negativeTtlMs: 1.5 }, 'negativeTtlMs'],
      [{ errorTtlMs: Number.NaN }, 'errorTtlMs'],
      [{ now: 'soon' }, 'now'],
    ] as const) {
      expect(() => cachedResolver(inner, options as never)).toThrow(OptionsError);
      try {
        cachedResolver(inner, options as never);
      } catch (error) {
        expect((error as OptionsError).option).toBe(option);
      }
    }
    expect(() => cachedResolver({} as never)).toThrow(OptionsError);
  });
});

describe('cachedResolver coalescing', () => {
  it('sends one query to the server for 50 identical concurrent lookups', async () => {
    const server = await startDnsServer(ZONE);
    const resolver = cachedResolver(nodeResolver({ servers: [server.address] }));
    try {
      const answers = await Promise.all(Array.from({ length: 50 }, () => resolver.mx('example.test')));
      expect(new Set(answers).size).toBe(1);
      expect(server.queries()).toBe(1);
      await Promise.all(Array.from({ length: 50 }, () => resolver.addresses('mx.example.test')));
      expect(server.queryLog.map((query) => query.type).sort()).toEqual(['A', 'AAAA', 'MX']);
      expect(resolver.stats()).toMatchObject({ misses: 2, coalesced: 98 });
    } finally {
      resolver.close();
      await server.close();
    }
  });

  it('lets one caller abort without failing the others that share its lookup', async () => {
    let release: (answer: DnsAnswer<never>) => void = () => undefined;
    let calls = 0;
    const inner: Resolver = {
      mx: () => {
        calls++;
        return new Promise((resolve) => {
          release = resolve;
        });
      },
      addresses: async () => ({ kind: 'nodata' }),
    };
    const resolver = cachedResolver(inner);
    const controller = new AbortController();
    const aborted = resolver.mx('a.test', { signal: controller.signal }).catch((error: unknown) => error);
    const patient = resolver.mx('a.test');
    controller.abort();
    expect(await aborted).toMatchObject({ reason: 'aborted' });
    release({ kind: 'nxdomain' });
    expect(await patient).toEqual({ kind: 'nxdomain' });
    expect(calls).toBe(1);
  });

  it('turns an inner resolver that throws synchronously into a rejection', async () => {
    const inner: Resolver = {
      mx: () => {
        throw new DnsError('other', 'a.test', 'boom');
      },
      addresses: async () => ({ kind: 'nodata' }),
    };
    await expect(cachedResolver(inner).mx('a.test')).rejects.toMatchObject({ reason: 'other' });
  });
});

describe('cachedResolver: PTR and TXT', () => {
  it('has ptr() and txt() only when the inner resolver has them', () => {
    const older: Resolver = {
      mx: async () => ({ kind: 'nodata' }),
      addresses: async () => ({ kind: 'nodata' }),
    };
    const cached = cachedResolver(older);
    expect(cached.ptr).toBeUndefined();
    expect(cached.txt).toBeUndefined();
    expect(typeof cachedResolver(staticResolver({})).ptr).toBe('function');
  });

  it('caches PTR answers by reverse name, so every spelling of an IPv6 address asks once', async () => {
    const inner = staticResolver({
      '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa': { ptr: ['host.test'] },
      'spf.test': { txt: ['v=spf1 -all'] },
    });
    const cached = cachedResolver(inner);
    expect(await cached.ptr?.('2001:db8::1')).toMatchObject({ records: ['host.test'] });
    expect(await cached.ptr?.('2001:DB8:0:0:0:0:0:1')).toMatchObject({ records: ['host.test'] });
    expect(await cached.txt?.('SPF.test.')).toMatchObject({ records: ['v=spf1 -all'] });
    expect(await cached.txt?.('spf.test')).toMatchObject({ records: ['v=spf1 -all'] });
    expect(inner.lookups.map((lookup) => lookup.type)).toEqual(['PTR', 'TXT']);
    expect(cached.stats()).toMatchObject({ hits: 2, misses: 2 });
  });
});

import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { mxCheck } from '../../src/checks/mx.js';
import { createCheckState } from '../../src/checks/state.js';
import type { AddressParts, CheckState } from '../../src/checks/types.js';
import { cachedResolver } from '../../src/dns/cached.js';
import { nodeResolver } from '../../src/dns/node.js';
import type { Resolver } from '../../src/dns/types.js';
import { createAddressGuard } from '../../src/net/guard.js';
import { resolveOptions, type VerifyOptions } from '../../src/options.js';
import type { Verdict } from '../../src/result.js';
import type { VerifierRuntime } from '../../src/runtime.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import type { Zone } from '../../src/testing/zone.js';
import { startDnsServer } from '../support/dns-server.js';

function addressOf(email: string): AddressParts {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const literal = /^\[(?:IPv6:)?(.*)\]$/i.exec(domain)?.[1] ?? null;
  return {
    local,
    domain,
    unicodeDomain: domain,
    normalized: email,
    smtpUtf8: false,
    literalAddress: literal,
  };
}

/** A runtime with only what the MX check may use: any other member (transport, prober, ...) throws. */
function runtimeOf(resolver: Resolver, now: () => number): VerifierRuntime {
  const allowed: Record<string, unknown> = { resolver, now };
  return new Proxy(allowed, {
    get(target, key) {
      if (typeof key === 'string' && key in target) return target[key];
      throw new Error(`the MX check must not use runtime.${String(key)}`);
    },
  }) as unknown as VerifierRuntime;
}

function stateFor(email: string, resolver: Resolver, options: VerifyOptions = {}, now = () => 0): CheckState {
  const runtime = runtimeOf(resolver, now);
  const resolved = resolveOptions({ smtp: false, ...options });
  const address = addressOf(email);
  return {
    ...createCheckState(email, resolved, runtime, now() + resolved.timeoutMs),
    address,
    user: address.local,
    domain: address.domain,
  };
}

async function run(state: CheckState): Promise<Verdict | undefined> {
  return await mxCheck.run(state);
}

const ZONE: Zone = {
  'example.test': {
    mx: [
      { priority: 20, exchange: 'mx-b.example.test' },
      { priority: 10, exchange: 'mx-a.example.test.' },
      { priority: 20, exchange: 'mx-c.example.test' },
      { priority: 30, exchange: 'mx-d.example.test' },
    ],
  },
  'mx-a.example.test': { a: ['192.0.2.10'], aaaa: ['2001:db8::10'] },
  'mx-b.example.test': { a: ['192.0.2.11'] },
  'mx-c.example.test': { a: ['192.0.2.12'] },
  'mx-d.example.test': { a: ['192.0.2.13'] },
  'implicit.test': { a: ['192.0.2.20'] },
  'nullmx.test': { mx: [{ priority: 0, exchange: '.' }], a: ['192.0.2.21'] },
  'bare.test': {},
  'servfail.test': { fail: 'servfail' },
  'refused.test': { fail: 'refused' },
  'timeout.test': { fail: 'timeout' },
  'private.test': { mx: [{ priority: 10, exchange: 'mx.private.test' }] },
  'mx.private.test': { a: ['10.0.0.5', '127.0.0.1'], aaaa: ['::ffff:192.168.1.1', 'fe80::1'] },
  'mixed.test': {
    mx: [
      { priority: 10, exchange: 'mx.private.test' },
      { priority: 20, exchange: 'mx-a.example.test' },
    ],
  },
  'partly.test': { mx: [{ priority: 10, exchange: 'mx.partly.test' }] },
  'mx.partly.test': { a: ['10.1.1.1', '192.0.2.30'], aaaa: ['64:ff9b::a00:1'] },
  'dangling.test': {
    mx: [
      { priority: 10, exchange: 'gone.dangling.test' },
      { priority: 20, exchange: 'nothing.dangling.test' },
    ],
  },
  'nothing.dangling.test': {},
  'halfbroken.test': {
    mx: [
      { priority: 10, exchange: 'mx.private.test' },
      { priority: 20, exchange: 'servfail.test' },
    ],
  },
  'garbage.test': {
    mx: [
      { priority: 5, exchange: 'bad name with spaces' },
      { priority: 10, exchange: 'mx-b.example.test' },
    ],
  },
  'alias.test': { mx: [{ priority: 10, exchange: 'cname.alias.test' }] },
  'cname.alias.test': { cname: 'mx-c.example.test' },
};

// Documentation addresses (192.0.2.0/24, 2001:db8::/32) stand in for public ones here.
const ALLOW_DOCS = { allowAddresses: ['192.0.2.0/24', '2001:db8::/32'] };

describe('mxCheck', () => {
  it('orders MX hosts by preference, keeps DNS order on ties, caps at maxMxHosts', async () => {
    const state = stateFor('a@example.test', staticResolver(ZONE), ALLOW_DOCS);
    expect(await run(state)).toBeUndefined();
    expect(state.mailHosts).toEqual([
      { host: 'mx-a.example.test', priority: 10, addresses: ['192.0.2.10', '2001:db8::10'] },
      { host: 'mx-b.example.test', priority: 20, addresses: ['192.0.2.11'] },
      { host: 'mx-c.example.test', priority: 20, addresses: ['192.0.2.12'] },
    ]);
    expect(state.mx_record).toBe('mx-a.example.test');
  });

  it('tries only maxMxHosts hosts', async () => {
    const resolver = staticResolver(ZONE);
    const state = stateFor('a@example.test', resolver, { ...ALLOW_DOCS, maxMxHosts: 1 });
    await run(state);
    expect(state.mailHosts?.map((host) => host.host)).toEqual(['mx-a.example.test']);
    expect(resolver.lookups.filter((lookup) => lookup.type === 'A').map((lookup) => lookup.name)).toEqual([
      'mx-a.example.test',
    ]);
  });

  it('uses the domain itself when it has no MX but has an address (implicit MX)', async () => {
    const state = stateFor('a@implicit.test', staticResolver(ZONE), ALLOW_DOCS);
    expect(await run(state)).toBeUndefined();
    expect(state.mailHosts).toEqual([{ host: 'implicit.test', priority: 0, addresses: ['192.0.2.20'] }]);
    expect(state.mx_record).toBe('implicit.test');
  });

  it('gives invalid/does_not_accept_mail for a null MX, even with an address', async () => {
    const state = stateFor('a@nullmx.test', staticResolver(ZONE), ALLOW_DOCS);
    expect(await run(state)).toEqual({ status: 'invalid', sub_status: 'does_not_accept_mail' });
    expect(state.mailHosts).toBeNull();
  });

  it('gives invalid/no_dns_entries for NXDOMAIN and for no MX and no address', async () => {
    for (const email of ['a@missing.test', 'a@bare.test', 'a@dangling.test']) {
      expect(await run(stateFor(email, staticResolver(ZONE), ALLOW_DOCS)), email).toEqual({
        status: 'invalid',
        sub_status: 'no_dns_entries',
      });
    }
  });

  it('gives unknown/dns_error, never invalid, when DNS cannot answer', async () => {
    for (const email of ['a@servfail.test', 'a@refused.test', 'a@timeout.test', 'a@halfbroken.test']) {
      expect(await run(stateFor(email, staticResolver(ZONE), ALLOW_DOCS)), email).toEqual({
        status: 'unknown',
        sub_status: 'dns_error',
      });
    }
  });

  it('gives invalid/unroutable_ip_address when every address of every host is blocked', async () => {
    const state = stateFor('a@private.test', staticResolver(ZONE));
    expect(await run(state)).toEqual({ status: 'invalid', sub_status: 'unroutable_ip_address' });
    expect(state.mailHosts).toBeNull();
    expect(state.mx_record).toBe('mx.private.test');
  });

  it('drops blocked addresses and blocked hosts, keeping the rest', async () => {
    const partly = stateFor('a@partly.test', staticResolver(ZONE), ALLOW_DOCS);
    await run(partly);
    expect(partly.mailHosts).toEqual([{ host: 'mx.partly.test', priority: 10, addresses: ['192.0.2.30'] }]);
    const mixed = stateFor('a@mixed.test', staticResolver(ZONE), ALLOW_DOCS);
    await run(mixed);
    expect(mixed.mailHosts?.map((host) => host.host)).toEqual(['mx-a.example.test']);
    expect(mixed.mx_record).toBe('mx.private.test');
  });

  it('lets allow-listed private addresses through', async () => {
    const state = stateFor('a@private.test', staticResolver(ZONE), {
      allowAddresses: ['10.0.0.0/8', 'fe80::/10'],
    });
    await run(state);
    expect(state.mailHosts).toEqual([
      { host: 'mx.private.test', priority: 10, addresses: ['10.0.0.5', 'fe80::1'] },
    ]);
  });

  it('skips MX targets that are not host names without asking DNS', async () => {
    const resolver = staticResolver(ZONE);
    const state = stateFor('a@garbage.test', resolver, ALLOW_DOCS);
    await run(state);
    expect(state.mailHosts?.map((host) => host.host)).toEqual(['mx-b.example.test']);
    expect(resolver.lookups.some((lookup) => lookup.name.includes(' '))).toBe(false);
  });

  it('treats a domain literal as its own mail host, through the guard', async () => {
    const resolver = staticResolver(ZONE);
    const open = stateFor('a@[192.0.2.1]', resolver, { ...ALLOW_DOCS, allowDomainLiteral: true });
    expect(await run(open)).toBeUndefined();
    expect(open.mailHosts).toEqual([{ host: '192.0.2.1', priority: 0, addresses: ['192.0.2.1'] }]);
    for (const literal of [
      'a@[127.0.0.1]',
      'a@[IPv6:::1]',
      'a@[IPv6:::ffff:10.0.0.1]',
      'a@[169.254.169.254]',
    ]) {
      const state = stateFor(literal, resolver, { allowDomainLiteral: true });
      expect(await run(state), literal).toEqual({ status: 'invalid', sub_status: 'unroutable_ip_address' });
      expect(state.mailHosts).toBeNull();
    }
    expect(resolver.lookups).toEqual([]);
  });

  it('does nothing when dns is off or the syntax check found no address', async () => {
    const resolver = staticResolver(ZONE);
    const off = stateFor('a@example.test', resolver, { dns: false });
    expect(await run(off)).toBeUndefined();
    const noAddress = stateFor('a@example.test', resolver);
    noAddress.address = null;
    expect(await run(noAddress)).toBeUndefined();
    expect(resolver.lookups).toEqual([]);
    expect(off.mailHosts).toBeNull();
  });

  it('gives unknown/timeout_exceeded when the budget is spent or the caller aborts', async () => {
    let time = 0;
    // Rejects with the signal's own reason, not a DnsError: the verdict must not depend on that.
    const hanging: Resolver = {
      mx: (_domain, options) =>
        new Promise((_resolve, reject) =>
          options?.signal?.addEventListener('abort', () => reject(options.signal?.reason)),
        ),
      addresses: async () => ({ kind: 'nodata' }),
    };
    const late = stateFor('a@example.test', staticResolver(ZONE), {}, () => time);
    time = late.deadline;
    expect(await run(late)).toEqual({ status: 'unknown', sub_status: 'timeout_exceeded' });

    const controller = new AbortController();
    const aborted = stateFor('a@example.test', hanging, { signal: controller.signal });
    const pending = run(aborted);
    controller.abort();
    expect(await pending).toEqual({ status: 'unknown', sub_status: 'timeout_exceeded' });
  });

  it('lets a resolver bug surface as an exception (the verifier reports exception_occurred)', async () => {
    const buggy: Resolver = {
      mx: async () => {
        throw new TypeError('bug');
      },
      addresses: async () => ({ kind: 'nodata' }),
    };
    await expect(run(stateFor('a@example.test', buggy))).rejects.toThrow(TypeError);
  });

  it('never lets a blocked address into mailHosts, whatever DNS says', async () => {
    const addressArb = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.constantFrom(
        '10.0.0.1',
        '127.0.0.1',
        '::1',
        '::ffff:127.0.0.1',
        '64:ff9b::a9fe:a9fe',
        '2002:a00:1::1',
        'fe80::1',
      ),
    );
    const hostArb = fc.record({
      priority: fc.integer({ min: 0, max: 65_535 }),
      addresses: fc.array(addressArb, { maxLength: 4 }),
    });
    const allowArb = fc.subarray(['10.0.0.0/8', '::1', '192.0.2.0/24', 'fe80::/10']);
    await fc.assert(
      fc.asyncProperty(fc.array(hostArb, { minLength: 1, maxLength: 5 }), allowArb, async (hosts, allow) => {
        const zone: Record<
          string,
          { mx?: { priority: number; exchange: string }[]; a?: string[]; aaaa?: string[] }
        > = {
          'fuzz.test': {
            mx: hosts.map((host, index) => ({ priority: host.priority, exchange: `mx${index}.fuzz.test` })),
          },
        };
        hosts.forEach((host, index) => {
          zone[`mx${index}.fuzz.test`] = {
            a: host.addresses.filter((address) => !address.includes(':')),
            aaaa: host.addresses.filter((address) => address.includes(':')),
          };
        });
        const state = stateFor('a@fuzz.test', staticResolver(zone), { allowAddresses: allow });
        const verdict = await run(state);
        const guard = createAddressGuard(allow);
        for (const host of state.mailHosts ?? []) {
          expect(host.addresses.length).toBeGreaterThan(0);
          for (const address of host.addresses) expect(guard.allows(address)).toBe(true);
        }
        if (verdict !== undefined) expect(state.mailHosts).toBeNull();
      }),
      { numRuns: 300 },
    );
  });
});

describe('mxCheck through node:dns and a DNS server on loopback', () => {
  it('routes MX, implicit MX, null MX, NXDOMAIN, SERVFAIL, timeout and a CNAMEd MX host', async () => {
    const server = await startDnsServer(ZONE);
    const resolver = nodeResolver({ servers: [server.address], timeoutMs: 500, tries: 1 });
    const verdictFor = async (email: string) => {
      const state = stateFor(email, resolver, ALLOW_DOCS);
      return {
        verdict: await run(state),
        hosts: state.mailHosts?.map((host) => `${host.host} ${host.addresses}`),
      };
    };
    try {
      expect(await verdictFor('a@example.test')).toEqual({
        verdict: undefined,
        hosts: [
          'mx-a.example.test 192.0.2.10,2001:db8::10',
          'mx-b.example.test 192.0.2.11',
          'mx-c.example.test 192.0.2.12',
        ],
      });
      expect(await verdictFor('a@implicit.test')).toEqual({
        verdict: undefined,
        hosts: ['implicit.test 192.0.2.20'],
      });
      expect(await verdictFor('a@alias.test')).toEqual({
        verdict: undefined,
        hosts: ['cname.alias.test 192.0.2.12'],
      });
      expect((await verdictFor('a@nullmx.test')).verdict?.sub_status).toBe('does_not_accept_mail');
      expect((await verdictFor('a@missing.test')).verdict?.sub_status).toBe('no_dns_entries');
      expect((await verdictFor('a@servfail.test')).verdict?.sub_status).toBe('dns_error');
      expect((await verdictFor('a@timeout.test')).verdict?.sub_status).toBe('dns_error');
      expect((await verdictFor('a@private.test')).verdict?.sub_status).toBe('unroutable_ip_address');
    } finally {
      resolver.close();
      await server.close();
    }
  });
});

describe('mxCheck with every answer cached', () => {
  it('decides synchronously, with no budget timer, and as the lookup path does', async () => {
    let time = 1_000;
    const resolver = cachedResolver(staticResolver(ZONE), { now: () => time });
    const cold = stateFor('a@example.test', resolver, ALLOW_DOCS, () => time);
    const first = mxCheck.run(cold);
    expect(first).toBeInstanceOf(Promise); // nothing cached yet: lookups under a budget
    expect(await first).toBeUndefined();

    for (const email of ['a@nullmx.test', 'a@private.test'])
      await run(stateFor(email, resolver, {}, () => time));
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      const warm = stateFor('b@example.test', resolver, ALLOW_DOCS, () => time);
      const outcome = mxCheck.run(warm);
      expect(outcome).toBeUndefined(); // not a promise: decided at once
      expect(warm.mailHosts).toEqual(cold.mailHosts);
      expect(warm.mx_record).toBe('mx-a.example.test');
      for (const [email, sub] of [
        ['a@nullmx.test', 'does_not_accept_mail'],
        ['a@private.test', 'unroutable_ip_address'],
      ] as const) {
        expect((mxCheck.run(stateFor(email, resolver, {}, () => time)) as Verdict).sub_status).toBe(sub);
      }
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }

    // Once an answer expires, the check looks it up again (and gets the same routing).
    time += 3_600_001;
    const expired = stateFor('c@example.test', resolver, ALLOW_DOCS, () => time);
    const again = mxCheck.run(expired);
    expect(again).toBeInstanceOf(Promise);
    expect(await again).toBeUndefined();
    expect(expired.mailHosts).toEqual(cold.mailHosts);
  });

  it('still times out against a DNS server that does not answer', async () => {
    const server = await startDnsServer({
      'slow.test': { mx: [{ priority: 10, exchange: 'mx.slow.test' }] },
      'mx.slow.test': { fail: 'timeout' },
    });
    const resolver = cachedResolver(nodeResolver({ servers: [server.address], timeoutMs: 5_000, tries: 1 }));
    try {
      await resolver.mx('slow.test'); // the MX answer is cached, the host's address never comes
      const started = performance.now();
      const state = stateFor('b@slow.test', resolver, { timeoutMs: 300 }, Date.now);
      const outcome = mxCheck.run(state);
      expect(outcome).toBeInstanceOf(Promise); // the host's address is not cached
      expect(await outcome).toEqual({ status: 'unknown', sub_status: 'timeout_exceeded' });
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      resolver.close();
      await server.close();
    }
  });
});

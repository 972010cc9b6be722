import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeResolver } from '../../src/dns/node.js';
import { DnsError, OptionsError } from '../../src/errors.js';
import { resolverContract } from '../../src/testing/resolver-contract.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';

resolverContract('nodeResolver', async (zone) => {
  const server = await startDnsServer(zone);
  const resolver = nodeResolver({ servers: [server.address], timeoutMs: 500, tries: 1 });
  return {
    resolver,
    async close() {
      resolver.close();
      await server.close();
    },
  };
});

/** A loopback UDP port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

describe('nodeResolver against a DNS server on loopback', () => {
  let server: DnsTestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('reads the TTL of A and AAAA records (the smallest) and reports none for MX', async () => {
    server = await startDnsServer({
      'example.test': { mx: [{ priority: 5, exchange: 'mx.example.test' }], a: ['192.0.2.1'], ttl: 30 },
      'mx.example.test': { a: ['192.0.2.2'], ttl: 42 },
    });
    const resolver = nodeResolver({ servers: [server.address] });
    expect(await resolver.addresses('example.test')).toEqual({
      kind: 'records',
      records: ['192.0.2.1'],
      ttlSeconds: 30,
    });
    expect(await resolver.addresses('mx.example.test')).toMatchObject({ ttlSeconds: 42 });
    expect(await resolver.mx('example.test')).toEqual({
      kind: 'records',
      records: [{ priority: 5, exchange: 'mx.example.test' }],
    });
    resolver.close();
  });

  it('reads a huge MX answer (over TCP after truncation) and keeps the most preferred maxRecords', async () => {
    const mx = Array.from({ length: 250 }, (_, index) => ({
      priority: 1000 - index,
      exchange: `mx${index}.big.test`,
    }));
    server = await startDnsServer({ 'big.test': { mx } });
    const resolver = nodeResolver({ servers: [server.address], maxRecords: 50 });
    const answer = await resolver.mx('big.test');
    const records = answer.kind === 'records' ? answer.records : [];
    expect(records).toHaveLength(50);
    expect(records[0]).toEqual({ priority: 751, exchange: 'mx249.big.test' });
    expect(Math.max(...records.map((record) => record.priority))).toBe(800);
    expect(server.queryLog.map((query) => query.transport)).toEqual(['udp', 'tcp']);
    resolver.close();
  });

  it('follows a CNAME chain the server sends along with the target records', async () => {
    server = await startDnsServer({
      'mx.alias.test': { cname: 'relay.alias.test' },
      'relay.alias.test': { cname: 'host.alias.test' },
      'host.alias.test': { a: ['192.0.2.80'], aaaa: ['2001:db8::80'] },
    });
    const resolver = nodeResolver({ servers: [server.address] });
    expect(await resolver.addresses('mx.alias.test')).toMatchObject({
      records: ['192.0.2.80', '2001:db8::80'],
    });
    resolver.close();
  });

  it('sends nothing for hostile names (node:dns would cut at NUL or punycode them)', async () => {
    server = await startDnsServer({ a: { a: ['192.0.2.1'] } });
    const resolver = nodeResolver({ servers: [server.address] });
    for (const name of ['a\u0000evil.test', 'exämple.test', '', 'a'.repeat(1_000_000)]) {
      await expect(resolver.addresses(name)).rejects.toMatchObject({ reason: 'malformed' });
    }
    expect(server.queries()).toBe(0);
    resolver.close();
  });

  it('times out after tries × timeoutMs when the server never replies', async () => {
    server = await startDnsServer({ 'slow.test': { fail: 'timeout' } });
    const resolver = nodeResolver({ servers: [server.address], timeoutMs: 100, tries: 2 });
    const error = await resolver.mx('slow.test').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DnsError);
    expect(error).toMatchObject({ reason: 'timeout', code: 'timeout', hostname: 'slow.test' });
    expect(server.queries()).toBeGreaterThanOrEqual(2);
    resolver.close();
  });

  it('reports a closed name server port as refused', async () => {
    const resolver = nodeResolver({ servers: [`127.0.0.1:${await closedPort()}`], timeoutMs: 500, tries: 1 });
    await expect(resolver.mx('example.test')).rejects.toMatchObject({ name: 'DnsError', reason: 'refused' });
    resolver.close();
  });

  it('close() cancels lookups in flight and refuses later ones', async () => {
    server = await startDnsServer({ 'slow.test': { fail: 'timeout' } });
    const resolver = nodeResolver({ servers: [server.address], timeoutMs: 5_000, tries: 1 });
    const pending = resolver.mx('slow.test').catch((caught: unknown) => caught);
    await new Promise((resolve) => setImmediate(resolve));
    resolver.close();
    resolver.close();
    expect(await pending).toMatchObject({ reason: 'aborted' });
    await expect(resolver.addresses('slow.test')).rejects.toMatchObject({ reason: 'aborted' });
  });

  it('validates its options, naming the bad one', () => {
    const bad = [
      [{ timeoutMs: 0 }, 'timeoutMs'],
      [{ tries: 1.5 }, 'tries'],
      [{ maxRecords: -1 }, 'maxRecords'],
      [{ servers: [] }, 'servers'],
      [{ servers: ['not an address'] }, 'servers'],
      [{ servers: [42] }, 'servers'],
    ] as const;
    for (const [options, option] of bad) {
      let error: unknown;
      try {
        nodeResolver(options as never);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(OptionsError);
      expect((error as OptionsError).option).toBe(option);
    }
  });
});

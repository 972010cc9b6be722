/**
 * Broken name servers: a reply truncated even over TCP, and CNAME records that loop inline, must fail the lookup
 * (`unknown`/`dns_error`), not read as a domain without mail servers (`invalid`/`no_dns_entries`).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeReply, parseNameServer, probeNoData } from '../../src/dns/nodata-probe.js';
import { nodeResolver } from '../../src/dns/node.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';

let server: DnsTestServer;
let verifier: Verifier;
const resolver = () => nodeResolver({ servers: [server.address], timeoutMs: 1000 });

beforeAll(async () => {
  server = await startDnsServer(
    {
      'ok.test': { mx: [{ priority: 10, exchange: 'mx.ok.test' }] },
      'mx.ok.test': { a: ['127.0.0.2'] },
      'nomail.test': { a: [] },
    },
    {
      truncated: ['tc.test'],
      inlineCnames: {
        'loop.test': 'loop2.test',
        'loop2.test': 'loop.test',
        'self.test': 'self.test',
        'dangling.test': 'nowhere.test',
      },
    },
  );
  verifier = createVerifier({ resolver: resolver(), allowTlds: ['test'], smtp: false });
});

afterAll(async () => {
  await verifier.dispose();
  await server.close();
});

describe('a second look at "no data" answers', () => {
  it('fails a lookup whose reply is truncated even over TCP', async () => {
    await expect(resolver().mx('tc.test')).rejects.toMatchObject({
      code: 'dns_error',
      reason: 'malformed',
      message: expect.stringContaining('truncated even over TCP'),
    });
    expect(
      server.queryLog.filter((query) => query.name === 'tc.test').map((query) => query.transport),
    ).toContain('tcp');
  });

  it('fails a lookup whose CNAME records loop, and keeps a dangling CNAME as no data', async () => {
    for (const name of ['loop.test', 'self.test']) {
      await expect(resolver().mx(name)).rejects.toMatchObject({ code: 'dns_error', reason: 'servfail' });
    }
    expect(await resolver().mx('dangling.test')).toEqual({ kind: 'nodata' });
    expect(await resolver().mx('nomail.test')).toEqual({ kind: 'nodata' });
    expect((await resolver().mx('ok.test')).kind).toBe('records');
  });

  it('verify: unknown/dns_error for the broken servers, invalid/no_dns_entries for a real absence', async () => {
    for (const email of ['a@tc.test', 'a@loop.test']) {
      expect(await verifier.verify(email)).toMatchObject({ status: 'unknown', sub_status: 'dns_error' });
    }
    expect(await verifier.verify('a@nomail.test')).toMatchObject({
      status: 'invalid',
      sub_status: 'no_dns_entries',
    });
  });

  it('keeps the first answer when the second look cannot be made', async () => {
    expect(await probeNoData({ host: '127.0.0.1', port: 1 }, 'tc.test', 15, 500)).toBe('nodata');
  });
});

describe('judgeReply on hostile bytes', () => {
  const header = (flags: number, answers: number) => {
    const bytes = Buffer.alloc(12);
    bytes.writeUInt16BE(flags, 2);
    bytes.writeUInt16BE(answers, 6);
    return bytes;
  };

  it('reads the TC bit, and survives compression pointer loops and cut-off messages', () => {
    expect(judgeReply(header(0x8200, 0), 'a.test')).toBe('truncated');
    expect(judgeReply(Buffer.alloc(3), 'a.test')).toBe('nodata');
    // One answer whose owner name is a pointer to itself.
    const looping = Buffer.concat([header(0x8000, 1), Buffer.from([0xc0, 12])]);
    expect(judgeReply(looping, 'a.test')).toBe('nodata');
    const cut = Buffer.concat([header(0x8000, 5), Buffer.from([1, 97, 4, 116])]);
    expect(judgeReply(cut, 'a.test')).toBe('nodata');
  });

  it('never throws, on any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.string({ maxLength: 40 }), (bytes, name) => {
        const verdict = judgeReply(Buffer.from(bytes), name);
        expect(['nodata', 'truncated', 'cname_loop']).toContain(verdict);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads name server addresses as node:dns lists them', () => {
    expect(parseNameServer('127.0.0.1')).toEqual({ host: '127.0.0.1', port: 53 });
    expect(parseNameServer('127.0.0.1:5353')).toEqual({ host: '127.0.0.1', port: 5353 });
    expect(parseNameServer('[::1]:5353')).toEqual({ host: '::1', port: 5353 });
    expect(parseNameServer('::1')).toEqual({ host: '::1', port: 53 });
    expect(parseNameServer('')).toBeUndefined();
    expect(parseNameServer('resolver.example')).toBeUndefined();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedResolver } from '../../src/dns/cached.js';
import { nodeResolver } from '../../src/dns/node.js';
import { createVerifier } from '../../src/verifier.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const PROBE = /^[a-z2-7]{24}@/;

let dns: DnsTestServer;
let smtp: SmtpServerHarness;

beforeAll(async () => {
  dns = await startDnsServer({
    'one.test': { mx: [{ priority: 10, exchange: 'mx.shared.test' }] },
    'two.test': { mx: [{ priority: 10, exchange: 'mx.shared.test' }] },
    'mx.shared.test': { a: ['127.0.0.8'] },
  });
  const mailboxes = Object.fromEntries(
    Array.from({ length: 20 }, (_, index) => [`user${index}`, 'ok' as const]),
  );
  smtp = await startSmtpServer({ host: '127.0.0.8', mailboxes, delayMs: 2 });
});

afterAll(async () => {
  await Promise.all([dns?.close(), smtp?.close()]);
});

describe('connection reuse and politeness against a real server', () => {
  it('50 addresses at one MX: at most perMxConcurrency connections, one catch-all probe per domain', async () => {
    const verifier = createVerifier({
      resolver: cachedResolver(nodeResolver({ servers: [dns.address] })),
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      smtpPort: smtp.port,
      heloHost: 'test.local',
      perMxConcurrency: 2,
    });
    const emails = Array.from(
      { length: 50 },
      (_, index) => `user${index}@${index % 2 === 0 ? 'one' : 'two'}.test`,
    );
    const results = await Promise.all(emails.map((email) => verifier.verify(email)));
    await verifier.dispose();

    const statuses = results.map((result) => result.status);
    expect(statuses.filter((status) => status === 'valid')).toHaveLength(20);
    expect(statuses.filter((status) => status === 'invalid')).toHaveLength(30);
    expect(smtp.peakConnections()).toBeLessThanOrEqual(2);
    // 50 RCPTs at 20 per session need at least 3 sessions; the two catch-all probes have one each.
    expect(smtp.connections()).toBeLessThanOrEqual(8);
    const probes = smtp.rcpts().filter((rcpt) => PROBE.test(rcpt));
    expect(probes.map((rcpt) => rcpt.split('@')[1]).sort()).toEqual(['one.test', 'two.test']);
    expect(smtp.rcpts()).toHaveLength(52);
    // The envelope stays open between addresses: one MAIL FROM per session, not one per address.
    expect(smtp.senders().length).toBe(smtp.connections());
  });

  it('one session per address when maxRcptPerSession is 1', async () => {
    const before = smtp.connections();
    const verifier = createVerifier({
      resolver: nodeResolver({ servers: [dns.address] }),
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      smtpPort: smtp.port,
      heloHost: 'test.local',
      maxRcptPerSession: 1,
      catchAll: false,
    });
    await Promise.all(Array.from({ length: 6 }, (_, index) => verifier.verify(`user${index}@one.test`)));
    await verifier.dispose();
    expect(smtp.connections() - before).toBe(6);
    expect(smtp.peakConnections()).toBeLessThanOrEqual(2);
  });
});

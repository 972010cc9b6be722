import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeResolver } from '../../src/dns/node.js';
import { createServer, type RunningServer } from '../../src/http/node.js';
import type { Zone } from '../../src/testing/zone.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';
import { auth } from './support.js';

const zone: Zone = {
  'slow.test': { mx: [{ priority: 10, exchange: 'mx.slow.test' }] },
  'mx.slow.test': { a: ['127.0.0.3'] },
};

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let server: RunningServer;

beforeAll(async () => {
  dns = await startDnsServer(zone);
  // Every reply, the greeting included, comes 400 ms late: longer than the verifier's own 200 ms connect cap.
  smtp = await startSmtpServer({ host: '127.0.0.3', mailboxes: { alice: 'ok' }, delayMs: 400 });
  server = await createServer({
    port: 0,
    host: '127.0.0.1',
    apiKeys: ['test-key-a'],
    verifierOptions: {
      resolver: nodeResolver({ servers: [dns.address] }),
      smtpPort: smtp.port,
      allowAddresses: ['127.0.0.3/32'],
      allowTlds: ['test'],
      heloHost: 'timeout.mailvet-test.net',
      catchAll: false,
      connectTimeoutMs: 200,
    },
  });
});
afterAll(async () => {
  await server?.close();
  await Promise.all([dns?.close(), smtp?.close()]);
});

describe('GET /v1/verify?timeout= governs the mail-server waits (the spec: seconds to wait for the mail server)', () => {
  it('gives up once timeout is spent (a fresh session: greeting, EHLO, MAIL, RCPT take 1.6 s)', async () => {
    const response = await fetch(`${server.url}/v1/verify?email=alice@slow.test&timeout=1`, {
      headers: auth(),
    });
    expect(await response.json()).toMatchObject({ status: 'unknown', sub_status: 'timeout_exceeded' });
  });

  it('waits for a slow greeting up to timeout, where the verifier alone would give up after 200 ms', async () => {
    const response = await fetch(`${server.url}/v1/verify?email=alice@slow.test&timeout=10`, {
      headers: auth(),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'valid', mx_record: 'mx.slow.test' });
  });
});

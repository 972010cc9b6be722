import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeResolver } from '../../src/dns/node.js';
import type { Zone } from '../../src/testing/zone.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { closedPort, loopbackTransport } from '../support/loopback-transport.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const zone: Zone = {
  'good.test': { mx: [{ priority: 10, exchange: 'mx.good.test' }] },
  'mx.good.test': { a: ['127.0.0.2'] },
  'catchall.test': { mx: [{ priority: 10, exchange: 'mx.catchall.test' }] },
  'mx.catchall.test': { a: ['127.0.0.3'] },
  'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
  'mx.grey.test': { a: ['127.0.0.4'] },
  'backup.test': {
    mx: [
      { priority: 20, exchange: 'mx2.backup.test' },
      { priority: 10, exchange: 'mx1.backup.test' },
    ],
  },
  'mx1.backup.test': { a: ['127.0.0.5'] },
  'mx2.backup.test': { a: ['127.0.0.2'] },
  'dead.test': {
    mx: [
      { priority: 10, exchange: 'mx1.dead.test' },
      { priority: 20, exchange: 'mx2.dead.test' },
    ],
  },
  'mx1.dead.test': { a: ['127.0.0.7'] },
  'mx2.dead.test': { a: ['127.0.0.2'] },
  'alldead.test': { mx: [{ priority: 10, exchange: 'mx1.dead.test' }] },
  'tls.test': { mx: [{ priority: 10, exchange: 'mx.tls.test' }] },
  'mx.tls.test': { a: ['127.0.0.6'] },
  'google.test': { mx: [{ priority: 1, exchange: 'aspmx.l.google.com' }] },
  'aspmx.l.google.com': { a: ['127.0.0.2'] },
};

let dns: DnsTestServer;
let good: SmtpServerHarness;
let catchAll: SmtpServerHarness;
let grey: SmtpServerHarness;
let busy: SmtpServerHarness;
let tls: SmtpServerHarness;
let ports: Record<string, number>;

beforeAll(async () => {
  dns = await startDnsServer(zone);
  const mailboxes = { alice: 'ok', dis: 'disabled', full: 'full', josé: 'ok' } as const;
  [good, catchAll, grey, busy, tls] = await Promise.all([
    startSmtpServer({ host: '127.0.0.2', mailboxes }),
    startSmtpServer({ host: '127.0.0.3', catchAll: true }),
    startSmtpServer({ host: '127.0.0.4', mailboxes, greylist: true }),
    startSmtpServer({ host: '127.0.0.5', greeting: { code: 421, message: '4.3.2 too busy, try later' } }),
    startSmtpServer({ host: '127.0.0.6', mailboxes, startTls: true }),
  ]);
  ports = {
    '127.0.0.2': good.port,
    '127.0.0.3': catchAll.port,
    '127.0.0.4': grey.port,
    '127.0.0.5': busy.port,
    '127.0.0.6': tls.port,
    '127.0.0.7': await closedPort('127.0.0.7'),
  };
});

afterAll(async () => {
  await Promise.all([dns, good, catchAll, grey, busy, tls].map((server) => server?.close()));
});

function verifier(extra: Parameters<typeof createVerifier>[0] = {}): Verifier {
  return createVerifier({
    resolver: nodeResolver({ servers: [dns.address], timeoutMs: 1000, tries: 1 }),
    transport: loopbackTransport(ports),
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'test.local',
    timeoutMs: 5000,
    ...extra,
  });
}

describe('SMTP probe against real servers on loopback', () => {
  it('an existing mailbox is valid (the catch-all probe is refused)', async () => {
    const v = verifier();
    const result = await v.verify('alice@good.test');
    expect(result).toMatchObject({
      status: 'valid',
      sub_status: null,
      accept_all: false,
      mx_record: 'mx.good.test',
      smtp_provider: null,
    });
    await v.dispose();
  });

  it.each([
    ['nobody@good.test', 'invalid', 'mailbox_not_found'],
    ['dis@good.test', 'invalid', 'mailbox_disabled'],
    ['full@good.test', 'invalid', 'mailbox_quota_exceeded'],
    ['alice@grey.test', 'unknown', 'greylisted'],
  ])('%s is %s/%s', async (email, status, subStatus) => {
    const v = verifier();
    expect(await v.verify(email)).toMatchObject({ status, sub_status: subStatus });
    await v.dispose();
  });

  it('a catch-all domain is catch_all with accept_all', async () => {
    const v = verifier();
    const result = await v.verify('anyone@catchall.test');
    expect(result).toMatchObject({ status: 'catch_all', sub_status: null, accept_all: true });
    const probes = catchAll.rcpts().filter((rcpt) => /^[a-z2-7]{24}@catchall\.test$/.test(rcpt));
    expect(probes).toHaveLength(1);
    await v.dispose();
  });

  it('a 421 greeting at the preferred MX sends the probe to the next one', async () => {
    const v = verifier();
    const result = await v.verify('alice@backup.test');
    expect(result).toMatchObject({ status: 'valid', mx_record: 'mx2.backup.test' });
    expect(busy.connections()).toBeGreaterThan(0);
    await v.dispose();
  });

  it('an MX that refuses connections is skipped for the next one', async () => {
    const v = verifier();
    expect(await v.verify('nobody@dead.test')).toMatchObject({
      status: 'invalid',
      sub_status: 'mailbox_not_found',
      mx_record: 'mx2.dead.test',
    });
    await v.dispose();
  });

  it('no reachable MX at all is unknown/failed_smtp_connection', async () => {
    const v = verifier();
    expect(await v.verify('alice@alldead.test')).toMatchObject({
      status: 'unknown',
      sub_status: 'failed_smtp_connection',
      mx_record: 'mx1.dead.test',
    });
    await v.dispose();
  });

  it('STARTTLS: required TLS works with a server that offers it, and fails over without it', async () => {
    const v = verifier({ tls: 'required', trace: true });
    const result = await v.verify('alice@tls.test');
    expect(result).toMatchObject({ status: 'valid' });
    expect(result.smtp_transcript).toContain('C: STARTTLS');
    expect(await v.verify('alice@good.test')).toMatchObject({
      status: 'unknown',
      sub_status: 'failed_smtp_connection',
    });
    await v.dispose();
  });

  it('a UTF-8 local part goes out with SMTPUTF8', async () => {
    const v = verifier({ catchAll: false });
    expect(await v.verify('josé@good.test')).toMatchObject({ status: 'valid' });
    expect(good.senders().at(-1)).toEqual({ address: 'verify@test.local', smtpUtf8: true });
    await v.dispose();
  });

  it('names the provider from the MX host names', async () => {
    const v = verifier();
    expect(await v.verify('alice@google.test')).toMatchObject({
      status: 'valid',
      smtp_provider: 'google',
      mx_record: 'aspmx.l.google.com',
    });
    await v.dispose();
  });

  it('records the dialogue in smtp_transcript with trace on', async () => {
    const v = verifier({ trace: true });
    const result = await v.verify('alice@good.test');
    const transcript = result.smtp_transcript ?? [];
    expect(transcript[0]).toBe(`* mx.good.test 127.0.0.2:25`);
    expect(transcript).toContain('C: EHLO test.local');
    expect(transcript).toContain('C: MAIL FROM:<verify@test.local>');
    expect(transcript).toContain('C: RCPT TO:<alice@good.test>');
    expect(transcript.some((line) => /^S: 250\b/.test(line))).toBe(true);
    expect(transcript.at(-1)).toBe('* catch-all probe: refused');
    const again = await v.verify('alice@good.test');
    expect(again.smtp_transcript).toEqual([
      '* mx.good.test 127.0.0.2:25',
      '* reusing an open session',
      'C: RCPT TO:<alice@good.test>',
      'S: 250 Accepted',
      '* catch-all probe of good.test at mx.good.test 127.0.0.2:25, in a session of its own',
      '* catch-all probe: refused',
    ]);
    expect(await v.verify('alice@good.test', { trace: false })).not.toHaveProperty('smtp_transcript');
    await v.dispose();
  });

  it('stays within the time budget when the caller aborts', async () => {
    const v = verifier();
    const controller = new AbortController();
    controller.abort();
    expect(await v.verify('alice@good.test', { signal: controller.signal })).toMatchObject({
      status: 'unknown',
      sub_status: 'timeout_exceeded',
    });
    await v.dispose();
  });
});

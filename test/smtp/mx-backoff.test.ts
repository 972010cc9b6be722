/**
 * Kinder to mail servers (issue 10): a mail host that answers `421` (here the real smtp-server, scripted to close
 * the session after N recipients) is left alone for `mxBackoffMs`: no new session meanwhile. Verifications move
 * on to the next MX, wait for the end within their budget, or end `unknown`/`mail_server_temporary_error`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/errors.js';
import type { VerifyOptions } from '../../src/options.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import type { Zone } from '../../src/testing/zone.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { type RawServerHarness, startRawServer } from '../support/raw-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const servers: SmtpServerHarness[] = [];
let verifier: Verifier | undefined;
afterEach(async () => {
  await verifier?.dispose();
  await Promise.all(servers.map((server) => server.close()));
  servers.length = 0;
  verifier = undefined;
});

async function serve(host: string, closeAfterRcpts?: number, port?: number): Promise<SmtpServerHarness> {
  const server = await startSmtpServer({
    host,
    catchAll: true,
    ...(closeAfterRcpts === undefined ? {} : { closeAfterRcpts }),
    ...(port === undefined ? {} : { port }),
  });
  servers.push(server);
  return server;
}

function verifierFor(zone: Zone, port: number, options: VerifyOptions): Verifier {
  verifier = createVerifier({
    resolver: staticResolver(zone),
    smtpPort: port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'backoff.mailvet-test.net',
    catchAll: false,
    perMxConcurrency: 1,
    ...options,
  });
  return verifier;
}

const emails = (count: number, domain: string) => Array.from({ length: count }, (_, i) => `u${i}@${domain}`);

describe('backing off a mail host after 421', () => {
  it('opens no new session while it backs off; what cannot wait ends unknown/mail_server_temporary_error', async () => {
    const smtp = await serve('127.0.0.22', 3);
    const zone: Zone = { 'one.test': { a: ['127.0.0.22'] } };
    const verify = verifierFor(zone, smtp.port, { timeoutMs: 3_000, mxBackoffMs: 30_000 });
    const results = await Promise.all(emails(10, 'one.test').map((email) => verify.verify(email)));
    expect(results.filter((result) => result.status === 'valid')).toHaveLength(3);
    const rest = results.filter((result) => result.status !== 'valid');
    expect(rest.map((result) => `${result.status}/${result.sub_status}`)).toEqual(
      Array(7).fill('unknown/mail_server_temporary_error'),
    );
    expect(smtp.connections()).toBe(1);

    // A later verification does not knock either: the host is still backing off.
    const later = await verify.verify('late@one.test');
    expect(later.sub_status).toBe('mail_server_temporary_error');
    expect(later.reason).toMatch(/421/);
    expect(smtp.connections()).toBe(1);
  });

  it('with mxBackoffMs 0, reconnects after each 421 as before', async () => {
    const smtp = await serve('127.0.0.22', 3);
    const zone: Zone = { 'one.test': { a: ['127.0.0.22'] } };
    const verify = verifierFor(zone, smtp.port, { timeoutMs: 5_000, mxBackoffMs: 0 });
    const results = await Promise.all(emails(10, 'one.test').map((email) => verify.verify(email)));
    // An address whose retry met a 421 too is not asked a third time.
    expect(results.filter((result) => result.status === 'valid').length).toBeGreaterThanOrEqual(6);
    expect(smtp.connections()).toBeGreaterThanOrEqual(3);
  });

  it('lets verifications whose budget outlasts the backoff wait for its end', async () => {
    const smtp = await serve('127.0.0.22', 3);
    const zone: Zone = { 'one.test': { a: ['127.0.0.22'] } };
    const verify = verifierFor(zone, smtp.port, { timeoutMs: 8_000, mxBackoffMs: 600 });
    const started = performance.now();
    const results = await Promise.all(emails(7, 'one.test').map((email) => verify.verify(email)));
    expect(results.map((result) => result.status)).toEqual(Array(7).fill('valid'));
    // Three sessions of three recipients, each of the two waits between them a whole backoff.
    expect(smtp.connections()).toBe(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * 600 - 50);
  });

  it('moves on to the next MX by preference while the first backs off', async () => {
    const first = await serve('127.0.0.23', 2);
    const second = await serve('127.0.0.24', undefined, first.port);
    const zone: Zone = {
      'two.test': {
        mx: [
          { priority: 10, exchange: 'mx1.two.test' },
          { priority: 20, exchange: 'mx2.two.test' },
        ],
      },
      'mx1.two.test': { a: ['127.0.0.23'] },
      'mx2.two.test': { a: ['127.0.0.24'] },
    };
    const verify = verifierFor(zone, first.port, { timeoutMs: 3_000, mxBackoffMs: 30_000 });
    const results = [];
    for (const email of emails(6, 'two.test')) results.push(await verify.verify(email));
    expect(results.map((result) => result.status)).toEqual(Array(6).fill('valid'));
    expect(results.map((result) => result.mx_record)).toEqual([
      'mx1.two.test',
      'mx1.two.test',
      'mx2.two.test', // mx1 answered 421 to this one
      'mx2.two.test',
      'mx2.two.test',
      'mx2.two.test',
    ]);
    expect(first.connections()).toBe(1);
    expect(second.connections()).toBe(1);
  });

  it('backs off a Postfix-like host that drops the session with 421 too many errors', async () => {
    let raw: RawServerHarness | undefined;
    try {
      raw = await startRawServer({
        host: '127.0.0.25',
        script: async (peer) => {
          let errors = 0;
          await peer.write('220 mx.test.local ESMTP Postfix\r\n');
          for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
            const verb = line.split(/[ :]/, 1)[0]!.toUpperCase();
            if (verb === 'EHLO') await peer.write('250-mx.test.local\r\n250 8BITMIME\r\n');
            else if (verb === 'RCPT' && ++errors >= 5) {
              await peer.write('421 4.7.0 mx.test.local Error: too many errors\r\n');
              return;
            } else if (verb === 'RCPT')
              await peer.write('550 5.1.1 <x>: Recipient address rejected: User unknown\r\n');
            else if (verb === 'QUIT') return void (await peer.write('221 2.0.0 Bye\r\n'));
            else await peer.write('250 2.0.0 ok\r\n');
          }
        },
      });
      const zone: Zone = { 'dead.test': { a: ['127.0.0.25'] } };
      // A reject cap above this server's limit, so that it is the server that ends the session.
      const verify = verifierFor(zone, raw.port, { timeoutMs: 3_000, maxRejectsPerSession: 50 });
      const results = [];
      for (const email of emails(8, 'dead.test')) results.push(await verify.verify(email));
      expect(results.map((result) => result.sub_status)).toEqual([
        ...Array(4).fill('mailbox_not_found'),
        ...Array(4).fill('mail_server_temporary_error'),
      ]);
      expect(raw.connections()).toBe(1);
    } finally {
      await raw?.close();
    }
  });

  it('validates mxBackoffMs', () => {
    for (const bad of [-1, 1.5, 3_600_001, '30000', Number.NaN]) {
      expect(() => createVerifier({ mxBackoffMs: bad as never })).toThrow(OptionsError);
      expect(() => createVerifier({ mxBackoffMs: bad as never })).toThrow(/mxBackoffMs/);
    }
    for (const good of [0, 1, 3_600_000]) expect(() => createVerifier({ mxBackoffMs: good })).not.toThrow();
  });
});

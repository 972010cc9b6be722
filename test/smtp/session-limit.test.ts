/**
 * A refusal about the session, not the mailbox (`550 5.5.1 Too many invalid recipients`, "too many errors", a rate
 * limit), answered to `RCPT TO` by the real smtp-server on loopback: the address ends `unknown`/
 * `mail_server_temporary_error` (never `invalid`), and the mail host backs off (`mxBackoffMs`): no new session to it
 * meanwhile, the next MX is asked instead.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { staticResolver } from '../../src/testing/static-resolver.js';
import type { Zone } from '../../src/testing/zone.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { type MailboxBehaviour, type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const servers: SmtpServerHarness[] = [];
let verifier: Verifier | undefined;
afterEach(async () => {
  await verifier?.dispose();
  await Promise.all(servers.map((server) => server.close()));
  servers.length = 0;
  verifier = undefined;
});

async function serve(
  host: string,
  mailboxes: Record<string, MailboxBehaviour>,
  port?: number,
): Promise<SmtpServerHarness> {
  const server = await startSmtpServer({ host, mailboxes, ...(port === undefined ? {} : { port }) });
  servers.push(server);
  return server;
}

function verifierFor(zone: Zone, port: number): Verifier {
  verifier = createVerifier({
    resolver: staticResolver(zone),
    smtpPort: port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'limits.mailvet-test.net',
    catchAll: false,
    timeoutMs: 3_000,
    mxBackoffMs: 30_000,
  });
  return verifier;
}

describe('a refusal about the session on RCPT', () => {
  it.each([
    ['550 5.5.1 Too many invalid recipients', { code: 550, message: '5.5.1 Too many invalid recipients' }],
    ['550 too many errors', { code: 550, message: 'too many errors' }],
    ['550 5.1.1 too many errors', { code: 550, message: '5.1.1 too many errors' }],
    ['451 4.7.1 rate limit exceeded', { code: 451, message: '4.7.1 rate limit exceeded' }],
  ] as const)('%s is unknown/mail_server_temporary_error and backs the host off', async (_, reply) => {
    const smtp = await serve('127.0.0.31', { burst: reply, alice: 'ok', bob: 'ok' });
    const verify = verifierFor({ 'one.test': { a: ['127.0.0.31'] } }, smtp.port);

    const refused = await verify.verify('burst@one.test');
    expect(`${refused.status}/${refused.sub_status}`).toBe('unknown/mail_server_temporary_error');
    expect(refused.reason).toContain(reply.message);
    expect(smtp.connections()).toBe(1);

    // The host backs off: a later verification opens no session to it, and with no other MX ends unknown at once.
    const later = await verify.verify('alice@one.test');
    expect(`${later.status}/${later.sub_status}`).toBe('unknown/mail_server_temporary_error');
    expect(later.reason).toMatch(/left alone/);
    expect(smtp.connections()).toBe(1);
    expect(smtp.rcpts()).toEqual(['burst@one.test']);
  });

  it('sends the next verification to the next MX while the first backs off', async () => {
    const first = await serve('127.0.0.32', { burst: { code: 550, message: '5.7.1 too many errors' } });
    const second = await serve('127.0.0.33', { alice: 'ok' }, first.port);
    const zone: Zone = {
      'two.test': {
        mx: [
          { priority: 10, exchange: 'mx1.two.test' },
          { priority: 20, exchange: 'mx2.two.test' },
        ],
      },
      'mx1.two.test': { a: ['127.0.0.32'] },
      'mx2.two.test': { a: ['127.0.0.33'] },
    };
    const verify = verifierFor(zone, first.port);
    const refused = await verify.verify('burst@two.test');
    expect(`${refused.status}/${refused.sub_status}`).toBe('unknown/mail_server_temporary_error');
    expect(refused.mx_record).toBe('mx1.two.test');

    const next = await verify.verify('alice@two.test');
    expect(next.status).toBe('valid');
    expect(next.mx_record).toBe('mx2.two.test');
    expect(first.connections()).toBe(1);
    expect(first.rcpts()).toEqual(['burst@two.test']);
    expect(second.rcpts()).toEqual(['alice@two.test']);
  });

  it('a "user unknown" for a recipient whose name reads like a limit stays invalid, and backs nothing off', async () => {
    const smtp = await serve('127.0.0.34', {
      'ratelimit@one.test': { code: 550, message: '5.1.1 <ratelimit@one.test>: Recipient address rejected' },
      alice: 'ok',
    });
    const verify = verifierFor({ 'one.test': { a: ['127.0.0.34'] } }, smtp.port);
    const refused = await verify.verify('ratelimit@one.test');
    expect(`${refused.status}/${refused.sub_status}`).toBe('invalid/mailbox_not_found');
    const next = await verify.verify('alice@one.test');
    expect(next.status).toBe('valid');
  });
});

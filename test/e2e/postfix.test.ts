/**
 * Kinder to mail servers, against a real Postfix (issue 10): the 2,000 addresses of fixtures/postfix/addresses.csv
 * verified with mailvet's defaults against the Postfix of scripts/postfix-loopback.sh (Postfix's default error
 * limits), with DNS from a dns2 server on loopback. Postfix must log no "too many errors" disconnect, no session
 * may reach its soft error limit, and every status must be the truth.
 *
 * Runs when MAILVET_TEST_POSTFIX=1 (as root: scripts/postfix-loopback.sh start first); skipped with a notice
 * otherwise. The log parser it relies on is tested on real Postfix lines always.
 */
import { describe, expect, it } from 'vitest';
import {
  parsePostfixLog,
  postfixAddresses,
  postfixEndpoint,
  postfixGreets,
  runAgainstPostfix,
} from '../support/postfix.js';

const enabled = process.env.MAILVET_TEST_POSTFIX === '1';
if (!enabled) {
  console.warn(
    'MAILVET_TEST_POSTFIX is not 1: the real-Postfix loopback tests are skipped (scripts/postfix-loopback.sh start, then MAILVET_TEST_POSTFIX=1)',
  );
}

/** Postfix's default smtpd_soft_error_limit: past it, every reply of the session is slowed by 1 s. */
const SOFT_ERROR_LIMIT = 10;

describe('parsePostfixLog', () => {
  const LOG = [
    'Nov 25 17:23:57 mx mailvet-postfix/smtpd[15439]: connect from unknown[127.0.0.1]',
    'Nov 25 17:23:57 mx mailvet-postfix/smtpd[15439]: NOQUEUE: reject: RCPT from unknown[127.0.0.1]: 550 5.1.1 <a@alpha.mailvet.test>: Recipient address rejected: User unknown in local recipient table; from=<verify@mx> to=<a@alpha.mailvet.test> proto=ESMTP helo=<mx>',
    'Nov 25 17:23:57 mx mailvet-postfix/smtpd[15439]: too many errors after RCPT from unknown[127.0.0.1]',
    'Nov 25 17:23:57 mx mailvet-postfix/smtpd[15439]: disconnect from unknown[127.0.0.1] ehlo=1 mail=1 rcpt=0/20 commands=2/22',
    'Nov 25 17:24:14 mx mailvet-postfix/smtpd[14524]: disconnect from unknown[127.0.0.1] ehlo=1 mail=1 rcpt=9/20 quit=1 commands=12/23',
    'Nov 25 17:24:15 mx mailvet-postfix/smtpd[14524]: disconnect from unknown[127.0.0.1] ehlo=1 mail=1 rcpt=4 quit=1 commands=7',
    'Nov 25 17:24:16 mx mailvet-postfix/smtpd[14524]: lost connection after CONNECT from unknown[127.0.0.1]',
    'Nov 25 17:24:16 mx mailvet-postfix/smtpd[14524]: disconnect from unknown[127.0.0.1] commands=0/0',
  ].join('\n');

  it("reads sessions, RCPTs, each session's errors and the hard-limit disconnects", () => {
    expect(parsePostfixLog(LOG)).toEqual({
      sessions: 4,
      rcpts: 44,
      errorsPerSession: [20, 11, 0, 0],
      tooManyErrors: 1,
    });
  });

  it('ignores other programs, garbage and cut lines', () => {
    const noise = [
      'Nov 25 17:24:16 mx mailvet-postfix/cleanup[1]: disconnect from unknown[127.0.0.1] rcpt=1/9 commands=1/9',
      'Nov 25 17:24:16 mx mailvet-postfix/postfix-script[2]: too many errors after RCPT from x',
      'disconnect from unknown[127.0.0.1] rcpt=1/9',
      'Nov 25 17:24:16 mx mailvet-postfix/smtpd[3]: disconnect from unknown[127.0.0.1] rcpt=x/y commands=/',
      '\u0000\u00ff'.repeat(100),
      '',
    ].join('\n');
    expect(parsePostfixLog(noise)).toEqual({
      sessions: 1,
      rcpts: 0,
      errorsPerSession: [0],
      tooManyErrors: 0,
    });
  });
});

describe.skipIf(!enabled)('against a real Postfix on loopback (default error limits)', () => {
  const endpoint = postfixEndpoint();

  it('greets on its loopback port', async () => {
    expect(
      await postfixGreets(endpoint),
      `no Postfix on 127.0.0.1:${endpoint.port}: scripts/postfix-loopback.sh start`,
    ).toBe(true);
  });

  it('verifies 2,000 addresses with the defaults: no "too many errors", no slowed session, every status right', async () => {
    const addresses = postfixAddresses();
    const report = await runAgainstPostfix(endpoint, addresses);

    // Both sides saw the same sessions and RCPTs (so the log was read, and a zero below means something).
    expect(report.log.sessions).toBe(report.wire.connections);
    expect(report.log.rcpts).toBe(report.wire.rcpts);
    expect(report.wire.rcpts).toBeGreaterThanOrEqual(addresses.length);

    expect(report.log.tooManyErrors).toBe(0);
    expect(report.wire.tooManyErrors).toBe(0);
    expect(report.wire.replies421).toBe(0);
    expect(Math.max(...report.log.errorsPerSession)).toBeLessThan(SOFT_ERROR_LIMIT);

    expect(report.wrong).toEqual([]);
    const exist = addresses.filter((address) => address.exists).length;
    expect(report.statuses).toEqual({ valid: exist, invalid: addresses.length - exist });
  }, 120_000);

  it('counts a refused MAIL FROM and the RCPT TOs pipelined behind it: no "too many errors" for a refused sender', async () => {
    // Postfix refuses this sender at MAIL FROM, then answers every RCPT TO of the group "503 5.5.1 Error: need MAIL
    // command", each one an error of the session; before the pool counted them, a reused session ran into the
    // hard limit.
    const addresses = postfixAddresses().slice(0, 120);
    const report = await runAgainstPostfix(endpoint, addresses, {
      mailFrom: 'verify@refused-sender.mailvet.test',
      perMxConcurrency: 1,
      catchAll: false,
    });
    expect(report.log.sessions).toBe(report.wire.connections);
    expect(report.log.tooManyErrors).toBe(0);
    expect(report.wire.tooManyErrors).toBe(0);
    expect(report.wire.replies421).toBe(0);
    // A group holds no more recipients than the cap (8) has left; its own refused MAIL FROM is the one over.
    expect(Math.max(...report.log.errorsPerSession)).toBeLessThanOrEqual(9);
    expect(Object.keys(report.subStatuses)).toHaveLength(1);
    expect(report.statuses.unknown).toBe(addresses.length);
  }, 120_000);

  it('sees the hard limit when a session is let past it (maxRejectsPerSession 20, as before issue 10)', async () => {
    // One session of 20 unknown recipients: Postfix slows replies after the 10th error, and after the 20th says
    // "421 4.7.0 ... Error: too many errors" and hangs up. Long budgets so that the client sits it out.
    const dead = Array.from({ length: 20 }, (_, index) => ({
      email: `nobody${index}@alpha.mailvet.test`,
      exists: false,
    }));
    const report = await runAgainstPostfix(
      endpoint,
      dead,
      {
        maxRejectsPerSession: 20,
        mxBackoffMs: 0,
        perMxConcurrency: 1,
        catchAll: false,
        timeoutMs: 40_000,
        replyTimeoutMs: 20_000,
      },
      20,
    );
    expect(report.log.tooManyErrors).toBe(1);
    expect(report.log.errorsPerSession).toEqual([20]);
    expect(report.wire.tooManyErrors).toBe(1);
    expect(report.statuses).toEqual({ invalid: 20 });
  }, 90_000);
});

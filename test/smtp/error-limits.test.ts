/**
 * Kinder to mail servers (issue 10): a raw loopback server that counts errors per session as Postfix does
 * (`smtpd_soft_error_limit` 10, `smtpd_hard_error_limit` 20: "421 too many errors" and a dropped session). A list
 * of mostly dead addresses must never reach the soft limit in one session.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { type RawServerHarness, startRawServer } from '../support/raw-server.js';

let server: RawServerHarness | undefined;
let verifier: Verifier | undefined;
afterEach(async () => {
  await verifier?.dispose();
  await server?.close();
  server = undefined;
  verifier = undefined;
});

/** What a {@link postfixLike} server saw. */
interface ErrorCounts {
  /** Errors of each session, as Postfix counts them (every refused command). */
  readonly errorsPerSession: number[];
  /** Sessions dropped at the hard limit with "421 too many errors". */
  disconnectsForErrors: number;
}

/**
 * A raw server on 127.0.0.8 that counts a session's errors as Postfix does and drops it at the 20th. `answer`
 * gives the reply to MAIL FROM and RCPT TO lines; a reply that does not start with 2 is an error.
 */
async function postfixLike(ehlo: string, answer: (verb: 'MAIL' | 'RCPT', line: string) => string) {
  const counts: ErrorCounts = { errorsPerSession: [], disconnectsForErrors: 0 };
  server = await startRawServer({
    host: '127.0.0.8',
    script: async (peer) => {
      let errors = 0;
      await peer.write('220 mx.test.local ESMTP Postfix\r\n');
      try {
        for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
          const verb = line.split(/[ :]/, 1)[0]!.toUpperCase();
          if (verb === 'EHLO') await peer.write(ehlo);
          else if (verb === 'RSET') await peer.write('250 2.0.0 ok\r\n');
          else if (verb === 'MAIL' || verb === 'RCPT') {
            const reply = answer(verb, line);
            if (!reply.startsWith('2')) errors++;
            if (errors >= 20) {
              counts.disconnectsForErrors++;
              await peer.write('421 4.7.0 mx.test.local Error: too many errors\r\n');
              return;
            }
            await peer.write(reply);
          } else if (verb === 'QUIT') {
            await peer.write('221 2.0.0 Bye\r\n');
            return;
          } else await peer.write('502 5.5.2 Error: command not recognized\r\n');
        }
      } finally {
        counts.errorsPerSession.push(errors);
      }
    },
  });
  verifier = createVerifier({
    resolver: staticResolver({ 'dead.test': { a: ['127.0.0.8'] } }),
    smtpPort: server.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'limits.mailvet-test.net',
    catchAll: false,
    perMxConcurrency: 1,
    timeoutMs: 10_000,
  });
  return { counts, verifier };
}

const EHLO = {
  'one command at a time': '250-mx.test.local\r\n250 8BITMIME\r\n',
  pipelined: '250-mx.test.local\r\n250 PIPELINING\r\n',
};

describe('rejected recipients per session', () => {
  it.each(Object.entries(EHLO))('stay below Postfix soft error limit, %s', async (_, ehlo) => {
    const { counts, verifier: verify } = await postfixLike(ehlo, (verb, line) =>
      verb === 'MAIL' || line.includes('<live')
        ? '250 2.1.5 ok\r\n'
        : '550 5.1.1 <x>: Recipient address rejected: User unknown\r\n',
    );
    const emails = Array.from({ length: 60 }, (_, i) => `${i % 6 === 0 ? 'live' : 'dead'}${i}@dead.test`);
    const results = await Promise.all(emails.map((email) => verify.verify(email)));
    expect(results.filter((result) => result.status === 'valid')).toHaveLength(10);
    expect(results.filter((result) => result.sub_status === 'mailbox_not_found')).toHaveLength(50);
    await verify.dispose();
    verifier = undefined;
    expect(counts.disconnectsForErrors).toBe(0);
    expect(Math.max(...counts.errorsPerSession)).toBeLessThanOrEqual(8);
  });

  it.each([
    ['one command at a time', EHLO['one command at a time'], 8],
    // A group opened by a refused MAIL FROM adds that refusal to its own recipients: at most one over the cap.
    ['pipelined', EHLO.pipelined, 9],
  ])('count a refused MAIL FROM and what it spoils as errors, %s', async (_, ehlo, most) => {
    // Postfix counts each refused command: the MAIL FROM, then every RCPT TO that finds no envelope (503).
    const { counts, verifier: verify } = await postfixLike(ehlo, (verb) =>
      verb === 'MAIL'
        ? '553 5.7.1 <verify@limits.mailvet-test.net>: Sender address rejected\r\n'
        : '503 5.5.1 Error: need MAIL command\r\n',
    );
    const emails = Array.from({ length: 60 }, (_, i) => `user${i}@dead.test`);
    const results = await Promise.all(emails.map((email) => verify.verify(email)));
    expect(new Set(results.map((result) => `${result.status}/${result.sub_status}`))).toEqual(
      new Set([`${results[0]!.status}/${results[0]!.sub_status}`]),
    );
    expect(results[0]!.status).toBe('unknown');
    await verify.dispose();
    verifier = undefined;
    expect(counts.disconnectsForErrors).toBe(0);
    expect(Math.max(...counts.errorsPerSession)).toBeLessThanOrEqual(most);
  });

  it('validates maxRejectsPerSession', () => {
    for (const bad of [0, -1, 1.5, 1001, '8'])
      expect(() => createVerifier({ maxRejectsPerSession: bad as never })).toThrow(/maxRejectsPerSession/);
  });
});

/**
 * Reply desync (issue 16 item 2): a server that sends more replies than commands must never shift a reply onto
 * the next address of a pooled session. Real loopback servers (raw TCP scripts), the real node:net transport.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { type RawPeer, type RawServerHarness, startRawServer } from '../support/raw-server.js';

let server: RawServerHarness | undefined;
let verifier: Verifier | undefined;
afterEach(async () => {
  await verifier?.dispose();
  await server?.close();
  server = undefined;
  verifier = undefined;
});

const EHLO = '250-mx.test.local\r\n250 8BITMIME\r\n';

/**
 * Answers commands one by one; `rcpt` gives the bytes for each RCPT TO line (several strings: one write each, the
 * next once the previous is written), `ehlo` the reply to EHLO.
 */
async function converse(
  peer: RawPeer,
  rcpt: (line: string) => string | readonly string[],
  ehlo = EHLO,
): Promise<void> {
  for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
    const verb = line.split(/[ :]/, 1)[0]!.toUpperCase();
    if (verb === 'EHLO') await peer.write(ehlo);
    else if (verb === 'MAIL' || verb === 'RSET') await peer.write('250 2.0.0 ok\r\n');
    else if (verb === 'RCPT') for (const bytes of [rcpt(line)].flat()) await peer.write(bytes);
    else if (verb === 'QUIT') {
      await peer.write('221 2.0.0 bye\r\n');
      return;
    } else await peer.write('502 5.5.1 what\r\n');
  }
}

function verifierFor(port: number): Verifier {
  return createVerifier({
    resolver: staticResolver({ 'desync.test': { a: ['127.0.0.5'] } }),
    smtpPort: port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'desync.mailvet-test.net',
    catchAll: false,
    timeoutMs: 5000,
  });
}

describe('SMTP reply desync', () => {
  it('an extra reply after RCPT never lands on the next address of the pooled session', async () => {
    server = await startRawServer({
      host: '127.0.0.5',
      script: async (peer) => {
        await peer.write('220 mx.test.local ESMTP\r\n');
        await converse(peer, (line) =>
          line.includes('<bad@')
            ? '550 5.1.1 no such user\r\n550 5.1.1 no such user\r\n' // one reply too many
            : '250 2.1.5 ok\r\n',
        );
      },
    });
    verifier = verifierFor(server.port);
    const bad = await verifier.verify('bad@desync.test');
    expect(bad).toMatchObject({ status: 'invalid', sub_status: 'mailbox_not_found' });
    for (const email of ['good@desync.test', 'also.good@desync.test']) {
      const result = await verifier.verify(email);
      expect(result.status, email).not.toBe('invalid');
      expect(result.status, email).toBe('valid');
    }
  });

  it.each([
    ['a doubled greeting', '220 mx.test.local ESMTP\r\n220 mx.test.local ESMTP again\r\n'],
    ['lines before EHLO', '220 mx.test.local ESMTP\r\n250 nobody asked\r\n'],
  ])('%s gives unknown, never a definitive verdict', async (_, greeting) => {
    server = await startRawServer({
      host: '127.0.0.5',
      script: async (peer) => {
        await peer.write(greeting);
        await peer.sleep(20);
        await converse(peer, () => '550 5.1.1 no such user\r\n');
      },
    });
    verifier = verifierFor(server.port);
    const result = await verifier.verify('someone@desync.test');
    expect(result.status).toBe('unknown');
    expect(result.sub_status).toBe('smtp_protocol_error');
  });
});

describe('SMTP reply desync with verifications in flight (issue 28)', () => {
  const addresses = ['good1', 'bad1', 'good2', 'bad2', 'good3'];
  const truth = (local: string) => (local.startsWith('bad') ? 'invalid' : 'valid');

  it.each([
    ['one command at a time', EHLO],
    ['pipelined groups', '250-mx.test.local\r\n250 PIPELINING\r\n'],
  ])('%s: a line sent late, in a write of its own, never decides the next address', async (_, ehlo) => {
    server = await startRawServer({
      host: '127.0.0.5',
      script: async (peer) => {
        await peer.write('220 mx.test.local ESMTP\r\n');
        let rcpts = 0;
        await converse(
          peer,
          (line) => {
            const reply = line.includes('<bad') ? '550 5.1.1 no such user\r\n' : '250 2.1.5 ok\r\n';
            rcpts += 1;
            return rcpts === 1 ? [reply, '250 2.1.5 ok\r\n'] : reply; // one line too many after the first reply
          },
          ehlo,
        );
      },
    });
    verifier = verifierFor(server.port);
    const results = await Promise.all(addresses.map((local) => verifier!.verify(`${local}@desync.test`)));
    for (const [index, local] of addresses.entries()) {
      expect([truth(local), 'unknown'], local).toContain(results[index]!.status);
    }
  });
});

describe('quoted local parts with <, > or \\" (issue 16 item 6)', () => {
  it.each([
    ['"a<b>c"@desync.test', 'RCPT TO:<"a<b>c"@desync.test>'],
    ['"john \\"jd\\" doe"@desync.test', 'RCPT TO:<"john \\"jd\\" doe"@desync.test>'],
    ['"x y"@desync.test', 'RCPT TO:<"x y"@desync.test>'],
  ])('sends %s correctly quoted and gives the server verdict', async (email, wire) => {
    const received: string[] = [];
    server = await startRawServer({
      host: '127.0.0.5',
      script: async (peer) => {
        await peer.write('220 mx.test.local ESMTP\r\n');
        await converse(peer, (line) => {
          received.push(line);
          return '550 5.1.1 no such user\r\n';
        });
      },
    });
    verifier = createVerifier({
      resolver: staticResolver({ 'desync.test': { a: ['127.0.0.5'] } }),
      smtpPort: server.port,
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      allowQuotedLocal: true,
      heloHost: 'desync.mailvet-test.net',
      catchAll: false,
      timeoutMs: 5000,
    });
    const result = await verifier.verify(email);
    expect(result).toMatchObject({ status: 'invalid', sub_status: 'mailbox_not_found' });
    expect(received).toEqual([wire]);
  });
});

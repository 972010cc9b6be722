/**
 * Reply desync under concurrency (issue 28): a server that writes one line no command asked for, while several
 * verifications share its pooled sessions, must never turn a refused mailbox into `valid` (or an accepted one into
 * `invalid`). Real loopback servers (raw TCP scripts), the real node:net transport, the verifier's pool.
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

const ADDRESSES = ['good1', 'bad1', 'good2', 'bad2', 'good3'];
const truth = (local: string) => (local.startsWith('bad') ? 'invalid' : 'valid');

/**
 * A mail host that answers every command truthfully, and after the reply to the first RCPT TO of each connection
 * writes one more line, `250 2.1.5 ok`, in a write of its own once the reply has gone out.
 */
function surplusAfterFirstRcpt(pipelining: boolean) {
  return async (peer: RawPeer) => {
    await peer.write('220 mx.test.local ESMTP\r\n');
    let rcpts = 0;
    for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
      const verb = line.split(/[ :]/, 1)[0]!.toUpperCase();
      if (verb === 'EHLO') {
        await peer.write(
          pipelining ? '250-mx.test.local\r\n250 PIPELINING\r\n' : '250-mx.test.local\r\n250 8BITMIME\r\n',
        );
      } else if (verb === 'MAIL' || verb === 'RSET') await peer.write('250 2.0.0 ok\r\n');
      else if (verb === 'RCPT') {
        rcpts += 1;
        await peer.write(line.includes('<bad') ? '550 5.1.1 no such user\r\n' : '250 2.1.5 ok\r\n');
        if (rcpts === 1) await peer.write('250 2.1.5 ok\r\n');
      } else if (verb === 'QUIT') {
        await peer.write('221 2.0.0 bye\r\n');
        return;
      } else await peer.write('502 5.5.1 what\r\n');
    }
  };
}

function verifierFor(port: number): Verifier {
  return createVerifier({
    resolver: staticResolver({ 'desync.test': { a: ['127.0.0.6'] } }),
    smtpPort: port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'desync.mailvet-test.net',
    catchAll: false,
    timeoutMs: 5000,
  });
}

describe('SMTP reply desync with verifications in flight', () => {
  it.each([
    ['one command at a time', false],
    ['pipelined groups', true],
  ])(
    '%s: no definitive verdict differs from what the server said for that address',
    async (_, pipelining) => {
      server = await startRawServer({ host: '127.0.0.6', script: surplusAfterFirstRcpt(pipelining) });
      verifier = verifierFor(server.port);
      const results = await Promise.all(ADDRESSES.map((local) => verifier!.verify(`${local}@desync.test`)));
      for (const [index, local] of ADDRESSES.entries()) {
        expect([truth(local), 'unknown'], local).toContain(results[index]!.status);
      }
    },
  );
});

/**
 * A session the pool has no further use for (its recipient cap reached, the catch-all probe's own, or no idle
 * reuse) ends its last pipelined group with QUIT (RFC 2920 §3.1): one write and one round trip fewer per session.
 * A raw loopback server that offers PIPELINING records, for each command, whether QUIT came in the same write.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { VerifyOptions } from '../../src/options.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { DEFAULT_REPLIES, type RawServerHarness, startRawServer } from '../support/raw-server.js';

/** One session as the server saw it. */
interface SeenSession {
  /** Its commands after EHLO, in order (RCPT TO whole, the others by verb). */
  readonly commands: string[];
  /** Whether QUIT was already in when the command before it was read: sent in the same write. */
  quitWithGroup?: boolean;
  /** Whether the client was still there to take the 221. */
  byeDelivered?: boolean;
}

let server: RawServerHarness | undefined;
let verifier: Verifier | undefined;
afterEach(async () => {
  await verifier?.dispose();
  await server?.close();
  server = undefined;
  verifier = undefined;
});

/**
 * A PIPELINING server on 127.0.0.22. `rcptReply(line, index)` answers the `index`-th RCPT TO of an envelope (0
 * first); the 221 to QUIT waits for `byeGate` when one is given.
 */
async function pipeliningServer(
  options: { rcptReply?: (line: string, index: number) => string; byeGate?: Promise<void> } = {},
): Promise<SeenSession[]> {
  const seen: SeenSession[] = [];
  server = await startRawServer({
    host: '127.0.0.22',
    script: async (peer) => {
      const session: SeenSession = { commands: [] };
      const { commands } = session;
      seen.push(session);
      await peer.write('220 mx.quit.test ESMTP\r\n');
      await peer.readLine(); // EHLO
      await peer.write('250-mx.quit.test\r\n250 PIPELINING\r\n');
      let envelope = 0;
      let groupGoesOn = false; // whether more lines were buffered when the last command was read
      const replies: string[] = [];
      for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
        const verb = line.split(/[ :]/, 1)[0]!.toUpperCase();
        commands.push(verb === 'RCPT' ? line : verb);
        if (verb === 'QUIT') {
          session.quitWithGroup = groupGoesOn;
          await peer.write(replies.splice(0).join(''));
          await options.byeGate;
          session.byeDelivered = await peer.write('221 2.0.0 bye\r\n');
          return;
        }
        if (verb === 'MAIL') envelope = 0;
        const reply =
          verb === 'RCPT' ? (options.rcptReply?.(line, envelope++) ?? '250 2.1.5 ok') : DEFAULT_REPLIES[verb];
        replies.push(`${typeof reply === 'string' ? reply : '502 5.5.1 no'}\r\n`);
        groupGoesOn = peer.buffered() > 0;
        // A group is answered once all of it has been read; QUIT at its end is answered with it.
        if (!groupGoesOn) await peer.write(replies.splice(0).join(''));
      }
    },
  });
  return seen;
}

function verifierFor(overrides: Partial<VerifyOptions>): Verifier {
  return createVerifier({
    resolver: staticResolver({ 'quit.test': { a: ['127.0.0.22'] } }),
    smtpPort: server!.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'quit.mailvet-test.net',
    catchAll: false,
    perMxConcurrency: 1,
    ...overrides,
  });
}

describe('QUIT at the end of a session’s last pipelined group', () => {
  it('goes in the same write as the group that reaches maxRcptPerSession', async () => {
    const seen = await pipeliningServer();
    verifier = verifierFor({ maxRcptPerSession: 3 });
    const results = await Promise.all(['a', 'b', 'c'].map((name) => verifier!.verify(`${name}@quit.test`)));
    expect(results.map((result) => result.status)).toEqual(['valid', 'valid', 'valid']);
    await verifier.dispose();
    expect(seen).toHaveLength(1);
    const [session] = seen;
    expect(session!.commands.filter((verb) => verb.startsWith('RCPT'))).toHaveLength(3);
    expect(session!.commands.filter((verb) => verb === 'QUIT')).toHaveLength(1);
    expect(session!.commands.at(-1)).toBe('QUIT');
    expect(session).toMatchObject({ quitWithGroup: true, byeDelivered: true });
  });

  it('frees the slot as the group is answered, and still waits for the late 221 before closing', async () => {
    let sayBye = () => {};
    const byeGate = new Promise<void>((resolve) => {
      sayBye = resolve;
    });
    const seen = await pipeliningServer({ byeGate });
    verifier = verifierFor({ maxRcptPerSession: 1 });
    // Three sessions one after another on one slot (perMxConcurrency 1), every 221 held back by the server: had a
    // session kept its slot until its 221, the second verification would never have started.
    for (const name of ['a', 'b', 'c']) {
      expect((await verifier.verify(`${name}@quit.test`)).status).toBe('valid');
    }
    expect(seen.map((session) => session.byeDelivered)).toEqual([undefined, undefined, undefined]);
    sayBye();
    await verifier.dispose(); // waits for the 221s (within the pool's 2 s grace)
    expect(seen.map((session) => session.commands)).toEqual(
      ['a', 'b', 'c'].map((name) => ['MAIL', `RCPT TO:<${name}@quit.test>`, 'QUIT']),
    );
    for (const session of seen) expect(session).toMatchObject({ quitWithGroup: true, byeDelivered: true });
  });

  it('sends a recipient refused with 452 (too many recipients) in the quitting group again on a new session', async () => {
    const seen = await pipeliningServer({
      rcptReply: (_line, index) => (index === 0 ? '250 2.1.5 ok' : '452 4.5.3 too many recipients'),
    });
    verifier = verifierFor({ maxRcptPerSession: 2 });
    const results = await Promise.all(['a', 'b'].map((name) => verifier!.verify(`${name}@quit.test`)));
    expect(results.map((result) => result.status)).toEqual(['valid', 'valid']);
    await verifier.dispose();
    expect(seen).toHaveLength(2);
    expect(seen[0]!.commands.at(-1)).toBe('QUIT');
    expect(seen[1]!.commands.slice(0, 2)).toEqual(['MAIL', 'RCPT TO:<b@quit.test>']);
  });

  it('ends the catch-all probe’s own session: MAIL FROM, RCPT TO and QUIT in one write', async () => {
    const seen = await pipeliningServer();
    verifier = verifierFor({ catchAll: true });
    const result = await verifier.verify('a@quit.test');
    expect(result.status).toBe('catch_all');
    await verifier.dispose();
    expect(seen).toHaveLength(2);
    const [address, probe] = seen;
    expect(probe!.commands).toHaveLength(3);
    expect(probe!.commands[0]).toBe('MAIL');
    expect(probe!.commands[1]).toMatch(/^RCPT TO:<[^@]+@quit\.test>$/);
    expect(probe).toMatchObject({ quitWithGroup: true, byeDelivered: true });
    // The address's session could have served more: it was kept for reuse, and QUIT went on its own at dispose.
    expect(address!.commands).toEqual(['MAIL', 'RCPT TO:<a@quit.test>', 'QUIT']);
    expect(address).toMatchObject({ quitWithGroup: false, byeDelivered: true });
  });
});

/**
 * QUIT gives the per-MX slot back as it is sent (issue 10): the next session to a host does not wait for the
 * `221`. A raw loopback server that holds its QUIT reply back shows it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { DEFAULT_REPLIES, type RawServerHarness, startRawServer } from '../support/raw-server.js';

const QUIT_DELAY_MS = 1_500;

let server: RawServerHarness | undefined;
let verifier: Verifier | undefined;
afterEach(async () => {
  await verifier?.dispose();
  await server?.close();
  server = undefined;
  verifier = undefined;
});

describe('QUIT and the per-MX slot', () => {
  it('frees the slot when QUIT is sent, before the server answers it', async () => {
    let open = 0;
    let peak = 0;
    const quitsAnswered: number[] = [];
    server = await startRawServer({
      host: '127.0.0.21',
      script: async (peer) => {
        open++;
        peak = Math.max(peak, open);
        try {
          await peer.write('220 mx.test.local ESMTP\r\n');
          for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
            const verb = line.split(/[ :]/, 1)[0]!.toUpperCase();
            if (verb === 'QUIT') {
              await peer.sleep(QUIT_DELAY_MS);
              quitsAnswered.push(performance.now());
              await peer.write('221 2.0.0 bye\r\n');
              return;
            }
            const reply = verb === 'EHLO' ? ['250-mx.test.local', '250 8BITMIME'] : DEFAULT_REPLIES[verb];
            const lines = typeof reply === 'string' ? [reply] : (reply ?? ['502 5.5.1 no']);
            await peer.write(lines.map((text) => `${text}\r\n`).join(''));
          }
        } finally {
          open--;
        }
      },
    });
    verifier = createVerifier({
      resolver: staticResolver({ 'quit.test': { a: ['127.0.0.21'] } }),
      smtpPort: server.port,
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      heloHost: 'quit.mailvet-test.net',
      catchAll: false,
      perMxConcurrency: 1,
      maxRcptPerSession: 1, // every session is quit after its one address
    });
    const started = performance.now();
    for (const name of ['a', 'b', 'c']) {
      expect((await verifier.verify(`${name}@quit.test`)).status).toBe('valid');
    }
    const elapsed = performance.now() - started;
    // Three sessions, one after another on one slot, each quit: none waited for a 221.
    expect(server.connections()).toBe(3);
    expect(quitsAnswered).toHaveLength(0);
    expect(elapsed).toBeLessThan(QUIT_DELAY_MS);
    // The server did see a new session while an old one was still waiting for its 221.
    expect(peak).toBeGreaterThan(1);
  });
});

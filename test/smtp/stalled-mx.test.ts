/**
 * A primary MX that greets and then stalls must give way to the backup MX (issue 16 item 3): every reply has its
 * own timeout (`replyTimeoutMs`). Two raw loopback servers on one port (127.0.0.6 stalls, 127.0.0.7 answers).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createVerifier } from '../../src/verifier.js';

const sockets = new Set<Socket>();
let stalling: Server;
let answering: Server;
let port: number;

function listen(server: Server, host: string, on: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(on, host, () => resolve((server.address() as { port: number }).port));
  });
}

beforeAll(async () => {
  stalling = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.write('220 mx1.stall.test ESMTP\r\n'); // and never another word
  });
  answering = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.write('220 mx2.stall.test ESMTP\r\n');
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      for (let end = buffer.indexOf('\r\n'); end !== -1; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end).toUpperCase();
        buffer = buffer.slice(end + 2);
        if (line.startsWith('QUIT')) socket.end('221 bye\r\n');
        else if (line.startsWith('EHLO')) socket.write('250 mx2.stall.test\r\n');
        else socket.write('250 2.0.0 ok\r\n');
      }
    });
  });
  port = await listen(stalling, '127.0.0.6', 0);
  await listen(answering, '127.0.0.7', port);
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all([stalling, answering].map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('a primary MX that greets and then stalls', () => {
  it('gives way to the backup MX after replyTimeoutMs, within the budget', async () => {
    const verifier = createVerifier({
      resolver: staticResolver({
        'stall.test': {
          mx: [
            { priority: 10, exchange: 'mx1.stall.test' },
            { priority: 20, exchange: 'mx2.stall.test' },
          ],
        },
        'mx1.stall.test': { a: ['127.0.0.6'] },
        'mx2.stall.test': { a: ['127.0.0.7'] },
      }),
      smtpPort: port,
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      heloHost: 'stall.mailvet-test.net',
      catchAll: false,
      timeoutMs: 4000,
      replyTimeoutMs: 500,
      trace: true,
    });
    try {
      const result = await verifier.verify('someone@stall.test');
      expect(result).toMatchObject({ status: 'valid', mx_record: 'mx2.stall.test' });
      expect(result.smtp_transcript?.join('\n')).toContain('mx1.stall.test');
    } finally {
      await verifier.dispose();
    }
  });
});

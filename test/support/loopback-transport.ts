/**
 * Helpers for end-to-end tests on loopback: a transport that reaches each 127.0.0.x mail host on the port
 * its test server really listens on, and a port that nothing listens on.
 * @module
 */
import { createServer } from 'node:net';
import { SmtpError } from '../../src/errors.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import type { Transport } from '../../src/smtp/types.js';

/**
 * A real TCP transport that connects to `ports[ip]` instead of the verifier's `smtpPort` (test SMTP servers
 * on 127.0.0.2, 127.0.0.3, ... each listen on their own random port). Addresses outside the map, or
 * outside 127.0.0.0/8, are refused without a packet sent.
 */
export function loopbackTransport(
  ports: Readonly<Record<string, number>>,
): Transport & { targets: string[] } {
  const tcp = tcpTransport();
  const targets: string[] = [];
  return {
    targets,
    async connect(target, options) {
      targets.push(target.host);
      const port = ports[target.host];
      if (port === undefined || !target.host.startsWith('127.')) {
        throw new SmtpError('connection', `test transport: no server mapped for ${target.host}`);
      }
      return tcp.connect({ ...target, port }, options);
    },
  };
}

/** A loopback port that was free a moment ago (connections to it are refused). */
export async function closedPort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

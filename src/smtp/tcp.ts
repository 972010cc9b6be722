/**
 * The default transport: a direct TCP connection with `node:net`.
 * @module
 */
import { isIP } from 'node:net';
import { OptionsError } from '../errors.js';
import { connectSocket } from './connect.js';
import { socketChannel } from './line-channel.js';
import type { Transport } from './types.js';

/** Options of {@link tcpTransport}. */
export interface TcpTransportOptions {
  /** Local IP address to connect from (the one whose PTR record matches `heloHost`). @default the OS's choice */
  readonly localAddress?: string;
  /** Verify the server's certificate on STARTTLS. @default false (see docs/smtp.md) */
  readonly verifyTls?: boolean;
}

/**
 * Connects straight to the mail server over TCP.
 * @example
 * const verifier = createVerifier({ transport: tcpTransport({ localAddress: '198.51.100.7' }) });
 */
export function tcpTransport(options: TcpTransportOptions = {}): Transport {
  const { localAddress, verifyTls = false } = options;
  if (localAddress !== undefined && (typeof localAddress !== 'string' || isIP(localAddress) === 0)) {
    throw new OptionsError('localAddress', 'must be an IPv4 or IPv6 address');
  }
  if (typeof verifyTls !== 'boolean') throw new OptionsError('verifyTls', 'must be a boolean');
  return {
    async connect(target, connectOptions) {
      const socket = await connectSocket(
        { host: target.host, port: target.port, ...(localAddress === undefined ? {} : { localAddress }) },
        connectOptions,
      );
      return socketChannel(socket, {
        maxLineLength: connectOptions.maxLineLength,
        verifyTls,
        ...(connectOptions.signal === undefined ? {} : { signal: connectOptions.signal }),
      });
    },
  };
}

/**
 * The contract every {@link Transport} must meet, as a vitest suite: run it for your own transport.
 * It starts its own peers on 127.0.0.1 (never anything else) and needs vitest.
 * @example
 * // test/my-transport.test.ts
 * import { transportContract } from 'mailvet/testing'; // or src/testing/transport-contract.js
 * transportContract('myTransport', () => myTransport());
 * @module
 */
import { createServer, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { isSmtpError } from '../errors.js';
import type { ConnectOptions, LineChannel, Transport } from '../smtp/types.js';

/** Options of {@link transportContract}. */
export interface TransportContractOptions {
  /** A key and certificate (PEM) for the STARTTLS case; without them the case is skipped. */
  readonly tls?: { readonly key: string; readonly cert: string; readonly servername: string };
  /** Per-operation timeout used by the suite, in milliseconds. @default 5000 */
  readonly timeoutMs?: number;
}

type PeerHandler = (socket: Socket, lines: LineReader) => void | Promise<void>;

/** Reads lines from a peer-side socket until released (for STARTTLS). */
interface LineReader {
  next(): Promise<string | null>;
  release(): void;
}

function lineReader(socket: Socket): LineReader {
  let buffered = '';
  const lines: string[] = [];
  const waiting: ((line: string | null) => void)[] = [];
  let ended = false;
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\r\n'); end >= 0; end = buffered.indexOf('\r\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const wake = waiting.shift();
      if (wake) wake(line);
      else lines.push(line);
    }
  };
  const onEnd = () => {
    ended = true;
    for (const wake of waiting.splice(0)) wake(null);
  };
  socket.on('data', onData);
  socket.on('close', onEnd);
  socket.on('error', onEnd);
  return {
    next() {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (ended) return Promise.resolve(null);
      return new Promise((resolve) => waiting.push(resolve));
    },
    release() {
      socket.off('data', onData);
      socket.off('close', onEnd);
      socket.off('error', onEnd);
    },
  };
}

async function withPeer<T>(handler: PeerHandler, body: (port: number) => Promise<T>): Promise<T> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
    Promise.resolve(handler(socket, lineReader(socket))).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await body((server.address() as { port: number }).port);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function failureOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isSmtpError(error) ? error.kind : `not an SmtpError: ${String(error)}`;
  }
  return 'no failure';
}

/**
 * Registers a vitest suite that checks `makeTransport()` against the {@link Transport} contract: line reading and
 * writing, reassembly, read timeouts that keep the channel open, disconnects, over-long lines, refused
 * connections, aborts, idempotent close, and STARTTLS when `options.tls` is given and the channel offers it.
 */
export function transportContract(
  name: string,
  makeTransport: () => Transport | Promise<Transport>,
  options: TransportContractOptions = {},
): void {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const connectOptions = (extra: Partial<ConnectOptions> = {}): ConnectOptions => ({
    timeoutMs,
    maxLineLength: 1024,
    ...extra,
  });
  const open = async (port: number, extra: Partial<ConnectOptions> = {}): Promise<LineChannel> =>
    (await makeTransport()).connect({ host: '127.0.0.1', port }, connectOptions(extra));

  describe(`Transport contract: ${name}`, () => {
    it('reads the lines of one packet and writes CRLF-terminated lines', async () => {
      let received = '';
      await withPeer(
        (socket) => {
          socket.write('220 hello\r\n250-a\r\n250 b\r\n');
          socket.on('data', (chunk) => {
            received += chunk.toString('latin1');
          });
        },
        async (port) => {
          const channel = await open(port);
          expect(await channel.readLine(timeoutMs)).toBe('220 hello');
          expect(await channel.readLine(timeoutMs)).toBe('250-a');
          expect(await channel.readLine(timeoutMs)).toBe('250 b');
          await channel.writeLine('EHLO probe.test');
          await expect.poll(() => received).toBe('EHLO probe.test\r\n');
          channel.close();
        },
      );
    });

    it('reassembles a line split across packets and accepts a bare LF', async () => {
      await withPeer(
        async (socket, lines) => {
          socket.write('22');
          await lines.next();
          socket.write('0 split line\n');
        },
        async (port) => {
          const channel = await open(port);
          const read = channel.readLine(timeoutMs);
          await channel.writeLine('GO');
          expect(await read).toBe('220 split line');
          channel.close();
        },
      );
    });

    it('times a read out without closing the channel', async () => {
      await withPeer(
        async (socket, lines) => {
          await lines.next();
          socket.write('250 late\r\n');
        },
        async (port) => {
          const channel = await open(port);
          expect(await failureOf(channel.readLine(20))).toBe('timeout');
          expect(channel.closed).toBe(false);
          await channel.writeLine('NEXT');
          expect(await channel.readLine(timeoutMs)).toBe('250 late');
          channel.close();
        },
      );
    });

    it('delivers buffered lines, then fails reads with disconnect when the peer closes', async () => {
      await withPeer(
        (socket) => {
          socket.end('220 bye\r\n');
        },
        async (port) => {
          const channel = await open(port);
          expect(await channel.readLine(timeoutMs)).toBe('220 bye');
          expect(await failureOf(channel.readLine(timeoutMs))).toBe('disconnect');
          expect(channel.closed).toBe(true);
          expect(await failureOf(channel.writeLine('QUIT'))).toBe('disconnect');
        },
      );
    });

    it('fails a line longer than maxLineLength with protocol and closes', async () => {
      await withPeer(
        (socket) => {
          socket.write(`220 ${'x'.repeat(256 * 1024)}`);
        },
        async (port) => {
          const channel = await open(port);
          expect(await failureOf(channel.readLine(timeoutMs))).toBe('protocol');
          expect(channel.closed).toBe(true);
        },
      );
    });

    it('rejects a refused connection with kind connection', async () => {
      const port = await closedPort();
      expect(await failureOf(open(port))).toBe('connection');
    });

    it('closes idempotently; reads and writes after close reject', async () => {
      await withPeer(
        (socket) => {
          socket.write('220 hi\r\n');
        },
        async (port) => {
          const channel = await open(port);
          channel.close();
          channel.close();
          expect(channel.closed).toBe(true);
          expect(await failureOf(channel.writeLine('QUIT'))).not.toBe('no failure');
          expect(await failureOf(channel.readLine(timeoutMs))).not.toBe('no failure');
        },
      );
    });

    it('aborts a pending read when the signal fires, and refuses an aborted signal up front', async () => {
      await withPeer(
        () => {},
        async (port) => {
          const controller = new AbortController();
          const channel = await open(port, { signal: controller.signal });
          const read = failureOf(channel.readLine(timeoutMs));
          controller.abort();
          expect(await read).toBe('aborted');
          expect(channel.closed).toBe(true);
          expect(await failureOf(open(port, { signal: AbortSignal.abort() }))).toBe('aborted');
        },
      );
    });

    const tls = options.tls;
    it.skipIf(tls === undefined)('upgrades with STARTTLS and keeps talking over TLS', async () => {
      if (tls === undefined) return;
      await withPeer(
        async (socket, lines) => {
          socket.write('220 ready\r\n');
          if ((await lines.next()) !== 'STARTTLS') return;
          lines.release();
          socket.write('220 go ahead\r\n');
          const secure = new TLSSocket(socket, { isServer: true, key: tls.key, cert: tls.cert });
          const secureLines = lineReader(secure);
          const line = await secureLines.next();
          secure.write(`250 over tls: ${line}\r\n`);
        },
        async (port) => {
          const channel = await open(port);
          if (channel.startTls === undefined) {
            channel.close();
            return;
          }
          expect(await channel.readLine(timeoutMs)).toBe('220 ready');
          await channel.writeLine('STARTTLS');
          expect(await channel.readLine(timeoutMs)).toBe('220 go ahead');
          await channel.startTls({ servername: tls.servername, timeoutMs });
          await channel.writeLine('EHLO probe.test');
          expect(await channel.readLine(timeoutMs)).toBe('250 over tls: EHLO probe.test');
          channel.close();
        },
      );
    });
  });
}

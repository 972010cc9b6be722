/**
 * A scripted raw TCP server on a loopback address, for byte-exact and hostile SMTP peers: no greeting, slow drip,
 * endless multi-line replies, huge lines, garbage, a disconnect in the middle of a reply.
 * @module
 */
import { createServer, type Socket } from 'node:net';

/** One client connection, seen from the server's side. */
export interface RawPeer {
  /** The socket, for anything the helpers below do not cover. */
  readonly socket: Socket;
  /** Writes bytes as they are (no CRLF added). Resolves once written; false if the client is gone. */
  write(data: string | Uint8Array): Promise<boolean>;
  /** The next line the client sent (without CRLF), or `null` once the client closed. */
  readLine(): Promise<string | null>;
  /** Lines received and not read yet (a pipelined group arrives as several lines at once). */
  buffered(): number;
  /** Waits `ms` milliseconds (or less, if the client goes away). */
  sleep(ms: number): Promise<void>;
  /** True once the client closed or the socket failed. */
  readonly gone: boolean;
  /** Half-closes (FIN) after pending writes. */
  end(): void;
  /** Drops the connection at once (RST where the platform allows it). */
  destroy(): void;
}

/** What to do with each accepted connection. The connection is destroyed when the script returns. */
export type RawScript = (peer: RawPeer) => Promise<void>;

/** A running raw server. */
export interface RawServerHarness {
  readonly host: string;
  readonly port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Every line received from every client, in order. */
  received(): string[];
  /** Bytes written to clients so far (all connections). */
  bytesWritten(): number;
  /** Stops listening and destroys open connections. */
  close(): Promise<void>;
}

/** Options of {@link startRawServer}. */
export interface RawServerOptions {
  /** Loopback address to bind. @default '127.0.0.1' */
  readonly host?: string;
  /** Runs once per connection. */
  readonly script: RawScript;
}

function peerOf(socket: Socket, received: string[], onWrite: (bytes: number) => void): RawPeer {
  const lines: string[] = [];
  const waiting: ((line: string | null) => void)[] = [];
  const sleepers = new Set<() => void>();
  let pending = '';
  let gone = false;
  const finish = () => {
    if (gone) return;
    gone = true;
    for (const wake of waiting.splice(0)) wake(null);
    for (const wake of sleepers) wake();
  };
  socket.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const line = pending.slice(0, end).replace(/\r$/, '');
      pending = pending.slice(end + 1);
      received.push(line);
      const wake = waiting.shift();
      if (wake) wake(line);
      else lines.push(line);
    }
  });
  socket.on('close', finish);
  socket.on('error', finish);
  return {
    socket,
    get gone() {
      return gone;
    },
    write(data) {
      if (gone || !socket.writable) return Promise.resolve(false);
      return new Promise((resolve) => {
        socket.write(data, (error) => {
          if (!error) onWrite(typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength);
          resolve(!error);
        });
      });
    },
    readLine() {
      const line = lines.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (gone) return Promise.resolve(null);
      return new Promise((resolve) => waiting.push(resolve));
    },
    buffered: () => lines.length,
    sleep(ms) {
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        sleepers.add(wake);
        if (gone) wake();
      });
    },
    end: () => socket.end(),
    destroy: () => socket.destroy(),
  };
}

/**
 * Starts a raw server on `host` (default `127.0.0.1`), port 0, running `script` for each connection.
 * @example
 * const raw = await startRawServer({ script: scripts.garbage() });
 */
export async function startRawServer(options: RawServerOptions): Promise<RawServerHarness> {
  const host = options.host ?? '127.0.0.1';
  if (!host.startsWith('127.')) throw new Error(`harness hosts must be loopback addresses, got ${host}`);
  const received: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let written = 0;
  const server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const peer = peerOf(socket, received, (bytes) => {
      written += bytes;
    });
    options.script(peer).then(
      () => socket.destroy(),
      () => socket.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  return {
    host,
    port,
    connections: () => connections,
    received: () => [...received],
    bytesWritten: () => written,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A reply for each command, by upper-case verb (`EHLO`, `MAIL`, `RCPT`, `RSET`, `QUIT`, ...). */
export type ReplyTable = Readonly<Record<string, string | readonly string[]>>;

/** The usual happy answers, overridable per verb. */
export const DEFAULT_REPLIES: ReplyTable = {
  EHLO: ['250-mx.test.local', '250 PIPELINING'],
  HELO: '250 mx.test.local',
  MAIL: '250 2.1.0 ok',
  RCPT: '250 2.1.5 ok',
  RSET: '250 2.0.0 ok',
  NOOP: '250 2.0.0 ok',
  QUIT: '221 2.0.0 bye',
};

async function answer(peer: RawPeer, reply: string | readonly string[]): Promise<void> {
  const lines = typeof reply === 'string' ? [reply] : reply;
  await peer.write(lines.map((line) => `${line}\r\n`).join(''));
}

/**
 * Answers a dialogue from a table of replies by verb; unknown verbs get `502 5.5.1`. Ends after QUIT
 * or when the client leaves.
 */
async function converse(peer: RawPeer, replies: ReplyTable): Promise<void> {
  for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
    const verb = line.split(' ', 1)[0]!.split(':', 1)[0]!.toUpperCase();
    await answer(peer, replies[verb] ?? '502 5.5.1 command not recognized');
    if (verb === 'QUIT') return;
  }
}

/** Ready-made hostile and scripted peers. */
export const scripts = {
  /** A normal dialogue: greeting, then `replies` (merged over {@link DEFAULT_REPLIES}). */
  dialogue(
    replies: ReplyTable = {},
    greeting: string | readonly string[] = '220 mx.test.local ESMTP',
  ): RawScript {
    return async (peer) => {
      await answer(peer, greeting);
      await converse(peer, { ...DEFAULT_REPLIES, ...replies });
    };
  },
  /** Accepts the connection and never says a word (until the client leaves). */
  noGreeting(): RawScript {
    return async (peer) => {
      await peer.readLine();
      while (!peer.gone) await peer.sleep(1_000);
    };
  },
  /** Sends `text` one byte every `intervalMs` (the greeting by default), then talks normally. */
  slowDrip(intervalMs: number, text = '220 mx.test.local ESMTP slowly\r\n'): RawScript {
    return async (peer) => {
      for (const byte of Buffer.from(text)) {
        if (!(await peer.write(Uint8Array.of(byte)))) return;
        await peer.sleep(intervalMs);
      }
      await converse(peer, DEFAULT_REPLIES);
    };
  },
  /** Greets, then answers EHLO with `250-` continuation lines forever (until the client leaves). */
  endlessMultiline(): RawScript {
    return async (peer) => {
      await answer(peer, '220 mx.test.local ESMTP');
      await peer.readLine();
      const burst = '250-XENDLESS padding padding padding padding padding\r\n'.repeat(64);
      while (await peer.write(burst)) {
        // keep talking
      }
    };
  },
  /** Sends one line of `bytes` bytes without a line break (10 MB by default), in 64 KiB chunks. */
  hugeLine(bytes = 10 * 1024 * 1024, prefix = '220 '): RawScript {
    return async (peer) => {
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      if (!(await peer.write(prefix))) return;
      while (sent < bytes && (await peer.write(chunk))) sent += chunk.length;
      await peer.write('\r\n');
      await peer.readLine();
    };
  },
  /** Sends `bytes` random-looking non-SMTP bytes instead of a greeting, then waits. */
  garbage(bytes: Uint8Array = Uint8Array.from({ length: 256 }, (_, i) => (i * 167 + 13) % 256)): RawScript {
    return async (peer) => {
      await peer.write(bytes);
      await peer.write('\r\n');
      await peer.readLine();
    };
  },
  /**
   * Talks normally until the verb `verb` (e.g. `RCPT`), then writes the first half of a multi-line reply
   * and drops the connection.
   */
  disconnectMidReply(verb = 'RCPT'): RawScript {
    return async (peer) => {
      await answer(peer, '220 mx.test.local ESMTP');
      for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
        const current = line.split(/[ :]/, 1)[0]!.toUpperCase();
        if (current === verb) {
          await peer.write('250-first line of a reply\r\n250-second li');
          peer.destroy();
          return;
        }
        await answer(peer, DEFAULT_REPLIES[current] ?? '502 5.5.1 command not recognized');
      }
    };
  },
  /** Greets with `reply` (e.g. `421 4.3.2 busy`, `554 5.7.1 go away`) and closes. */
  refuse(reply: string): RawScript {
    return async (peer) => {
      await answer(peer, reply);
      peer.end();
      await peer.readLine();
    };
  },
  /** Accepts and closes at once, before any greeting. */
  hangUp(): RawScript {
    return async (peer) => {
      peer.end();
    };
  },
};

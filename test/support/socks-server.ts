/**
 * A tiny SOCKS5 server (RFC 1928, user/password per RFC 1929) on a loopback address, for testing the SOCKS
 * transport. It only ever connects onward to loopback addresses; anything else gets "not allowed by ruleset".
 * @module
 */
import { connect, createServer, isIPv4, type Socket } from 'node:net';

/** Options of {@link startSocksServer}. */
export interface SocksServerOptions {
  /** Loopback address to bind. @default '127.0.0.1' */
  readonly host?: string;
  /** Require this user name and password (method 0x02); without it, no authentication (method 0x00). */
  readonly auth?: { readonly user: string; readonly password: string };
}

/** A running SOCKS server. */
export interface SocksServerHarness {
  readonly host: string;
  readonly port: number;
  /** The proxy URL to give `socksTransport`, with the credentials when `auth` is set. */
  readonly url: string;
  /** Client connections accepted. */
  connections(): number;
  /** Every CONNECT destination requested, as `host:port`. */
  destinations(): string[];
  /** Authentication attempts that failed. */
  failedLogins(): number;
  close(): Promise<void>;
}

/** Reads exact byte counts from a socket. */
function reader(socket: Socket) {
  let buffered = Buffer.alloc(0);
  let want: { size: number; resolve: (bytes: Buffer | null) => void } | null = null;
  let ended = false;
  const settle = () => {
    if (want === null) return;
    if (buffered.length >= want.size) {
      const bytes = buffered.subarray(0, want.size);
      buffered = buffered.subarray(want.size);
      const { resolve } = want;
      want = null;
      resolve(bytes);
    } else if (ended) {
      const { resolve } = want;
      want = null;
      resolve(null);
    }
  };
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    settle();
  };
  const onEnd = () => {
    ended = true;
    settle();
  };
  socket.on('data', onData);
  socket.on('close', onEnd);
  socket.on('error', onEnd);
  return {
    read(size: number): Promise<Buffer | null> {
      return new Promise((resolve) => {
        want = { size, resolve };
        settle();
      });
    },
    /** Stops reading and returns what was read beyond the handshake. */
    release(): Buffer {
      socket.off('data', onData);
      return buffered;
    },
  };
}

const REPLY = {
  ok: 0,
  failure: 1,
  notAllowed: 2,
  hostUnreachable: 4,
  refused: 5,
  commandNotSupported: 7,
  addressType: 8,
};

function reply(socket: Socket, code: number): void {
  socket.write(Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]));
}

function isLoopback(host: string): boolean {
  return (isIPv4(host) && host.startsWith('127.')) || host === '::1';
}

function ipv6(bytes: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':').replace(/^0:0:0:0:0:0:0:1$/, '::1');
}

/**
 * Starts a SOCKS5 server on `host` (default `127.0.0.1`), port 0.
 * @example
 * const socks = await startSocksServer({ auth: { user: 'u', password: 'p' } });
 * const transport = socksTransport({ proxy: socks.url });
 */
export async function startSocksServer(options: SocksServerOptions = {}): Promise<SocksServerHarness> {
  const host = options.host ?? '127.0.0.1';
  if (!host.startsWith('127.')) throw new Error(`harness hosts must be loopback addresses, got ${host}`);
  const sockets = new Set<Socket>();
  const destinations: string[] = [];
  let connections = 0;
  let failedLogins = 0;

  const handle = async (client: Socket) => {
    const input = reader(client);
    const head = await input.read(2);
    if (head === null || head[0] !== 5) return client.destroy();
    const methods = await input.read(head[1]!);
    if (methods === null) return client.destroy();
    const method = options.auth ? 2 : 0;
    if (!methods.includes(method)) {
      client.end(Buffer.from([5, 0xff]));
      return;
    }
    client.write(Buffer.from([5, method]));
    if (options.auth) {
      const version = await input.read(2);
      if (version === null) return client.destroy();
      const user = await input.read(version[1]!);
      const passwordLength = await input.read(1);
      const password = passwordLength && (await input.read(passwordLength[0]!));
      const ok = user?.toString() === options.auth.user && password?.toString() === options.auth.password;
      if (!ok) {
        failedLogins += 1;
        client.end(Buffer.from([1, 1]));
        return;
      }
      client.write(Buffer.from([1, 0]));
    }
    const request = await input.read(4);
    if (request === null) return client.destroy();
    let target: string;
    if (request[3] === 1) {
      const address = await input.read(4);
      if (address === null) return client.destroy();
      target = [...address].join('.');
    } else if (request[3] === 4) {
      const address = await input.read(16);
      if (address === null) return client.destroy();
      target = ipv6(address);
    } else {
      reply(client, REPLY.addressType);
      return client.end();
    }
    const portBytes = await input.read(2);
    if (portBytes === null) return client.destroy();
    const port = portBytes.readUInt16BE(0);
    destinations.push(`${target}:${port}`);
    if (request[1] !== 1) {
      reply(client, REPLY.commandNotSupported);
      return client.end();
    }
    if (!isLoopback(target)) {
      reply(client, REPLY.notAllowed);
      return client.end();
    }
    const upstream = connect({ host: target, port });
    sockets.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      reply(client, REPLY.ok);
      const early = input.release();
      if (early.length > 0) upstream.write(early);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      if (!connected && client.writable) {
        reply(client, error.code === 'ECONNREFUSED' ? REPLY.refused : REPLY.hostUnreachable);
        client.end();
      } else {
        client.destroy();
      }
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      client.end();
    });
    client.on('close', () => upstream.destroy());
  };

  const server = createServer((client) => {
    connections += 1;
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    handle(client).catch(() => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  const credentials = options.auth
    ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.password)}@`
    : '';
  return {
    host,
    port,
    url: `socks5://${credentials}${host}:${port}`,
    connections: () => connections,
    destinations: () => [...destinations],
    failedLogins: () => failedLogins,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
